package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/ticketing"
)

// Every route answers an unknown or repeated query parameter the same way,
// before its handler runs: 400 invalid_request naming the parameter.
func TestEveryRoute_UnknownQueryParameterIs400WithParam(t *testing.T) {
	s := &Server{Keys: fakeKeys{testKey(auth.Secret)}, Clock: clock.System{}, Limits: DefaultLimits}
	h := s.Handler()
	for _, rt := range s.routes() {
		path := "/v1" + strings.NewReplacer("{id}", "x1", "{slug}", "x1").Replace(rt.pattern)
		t.Run(rt.method+" "+rt.pattern, func(t *testing.T) {
			req := authed(rt.method, path+"?bogus=1", `{}`, auth.Secret)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var body errorBody
			_ = jsonUnmarshal(rec.Body.Bytes(), &body)
			if rec.Code != http.StatusBadRequest || body.Error.Code != ticketing.CodeInvalidRequest || body.Error.Param != "bogus" {
				t.Fatalf("%d %s, want 400 invalid_request param bogus", rec.Code, rec.Body)
			}
			msg := body.Error.Message
			if strings.HasSuffix(strings.TrimSpace(msg), ":") || strings.HasSuffix(msg, "known: ") {
				t.Errorf("message ends in an empty list: %q", msg)
			}
			if len(rt.query) == 0 && !strings.Contains(msg, "takes no query parameters") {
				t.Errorf("message %q does not say the endpoint takes no query parameters", msg)
			}
			for _, q := range rt.query {
				if !strings.Contains(msg, q) {
					t.Errorf("message %q does not list the known parameter %s", msg, q)
				}
			}
			if len(rt.query) > 0 {
				rec = httptest.NewRecorder()
				h.ServeHTTP(rec, authed(rt.method, path+"?"+rt.query[0]+"=a&"+rt.query[0]+"=b", `{}`, auth.Secret))
				_ = jsonUnmarshal(rec.Body.Bytes(), &body)
				if rec.Code != http.StatusBadRequest || body.Error.Param != rt.query[0] {
					t.Errorf("repeated %s: %d %s, want 400 naming it", rt.query[0], rec.Code, rec.Body)
				}
			}
		})
	}
}

// Content-Type is checked as a media type: application/json with parameters is
// fine, a longer name that merely starts with it is not.
func TestDecodeJSON_ContentTypeIsTheMediaTypeApplicationJSON(t *testing.T) {
	rt := &route{method: "POST", pattern: "/echo", handle: func(w http.ResponseWriter, r *http.Request) error {
		var b sampleBody
		if err := decodeJSON(r, &b); err != nil {
			return err
		}
		writeJSON(w, 200, b)
		return nil
	}}
	for ct, ok := range map[string]bool{
		"application/json":                  true,
		"application/json; charset=utf-8":   true,
		"Application/JSON;charset=UTF-8":    true,
		"application/jsonx":                 false,
		"application/json-patch+json":       false,
		"application/json garbage":          false,
		"text/plain":                        false,
		"application/x-www-form-urlencoded": false,
	} {
		t.Run(ct, func(t *testing.T) {
			req := authed("POST", "/v1/echo", `{"quantity": 2}`, auth.Secret)
			req.Header.Set("Content-Type", ct)
			rec, body := serve(t, rt, testKey(auth.Secret), req)
			if ok && rec.Code != 200 {
				t.Fatalf("%d %s, want 200", rec.Code, rec.Body)
			}
			if !ok && (rec.Code != 400 || body.Error.Code != ticketing.CodeInvalidRequest || body.Error.Param != "Content-Type") {
				t.Fatalf("%d %s, want 400 invalid_request param Content-Type", rec.Code, rec.Body)
			}
		})
	}
}
