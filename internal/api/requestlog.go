package api

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/ticketing"
)

// RequestLog keeps what GET /request-log/{request_id} shows of each request
// authenticated with an organizer's key (store.RequestLog).
type RequestLog interface {
	PutRequest(ctx context.Context, rec auth.RequestRecord) error
	GetRequest(ctx context.Context, requestID string) (*auth.RequestRecord, error)
}

// requestLogTimeout bounds the write of one record, made after the response.
const requestLogTimeout = 5 * time.Second

// logged is one request on its way to the request log: the key that
// authenticated it (set by authenticate) and what the response said.
type logged struct {
	http.ResponseWriter
	key    *auth.Key
	status int
	code   string
}

func (l *logged) WriteHeader(status int) {
	if l.status == 0 {
		l.status = status
	}
	l.ResponseWriter.WriteHeader(status)
}

func (l *logged) Write(b []byte) (int, error) {
	if l.status == 0 {
		l.status = http.StatusOK
	}
	return l.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (l *logged) Unwrap() http.ResponseWriter { return l.ResponseWriter }

type ctxLoggedKey struct{}

// noteKey tells the request log which key authenticated the request.
func noteKey(ctx context.Context, key *auth.Key) {
	if l, _ := ctx.Value(ctxLoggedKey{}).(*logged); l != nil {
		l.key = key
	}
}

// noteError tells the request log the error code the response carries.
func noteError(w http.ResponseWriter, code string) {
	if l, ok := w.(*logged); ok {
		l.code = code
	}
}

// logRequest wraps a keyed route's request for the request log; done writes
// the record, in the background, once the handler has answered (nothing when
// no key of an organizer authenticated the request).
func (s *Server) logRequest(w http.ResponseWriter, r *http.Request, rt *route) (http.ResponseWriter, *http.Request, func()) {
	if s.RequestLog == nil || rt.public {
		return w, r, func() {}
	}
	l := &logged{ResponseWriter: w}
	r = r.WithContext(context.WithValue(r.Context(), ctxLoggedKey{}, l))
	return l, r, func() {
		if l.key == nil {
			return
		}
		rec := auth.RequestRecord{RequestID: requestID(r.Context()), OrganizerID: l.key.OrganizerID, Environment: l.key.Environment,
			KeyID: l.key.ID, Method: r.Method, Path: "/v1" + rt.pattern, Status: l.status, ErrorCode: l.code, CreatedAt: s.Clock.Now().UTC()}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), requestLogTimeout)
		s.logWrites.Add(1)
		go func() {
			defer s.logWrites.Done()
			defer cancel()
			if err := s.RequestLog.PutRequest(ctx, rec); err != nil {
				slog.WarnContext(ctx, "request log: the record is lost", "error", err)
			}
		}()
	}
}

// FlushRequestLog waits for the request log's writes under way. A Lambda
// entry point calls it before it returns (app.LambdaHTTP): Lambda serves one
// request at a time per instance, so no write starts meanwhile.
func (s *Server) FlushRequestLog() { s.logWrites.Wait() }

type requestLogJSON struct {
	Object    string  `json:"object"`
	RequestID string  `json:"request_id"`
	Method    string  `json:"method"`
	Path      string  `json:"path"`
	Status    int     `json:"status"`
	ErrorCode *string `json:"error_code"`
	KeyID     string  `json:"key_id"`
	Livemode  bool    `json:"livemode"`
	CreatedAt string  `json:"created_at"`
}

// getRequestLog answers GET /request-log/{request_id}: a request of the
// caller's organizer and environment in the last 7 days, else 404.
func (s *Server) getRequestLog(w http.ResponseWriter, r *http.Request) error {
	id, t := r.PathValue("request_id"), callerOf(r.Context()).tenant()
	notFound := ticketing.Errorf(ticketing.CodeNotFound,
		"no request %s of this organizer in this mode in the last 7 days; the id is the Tix-Request-Id header of a response", id)
	if s.RequestLog == nil {
		return notFound
	}
	rec, err := s.RequestLog.GetRequest(r.Context(), id)
	if err != nil {
		return err
	}
	if rec == nil || rec.OrganizerID != t.OrganizerID || rec.Environment != t.Environment {
		return notFound
	}
	var code *string
	if rec.ErrorCode != "" {
		code = &rec.ErrorCode
	}
	writeJSON(w, http.StatusOK, requestLogJSON{Object: "request_log_entry", RequestID: rec.RequestID, Method: rec.Method, Path: rec.Path,
		Status: rec.Status, ErrorCode: code, KeyID: rec.KeyID, Livemode: rec.Environment == ticketing.EnvLive, CreatedAt: clock.Format(rec.CreatedAt)})
	return nil
}
