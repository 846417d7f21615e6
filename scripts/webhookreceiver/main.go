// Command webhookreceiver is the sample webhook receiver in Go (its Node twin
// is receiver.js beside it): it checks each POST with the Standard Webhooks
// library (webhook-id, webhook-timestamp, webhook-signature; the endpoint's
// whsec_ secret taken raw), answers endpoint.verify with its nonce, drops a
// repeated event id, keeps each order's newest state by data.order.version
// (an older event arriving late is acknowledged and ignored), prints one line
// per POST, and shows what it keeps at GET <path>/orders.
//
//	go run ./scripts/webhookreceiver --secret whsec_...   # http://127.0.0.1:9000/hooks
//
// It depends on the standard library and the Standard Webhooks library only:
// copy it into your project as a start.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "address to listen on (port 0: any free port)")
	path := flag.String("path", "/hooks", "the endpoint's path")
	secret := flag.String("secret", os.Getenv("TIX_WEBHOOK_SECRET"), "the endpoint's signing secret (whsec_..., printed by tixctl webhooks create or tixctl listen); default $TIX_WEBHOOK_SECRET")
	flag.Parse()
	if *secret == "" {
		fmt.Fprintln(os.Stderr, "webhookreceiver: --secret is required: pass the whsec_... secret that tixctl webhooks create (or tixctl listen) printed")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		slog.Error("webhookreceiver cannot listen (another receiver on the port? use --addr)", "addr", *addr, "err", err)
		os.Exit(1)
	}
	rc := newReceiver(*secret, os.Stdout)
	fmt.Printf("webhookreceiver: listening on http://%s%s\n", ln.Addr(), *path)
	srv := &http.Server{Handler: rc.mux(*path), ReadHeaderTimeout: 5 * time.Second}
	if err := srv.Serve(ln); err != nil {
		slog.Error("webhookreceiver stopped", "err", err)
		os.Exit(1)
	}
}

// receiver answers tix's webhook POSTs.
type receiver struct {
	secret string
	out    io.Writer
	orders *orderStates
	seen   *eventIDs
}

func newReceiver(secret string, out io.Writer) receiver {
	return receiver{secret: secret, out: out, orders: &orderStates{}, seen: &eventIDs{}}
}

// mux serves POST path (the webhooks) and GET path/orders (what is kept).
func (rc receiver) mux(path string) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("POST "+path, rc)
	mux.HandleFunc("GET "+path+"/orders", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rc.orders.all())
	})
	return mux
}

// orderState is what a receiver keeps of an order: its newest state.
type orderState struct {
	Status  string `json:"status"`
	Version int64  `json:"version"`
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

// all returns a copy of every kept state, by order id.
func (o *orderStates) all() map[string]orderState {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := make(map[string]orderState, len(o.m))
	for id, st := range o.m {
		m[id] = st
	}
	return m
}

// eventIDs are the event ids handled. A real receiver stores them with a
// unique constraint, in the same transaction as what the event changes.
type eventIDs struct {
	mu sync.Mutex
	m  map[string]bool
}

// first records id and reports whether it was new.
func (e *eventIDs) first(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[string]bool{}
	}
	if e.m[id] {
		return false
	}
	e.m[id] = true
	return true
}

// event is what the receiver reads of an envelope.
type event struct {
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

func (rc receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	wh, err := standardwebhooks.NewWebhookRaw([]byte(rc.secret)) // a tix secret is base62: raw
	if err == nil {
		err = wh.Verify(body, r.Header) // the signature and a timestamp within 5 minutes
	}
	if err != nil {
		_, _ = fmt.Fprintf(rc.out, "REFUSED (%v)\n", err)
		http.Error(w, "bad signature", http.StatusBadRequest)
		return
	}
	var ev event
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if ev.Type == "endpoint.verify" {
		_, _ = fmt.Fprintf(rc.out, "verified %s %s\n", ev.Type, ev.ID)
		_ = json.NewEncoder(w).Encode(map[string]string{"nonce": ev.Data.Nonce})
		return
	}
	rc.handle(ev)
	_, _ = io.WriteString(w, "{}")
}

// handle acts on a verified event: once per id, the newest version per order.
func (rc receiver) handle(ev event) {
	o := ev.Data.Order
	switch {
	case !rc.seen.first(ev.ID):
		_, _ = fmt.Fprintf(rc.out, "duplicate %s %s %s: already handled, ignored\n", ev.Type, ev.ID, o.ID)
	case o.ID != "" && !rc.orders.apply(o.ID, orderState{Status: o.Status, Version: o.Version}):
		// Delivery order is not guaranteed: a newer state is kept already.
		kept, _ := rc.orders.get(o.ID)
		_, _ = fmt.Fprintf(rc.out, "verified %s %s %s %s (version %d), older than the kept %s (version %d): ignored\n",
			ev.Type, ev.ID, o.ID, o.Status, o.Version, kept.Status, kept.Version)
	default:
		_, _ = fmt.Fprintf(rc.out, "verified %s %s %s %s (version %d)\n", ev.Type, ev.ID, o.ID, o.Status, o.Version)
	}
}
