// Package webhooktest is test support for webhook receivers: reading a
// delivery as a receiver does, and answering an endpoint's verification as
// the contract asks (docs/webhooks.md).
package webhooktest

import (
	"encoding/json"
	"io"
	"net/http"

	"tix/internal/webhook"
)

// Envelope is what most receivers read of a delivery: its id, its type and,
// for an order event, the order's id.
type Envelope struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data struct {
		Order struct {
			ID string `json:"id"`
		} `json:"order"`
	} `json:"data"`
}

// Receive reads the webhook POST r and decodes its envelope into env (a
// pointer to the caller's shape of it; nil for none). It answers a body
// that is not an envelope (400) and an endpoint.verify (its nonce) itself
// and then returns ok false; every other delivery is the caller's to answer.
func Receive(w http.ResponseWriter, r *http.Request, env any) (body []byte, ok bool) {
	body, _ = io.ReadAll(r.Body)
	var head struct {
		Type string `json:"type"`
		Data struct {
			Nonce string `json:"nonce"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &head) != nil || (env != nil && json.Unmarshal(body, env) != nil) {
		http.Error(w, "not an envelope", http.StatusBadRequest)
		return body, false
	}
	if head.Type == webhook.TypeEndpointVerify {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"nonce": head.Data.Nonce})
		return body, false
	}
	return body, true
}
