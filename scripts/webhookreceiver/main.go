// Command webhookreceiver is a small webhook receiver for the local stack:
// it checks each POST's Tix-Signature with the endpoint's secret, answers
// endpoint.verify with its nonce, keeps each order's newest state by
// data.order.version (an older event arriving late is acknowledged and
// ignored), and prints one line per event.
//
//	go run ./scripts/webhookreceiver --secret whsec_...   # http://127.0.0.1:9000/hooks
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"tix/internal/webhook"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "address to listen on")
	path := flag.String("path", "/hooks", "the endpoint's path")
	secret := flag.String("secret", os.Getenv("TIX_WEBHOOK_SECRET"), "the endpoint's signing secret (whsec_..., printed by tixctl webhooks create); default $TIX_WEBHOOK_SECRET")
	flag.Parse()
	if *secret == "" {
		fmt.Fprintln(os.Stderr, "webhookreceiver: --secret is required: pass the whsec_... secret that tixctl webhooks create printed")
		os.Exit(2)
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+*path, receiver{secret: *secret, out: os.Stdout, now: time.Now, orders: &orderStates{}})
	fmt.Printf("webhookreceiver: listening on http://%s%s\n", *addr, *path)
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		slog.Error("webhookreceiver stopped", "err", err)
		os.Exit(1)
	}
}

// receiver answers tix's webhook POSTs.
type receiver struct {
	secret string
	out    io.Writer
	now    func() time.Time
	orders *orderStates
}

// orderState is what a receiver keeps of an order: its newest state.
type orderState struct {
	Status  string
	Version int64
}

// orderStates keeps, per order id, the state with the greatest version seen.
type orderStates struct {
	mu sync.Mutex
	m  map[string]orderState
}

// apply keeps st for id unless a newer version is kept already, and reports
// whether it did.
func (o *orderStates) apply(id string, st orderState) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if cur, ok := o.m[id]; ok && cur.Version >= st.Version {
		return false
	}
	if o.m == nil {
		o.m = map[string]orderState{}
	}
	o.m[id] = st
	return true
}

// get returns the kept state of order id.
func (o *orderStates) get(id string) (orderState, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	st, ok := o.m[id]
	return st, ok
}

func (rc receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	if err := webhook.Verify(r.Header.Get(webhook.SignatureHeader), body, rc.secret, rc.now(), 0); err != nil {
		_, _ = fmt.Fprintf(rc.out, "REFUSED (%v)\n", err)
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	var ev struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			Nonce string `json:"nonce"`
			Order struct {
				ID      string `json:"id"`
				Status  string `json:"status"`
				Version int64  `json:"version"`
			} `json:"order"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	o := ev.Data.Order
	if o.ID != "" && rc.orders != nil && !rc.orders.apply(o.ID, orderState{Status: o.Status, Version: o.Version}) {
		// Delivery order is not guaranteed: a newer state is kept already.
		kept, _ := rc.orders.get(o.ID)
		_, _ = fmt.Fprintf(rc.out, "verified %s %s %s %s (version %d), older than the kept %s (version %d): ignored\n",
			ev.Type, ev.ID, o.ID, o.Status, o.Version, kept.Status, kept.Version)
	} else {
		_, _ = fmt.Fprintf(rc.out, "verified %s %s %s %s\n", ev.Type, ev.ID, o.ID, o.Status)
	}
	w.Header().Set("Content-Type", "application/json")
	if ev.Type == webhook.TypeEndpointVerify {
		_ = json.NewEncoder(w).Encode(map[string]string{"nonce": ev.Data.Nonce})
		return
	}
	_, _ = io.WriteString(w, "{}")
}
