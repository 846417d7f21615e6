package tbanktest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"tix/internal/payment/tbank"
)

// Receiver is a notification endpoint for tests: it records every body and
// answers HTTP 200 with body OK, as the bank requires.
type Receiver struct {
	URL string

	mu     sync.Mutex
	bodies [][]byte
	// Refuse, while positive, makes the receiver answer 500 to that many
	// deliveries (recorded all the same).
	Refuse int
}

// NewReceiver starts a receiver that stops with the test.
func NewReceiver(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, b)
		refuse := r.Refuse > 0
		if refuse {
			r.Refuse--
		}
		r.mu.Unlock()
		if refuse {
			http.Error(w, "busy", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, tbank.NotificationOK)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/notifications"
	return r
}

// Bodies returns the bodies received for orderID, in arrival order.
func (r *Receiver) Bodies(orderID string) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out [][]byte
	for _, b := range r.bodies {
		var n struct{ OrderId string }
		if json.Unmarshal(b, &n) == nil && n.OrderId == orderID {
			out = append(out, b)
		}
	}
	return out
}

// Wait returns the first body received for orderID with the given Status,
// failing the test after timeout.
func (r *Receiver) Wait(t testing.TB, orderID, status string, timeout time.Duration) []byte {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, b := range r.Bodies(orderID) {
			var n struct{ Status string }
			if json.Unmarshal(b, &n) == nil && n.Status == status {
				return b
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s notification for order %s within %v; got %d others", status, orderID, timeout, len(r.Bodies(orderID)))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
