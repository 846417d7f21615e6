package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The fake Lambda Runtime API and one cold start of a bootstrap against it.

// runtimeAPIServer is the fake Lambda Runtime API. It serves one invocation
// at a time: the current start's event on the first GET .../next, and holds
// every later GET .../next (Lambda freezes the sandbox there) until the
// process is killed.
type runtimeAPIServer struct {
	addr string
	srv  *http.Server

	mu  sync.Mutex
	cur *invocation
}

// invocation is one cold start's state.
type invocation struct {
	id      string
	payload []byte
	given   bool
	nextAt  time.Time // first GET .../next: init is done
	done    chan outcome
	once    sync.Once
}

// outcome is how the first invocation ended.
type outcome struct {
	at   time.Time
	kind string // response, error, init error
	body []byte
}

func (inv *invocation) finish(o outcome) { inv.once.Do(func() { inv.done <- o }) }

func startRuntimeAPI() (*runtimeAPIServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &runtimeAPIServer{addr: ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+runtimeAPI+"/invocation/next", s.next)
	mux.HandleFunc("POST "+runtimeAPI+"/invocation/{id}/response", s.result("response"))
	mux.HandleFunc("POST "+runtimeAPI+"/invocation/{id}/error", s.result("error"))
	mux.HandleFunc("POST "+runtimeAPI+"/init/error", s.initError)
	// Anything else (the extensions API of lambda.WithEnableSIGTERM, say) is
	// not part of this fake: 404, which the runtime client logs and survives.
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *runtimeAPIServer) close() { _ = s.srv.Close() }

func (s *runtimeAPIServer) current() *invocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

func (s *runtimeAPIServer) next(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	s.mu.Lock()
	inv := s.cur
	give := inv != nil && !inv.given
	if give {
		inv.given, inv.nextAt = true, now
	}
	s.mu.Unlock()
	if !give {
		<-r.Context().Done() // the process was killed, or the server closed
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(now.Add(30*time.Second).UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:"+region+":123456789012:function:tix-lambdainit")
	h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Parent=0000000000000000;Sampled=0")
	_, _ = w.Write(inv.payload)
}

func (s *runtimeAPIServer) result(kind string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		at := time.Now()
		inv := s.current()
		if inv == nil || r.PathValue("id") != inv.id {
			http.Error(w, `{"errorMessage":"unknown request id","errorType":"InvalidRequestID"}`, http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"status":"OK"}`))
		inv.finish(outcome{at: at, kind: kind, body: body})
	}
}

func (s *runtimeAPIServer) initError(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	at := time.Now()
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte(`{"status":"OK"}`))
	if inv := s.current(); inv != nil {
		inv.finish(outcome{at: at, kind: "init error", body: body})
	}
}

// start is one cold start's timings.
type start struct {
	init, first time.Duration
	answer      string
}

var startCount int

// coldStart starts bin with env, hands it payload and waits for its answer.
// The process is killed afterwards, as Lambda does with a sandbox.
func (s *runtimeAPIServer) coldStart(bin string, env []string, payload []byte, timeout time.Duration) (start, error) {
	startCount++
	inv := &invocation{id: fmt.Sprintf("lambdainit-%08d", startCount), payload: payload, done: make(chan outcome, 1)}
	s.mu.Lock()
	s.cur = inv
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.cur = nil
		s.mu.Unlock()
	}()

	var logs bytes.Buffer
	cmd := exec.Command(bin)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &logs, &logs
	exited := make(chan error, 1)
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return start{}, err
	}
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited //nolint:errcheck // killed: its exit status says only that
	}

	var o outcome
	select {
	case o = <-inv.done:
		stop()
	case err := <-exited:
		return start{}, fmt.Errorf("the process exited before answering (%v):\n%s", err, tail(logs.String()))
	case <-time.After(timeout):
		stop()
		return start{}, fmt.Errorf("no answer within %s:\n%s", timeout, tail(logs.String()))
	}
	if o.kind != "response" {
		return start{}, fmt.Errorf("the function reported an %s: %s\n%s", o.kind, o.body, tail(logs.String()))
	}
	s.mu.Lock()
	nextAt := inv.nextAt
	s.mu.Unlock()
	return start{init: nextAt.Sub(t0), first: o.at.Sub(t0), answer: describe(o.body)}, nil
}

// describe names an answer: the HTTP status of an API Gateway response, the
// batch item failures of an SQS response.
func describe(body []byte) string {
	var r struct {
		StatusCode        *int              `json:"statusCode"`
		BatchItemFailures []json.RawMessage `json:"batchItemFailures"`
	}
	if json.Unmarshal(body, &r) != nil {
		return "answered"
	}
	if r.StatusCode != nil {
		return "HTTP " + strconv.Itoa(*r.StatusCode)
	}
	if r.BatchItemFailures != nil {
		return fmt.Sprintf("%d batch item failure(s)", len(r.BatchItemFailures))
	}
	return "answered"
}

func tail(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return strings.Join(lines, "\n")
}
