package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"tix/internal/webhook"
)

// listenOutput prints what tixctl listen does: lines for people, or one
// JSON object per line with --json.
type listenOutput struct{ a *app }

// listenReady is the first line: the secret to give the receiver.
type listenReady struct {
	Kind      string `json:"kind"` // "ready"
	Secret    string `json:"secret"`
	ForwardTo string `json:"forward_to"`
	API       string `json:"api"`
	Since     string `json:"since"`
}

// listenForward is one forwarded event.
type listenForward struct {
	Kind      string `json:"kind"` // "forward"
	EventID   string `json:"event_id"`
	Type      string `json:"type"`
	OrderID   string `json:"order_id"`
	CreatedAt string `json:"created_at"`
	OK        bool   `json:"ok"`
	Status    int    `json:"status"` // the receiver's HTTP status, 0 without an answer
	Attempts  int    `json:"attempts"`
	Error     string `json:"error,omitempty"`
}

func (o *listenOutput) line(v any, human func(w io.Writer)) error {
	if o.a.json {
		return writeJSONLine(o.a.stdout, v)
	}
	human(o.a.stdout)
	return nil
}

func (o *listenOutput) ready(r listenReady) error {
	return o.line(r, func(w io.Writer) {
		fmt.Fprintf(w, "Ready. Forwarding the order events of %s since %s to %s\n", r.API, r.Since, r.ForwardTo)
		fmt.Fprintf(w, "Your webhook signing secret is %s (^C to stop)\n", r.Secret)
	})
}

func (o *listenOutput) forwarded(ev logEvent, res webhook.Result, attempts int) {
	f := listenForward{Kind: "forward", EventID: ev.ID, Type: ev.Type, OrderID: ev.OrderID, CreatedAt: ev.CreatedAt,
		OK: res.OK(), Status: res.StatusCode, Attempts: attempts, Error: res.ErrorText()}
	_ = o.line(f, func(w io.Writer) {
		outcome := fmt.Sprintf("[%d]", f.Status)
		if !f.OK {
			outcome = fmt.Sprintf("[failed after %d attempts: %s; moving on]", f.Attempts, f.Error)
		}
		fmt.Fprintf(w, "%s  %-15s  %s  %s  %s\n", f.CreatedAt, f.Type, f.OrderID, f.EventID, outcome)
	})
}

func (o *listenOutput) pollError(err error, wait time.Duration) {
	_ = o.line(map[string]any{"kind": "poll_error", "error": err.Error(), "retry_in_ms": wait.Milliseconds()}, func(io.Writer) {
		fmt.Fprintf(o.a.stderr, "tixctl: reading the event log failed (%v); trying again in %s\n", err, wait)
	})
}

func (o *listenOutput) stopped(forwarded, failed int) error {
	return o.line(map[string]any{"kind": "stopped", "forwarded": forwarded, "failed": failed}, func(w io.Writer) {
		fmt.Fprintf(w, "Stopped: %d events forwarded, %d failed.\n", forwarded, failed)
	})
}

// writeJSONLine writes v as one line of JSON (tixctl listen --json).
func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
