package webhook_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"tix/internal/api"
	"tix/internal/api/openapitest"
	"tix/internal/app"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// TestEnvelopesMatchTheOpenAPIDocument sends every kind of envelope the
// service sends (endpoint.verify, webhook.test, an order event) to a receiver
// and checks each body against the document: it matches the WebhookEnvelope
// union and its webhook's request body, and every member it carries, at the
// top, in data and in data.order, is documented there.
func TestEnvelopesMatchTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	h := newHarness(t, true)
	var mu sync.Mutex
	bodies := map[string][]byte{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var env struct {
			Type string `json:"type"`
			Data struct {
				Nonce string `json:"nonce"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &env)
		mu.Lock()
		bodies[env.Type] = body
		mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]string{"nonce": env.Data.Nonce})
	}))
	t.Cleanup(srv.Close)
	rc := &receiver{srv: srv}
	ep, _ := h.endpoint(rc, true)
	if res, err := h.a.Webhooks.TestEndpoint(h.ctx, ep.ID); err != nil || !res.OK {
		t.Fatalf("test event: %+v %v", res, err)
	}
	paid := h.order(h.a.Sales)
	h.simulate(paid.ID, ticketing.OutcomePaid)
	testenv.WaitFor(t, 30*time.Second, "order.paid", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return bodies[ticketing.EventOrderPaid] != nil
	})
	app.EnableDoor(h.a) // ticket.checked_in, to an endpoint that names it
	h.endpoint(rc, true, ticketing.EventTicketCheckedIn)
	o, err := h.a.Sales.Orders.Order(h.ctx, h.tenant, paid.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := h.a.CheckIns.Scan(h.ctx, h.tenant, ticketing.Scan{Code: o.Tickets[0].Number, Gate: "north", KeyID: "key_l"}); err != nil || res.Result != ticketing.ResultAdmitted {
		t.Fatalf("scan: %+v %v", res, err)
	}
	testenv.WaitFor(t, 30*time.Second, "ticket.checked_in", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return bodies[ticketing.EventTicketCheckedIn] != nil
	})

	doc := openAPIDocument(t)
	v := openapitest.New(t)
	mu.Lock()
	defer mu.Unlock()
	for _, typ := range []string{webhook.TypeEndpointVerify, webhook.TypeWebhookTest, ticketing.EventOrderPaid, ticketing.EventTicketCheckedIn} {
		body := bodies[typ]
		if body == nil {
			t.Errorf("%s was not received", typ)
			continue
		}
		for _, p := range v.ValidateSchema("WebhookEnvelope", body) {
			t.Errorf("%s does not match WebhookEnvelope: %s\nbody: %s", typ, p, body)
		}
		schema := lookup(t, doc, "webhooks", typ, "post", "requestBody", "content", "application/json", "schema")
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		undocumented(t, typ, got, schema)
		data := lookup(t, schema, "properties", "data")
		undocumented(t, typ+" data", got["data"].(map[string]any), data)
		if typ == ticketing.EventOrderPaid {
			order := lookup(t, doc, "components", "schemas", "WebhookOrder")
			undocumented(t, typ+" data.order", got["data"].(map[string]any)["order"].(map[string]any), order)
		}
	}
}

func openAPIDocument(t *testing.T) map[string]any {
	t.Helper()
	b, err := api.OpenAPIJSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func lookup(t *testing.T, m map[string]any, keys ...string) map[string]any {
	t.Helper()
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			t.Fatalf("document has no %q under %v", k, keys)
		}
		m = next
	}
	return m
}

// undocumented reports the members of got that schema's properties do not name.
func undocumented(t *testing.T, what string, got, schema map[string]any) {
	t.Helper()
	props, _ := schema["properties"].(map[string]any)
	var missing []string
	for k := range got {
		if _, ok := props[k]; !ok {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%s sends members the document does not describe: %v", what, missing)
	}
}
