// Command webhookreceiver is a small webhook receiver for the local stack:
// it checks each POST's Tix-Signature with the endpoint's secret, answers
// endpoint.verify with its nonce, and prints one line per event.
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
	mux.Handle("POST "+*path, receiver{secret: *secret, out: os.Stdout, now: time.Now})
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
				ID     string `json:"id"`
				Status string `json:"status"`
			} `json:"order"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	_, _ = fmt.Fprintf(rc.out, "verified %s %s %s %s\n", ev.Type, ev.ID, ev.Data.Order.ID, ev.Data.Order.Status)
	w.Header().Set("Content-Type", "application/json")
	if ev.Type == webhook.TypeEndpointVerify {
		_ = json.NewEncoder(w).Encode(map[string]string{"nonce": ev.Data.Nonce})
		return
	}
	_, _ = io.WriteString(w, "{}")
}
