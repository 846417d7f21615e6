package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi/datamodel"
	yaml "go.yaml.in/yaml/v4"

	"tix/internal/api"
	"tix/internal/api/openapitest"
)

func readDocument(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile("openapi.yaml")
	if err != nil {
		tb.Fatalf("read openapi.yaml: %v", err)
	}
	return b
}

func TestOpenAPIDocument_IsValidOpenAPI31(t *testing.T) {
	doc, err := libopenapi.NewDocument(readDocument(t))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if got := doc.GetSpecInfo().SpecType; got != "openapi" {
		t.Errorf("spec type = %q, want openapi", got)
	}
	if got := doc.GetSpecInfo().SpecFormat; got != datamodel.OAS31 {
		t.Errorf("spec format = %q, want %q", got, datamodel.OAS31)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatalf("build v3 model: %v", err)
	}
	if model.Model.Version != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", model.Model.Version)
	}
	if errs := model.Index.GetReferenceIndexErrors(); len(errs) > 0 {
		t.Errorf("reference index errors: %v", errs)
	}
	if r := doc.GetRolodex(); r != nil {
		if errs := r.GetCaughtErrors(); len(errs) > 0 {
			t.Errorf("rolodex errors: %v", errs)
		}
	}
	if res := model.Index.GetResolver(); res != nil {
		if errs := res.GetResolvingErrors(); len(errs) > 0 {
			t.Errorf("resolving errors: %v", errs)
		}
	}

	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("new validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("document does not match the OpenAPI 3.1 schema: %s: %s", e.Message, e.Reason)
			for _, f := range e.SchemaValidationErrors {
				t.Errorf("  at %s: %s", f.FieldPath, f.Reason)
			}
		}
	}
}

// TestOpenAPIDocument_EveryRefResolves resolves every "$ref" of the document as
// a local JSON pointer, independently of libopenapi.
func TestOpenAPIDocument_EveryRefResolves(t *testing.T) {
	root := decodeJSONDocument(t)
	var refs []string
	walk(root, func(m map[string]any) {
		if ref, ok := m["$ref"].(string); ok {
			refs = append(refs, ref)
		}
	})
	if len(refs) < 100 {
		t.Fatalf("found only %d $refs; the walk is broken", len(refs))
	}
	for _, ref := range refs {
		if !strings.HasPrefix(ref, "#/") {
			t.Errorf("$ref %q is not local", ref)
			continue
		}
		if _, err := resolvePointer(root, strings.TrimPrefix(ref, "#")); err != nil {
			t.Errorf("$ref %q does not resolve: %v", ref, err)
		}
	}
	// Every schema component is used by something, so none is dead, except
	// WebhookEnvelope: the union of the webhook bodies for receivers, which the
	// webhooks spell out in place (see the comment above webhooks in the YAML).
	schemas := root["components"].(map[string]any)["schemas"].(map[string]any)
	for name := range schemas {
		if name == "WebhookEnvelope" {
			continue
		}
		if !slices.Contains(refs, "#/components/schemas/"+name) {
			t.Errorf("schema %s is never referenced", name)
		}
	}
}

// TestOpenAPIDocument_CoversContract checks that every endpoint of the
// contract's section 4, every schema of section 2 and every webhook type of
// section 6 is described.
func TestOpenAPIDocument_CoversContract(t *testing.T) {
	root := decodeJSONDocument(t)
	paths := root["paths"].(map[string]any)
	operations := map[string][]string{
		"/ping":                              {"get"},
		"/health":                            {"get"},
		"/openapi.json":                      {"get"},
		"/docs":                              {"get"},
		"/docs/{asset}":                      {"get"},
		"/events":                            {"get"},
		"/events/by-slug/{slug}":             {"get"},
		"/events/{id}":                       {"get"},
		"/events/{id}/tiers":                 {"get"},
		"/events/{id}/seating":               {"get"},
		"/events/{id}/availability":          {"get"},
		"/seat-holds":                        {"post", "delete"},
		"/orders":                            {"post", "get"},
		"/orders/preview":                    {"post"},
		"/orders/{id}":                       {"get"},
		"/orders/{id}/check-status":          {"post"},
		"/orders/{id}/simulate-payment":      {"post"},
		"/orders/{id}/tickets":               {"get"},
		"/orders/{id}/refund":                {"post", "get"},
		"/webhook-endpoints":                 {"get"},
		"/webhook-deliveries":                {"get"},
		"/order-events":                      {"get"},
		"/webhook-deliveries/{id}/redeliver": {"post"},
		// An addition (issue 13): the acquirer's callback for live payments.
		"/payment-notifications/tbank": {"post"},
		// An addition: GitHub's secret scanning reports (contract section 5, rule 9).
		"/secret-scanning/github": {"post"},
		// Additions: the door (docs/door.md).
		"/ticket-keys":                {"get"},
		"/check-ins":                  {"post"},
		"/check-ins/{id}":             {"delete"},
		"/events/{id}/check-in-stats": {"get"},
		"/events/{id}/admission-list": {"get"},
		"/check-ins/batch":            {"post"},
		// Additions: the integrator kit (docs/guide.md).
		"/orders/{id}/cancel":                      {"post"},
		"/seat-holds/extend":                       {"post"},
		"/test-helpers/orders/{id}/expire":         {"post"},
		"/test-helpers/orders/{id}/late-payment":   {"post"},
		"/test-helpers/orders/{id}/refund-outcome": {"post"},
		"/test-helpers/seat-holds/expire":          {"post"},
		// Additions: ticket transfers (docs/transfers.md).
		"/tickets/{ticket_number}/transfers": {"post"},
		"/transfers/{id}":                    {"get", "delete"},
		"/transfers/{id}/accept":             {"get", "post"},
	}
	for path, methods := range operations {
		item, ok := paths[path].(map[string]any)
		if !ok {
			t.Errorf("path %s is missing", path)
			continue
		}
		for _, m := range methods {
			if _, ok := item[m]; !ok {
				t.Errorf("%s %s is missing", strings.ToUpper(m), path)
			}
		}
	}
	for path := range paths {
		if _, ok := operations[path]; !ok {
			t.Errorf("path %s is not in the contract", path)
		}
	}

	schemas := root["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range []string{
		"Error", "EventListItem", "EventDetail", "Genre", "Scene", "NextOccurrence", "Occurrence",
		"Performer", "Tier", "SeatingResponse", "SeatingLayout", "SeatingZone", "SeatingPrimaryTier",
		"StandingTier", "Seat", "SeatingLegendItem", "AvailabilityResponse", "AvailabilityZone",
		"AvailabilityTier", "Buyer", "StandingItem", "OrderCreateRequest", "OrderPreviewRequest",
		"OrderCreateResponse", "OrderPreviewResponse", "OrderStatus", "OrderStatusWithPII",
		"OrderTickets", "IssuedTicket", "TicketSeat", "Refund", "RefundRequestBody",
		"SimulatePaymentRequest", "SeatHoldRequest", "SeatHoldResponse", "SeatHoldSeat",
		"SeatHoldReleaseRequest", "SeatHoldReleaseResponse", "PingResponse", "EventListResponse",
		"OrderListResponse", "WebhookDeliveryListResponse", "TierListResponse",
		"WebhookEndpointListResponse", "WebhookOrder", "WebhookEndpoint", "WebhookDelivery",
		"WebhookEnvelope",
	} {
		if _, ok := schemas[name]; !ok {
			t.Errorf("schema %s is missing", name)
		}
	}

	webhooks := root["webhooks"].(map[string]any)
	for _, typ := range []string{"order.paid", "order.cancelled", "order.refunded", "endpoint.verify", "webhook.test"} {
		item, ok := webhooks[typ].(map[string]any)
		if !ok {
			t.Errorf("webhook %s is missing", typ)
			continue
		}
		post := item["post"].(map[string]any)
		var signed bool
		for _, p := range post["parameters"].([]any) {
			if param := p.(map[string]any); param["name"] == "Tix-Signature" && param["in"] == "header" && param["required"] == true {
				signed = true
			}
		}
		if !signed {
			t.Errorf("webhook %s does not document Tix-Signature", typ)
		}
	}
}

// TestOpenAPIDocument_AuthenticatedOperationsShareErrorsAndHeaders checks the
// decisions every authenticated operation follows: the common error responses
// and the Tix-Request-Id / Tix-Version headers on every response.
func TestOpenAPIDocument_AuthenticatedOperationsShareErrorsAndHeaders(t *testing.T) {
	root := decodeJSONDocument(t)
	for path, item := range root["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			if method == "parameters" {
				continue
			}
			name := strings.ToUpper(method) + " " + path
			responses := op.(map[string]any)["responses"].(map[string]any)
			if path == "/health" || path == "/openapi.json" || strings.HasPrefix(path, "/docs") || path == "/payment-notifications/tbank" || path == "/secret-scanning/github" ||
				path == "/transfers/{id}/accept" {
				// Public: no key, so no key errors and no rate-limit budget.
				if sec, ok := op.(map[string]any)["security"].([]any); !ok || len(sec) != 0 {
					t.Errorf("%s must declare security: []", name)
				}
				continue
			}
			for _, code := range []string{"400", "401", "403", "404", "405", "429", "500"} {
				if _, ok := responses[code]; !ok {
					t.Errorf("%s does not document %s", name, code)
				}
			}
			for code, r := range responses {
				resp := r.(map[string]any)
				if ref, ok := resp["$ref"].(string); ok {
					v, err := resolvePointer(root, strings.TrimPrefix(ref, "#"))
					if err != nil {
						t.Fatalf("%s %s: %v", name, code, err)
					}
					resp = v.(map[string]any)
				}
				headers, _ := resp["headers"].(map[string]any)
				for _, h := range []string{"Tix-Request-Id", "Tix-Version"} {
					if _, ok := headers[h]; !ok {
						t.Errorf("%s %s does not document header %s", name, code, h)
					}
				}
				if code[0] == '2' {
					for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
						if _, ok := headers[h]; !ok {
							t.Errorf("%s %s does not document header %s", name, code, h)
						}
					}
				}
			}
		}
	}
}

func TestOpenAPIJSON_IsTheYAMLDocumentAsJSON(t *testing.T) {
	b, err := api.OpenAPIJSON()
	if err != nil {
		t.Fatalf("OpenAPIJSON: %v", err)
	}
	if !json.Valid(b) {
		t.Fatal("OpenAPIJSON is not valid JSON")
	}
	var fromJSON map[string]any
	if err := json.Unmarshal(b, &fromJSON); err != nil {
		t.Fatal(err)
	}
	if fromJSON["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", fromJSON["openapi"])
	}
	if !bytes.HasPrefix(b, []byte(`{"openapi":"3.1.0"`)) {
		t.Errorf("JSON does not keep the YAML key order: starts %.40s", b)
	}
	// Response codes are JSON strings even though YAML could read them as ints.
	ping := fromJSON["paths"].(map[string]any)["/ping"].(map[string]any)["get"].(map[string]any)
	if _, ok := ping["responses"].(map[string]any)["200"]; !ok {
		t.Error(`GET /ping has no "200" response in JSON`)
	}

	// The JSON says exactly what the YAML says.
	var fromYAML any
	if err := yaml.Unmarshal(readDocument(t), &fromYAML); err != nil {
		t.Fatal(err)
	}
	normalized, err := json.Marshal(fromYAML)
	if err != nil {
		t.Fatalf("yaml document does not marshal to json directly: %v", err)
	}
	var want map[string]any
	if err := json.Unmarshal(normalized, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromJSON, want) {
		t.Error("OpenAPIJSON differs from the YAML document")
	}

	again, err := api.OpenAPIJSON()
	if err != nil || !bytes.Equal(b, again) {
		t.Error("OpenAPIJSON is not stable across calls")
	}

	// The JSON form is itself a valid OpenAPI 3.1 document.
	doc, err := libopenapi.NewDocument(b)
	if err != nil {
		t.Fatalf("parse json form: %v", err)
	}
	if _, err := doc.BuildV3Model(); err != nil {
		t.Fatalf("build v3 model from json form: %v", err)
	}
}

// ---- openapitest ----

const (
	testRequestID = "req_0123456789"
	testVersion   = "2026-06-01"
)

func pingBody() map[string]any {
	return map[string]any{
		"key_id":              "key_1",
		"last4":               "a1b2",
		"key_type":            "sk",
		"environment":         "test",
		"livemode":            false,
		"organizer_id":        "org_1",
		"scopes":              []string{"events:read"},
		"webhook_event_types": []string{"order.paid", "order.cancelled", "order.refunded"},
		"api_version":         testVersion,
	}
}

func orderStatusBody() map[string]any {
	return map[string]any{
		"id": "ord_1", "type": "ticket", "status": "paid", "is_paid": true, "livemode": false,
		"currency": "RUB", "base_price": 150000, "service_fee": 0, "total_price": 150000,
		"quantity": 2, "event_id": "evt_1", "ticket_tier_id": "tier_1", "occurrence_tier_id": nil,
		"paid_at": "2026-06-01T10:00:00Z", "created_at": "2026-06-01T09:58:00.123456789Z", "version": 2,
	}
}

func eventDetailBody() map[string]any {
	return map[string]any{
		"id": "evt_1", "title": "Summer Fest", "slug": "summer-fest", "description": nil,
		"city": "Moscow", "venue": "Park", "cover_url": nil, "cover_wide_url": nil, "cover_poster_url": nil,
		"latitude": 55.75, "longitude": nil, "starts_at": "2026-07-01T17:00:00Z", "ends_at": "2026-07-01T23:00:00Z",
		"timezone": "Europe/Moscow", "status": "published", "event_kind": "single", "is_free": false,
		"genres":    []any{map[string]any{"id": "g1", "name": "Rock", "slug": nil}},
		"scene":     map[string]any{"id": "s1", "name": "Main", "slug": nil, "logo_url": nil},
		"min_price": 150000, "currency": "RUB", "qty_total": 100, "qty_sold": 3,
		"address": nil, "age_restriction": 18, "sales_start_at": nil, "sales_end_at": "2026-07-01T17:00:00+03:00",
		"has_seating": true,
		"tiers": []any{map[string]any{
			"id": "tier_1", "name": "GA", "description": nil, "price": 150000, "currency": "RUB",
			"qty_total": 100, "qty_sold": 3, "qty_available": 97, "sold_out": false, "persons_included": 1,
			"seating": false, "sales_start_at": nil, "sales_end_at": nil, "is_on_sale": true,
		}},
		"occurrences": []any{},
		"performers": []any{map[string]any{
			"name": "Band", "slug": nil, "avatar_url": nil, "type": "artist", "starts_at": nil, "duration_min": 60,
		}},
	}
}

func seatingBody() map[string]any {
	return map[string]any{
		"event_id": "evt_1", "has_seating": true,
		"layout": map[string]any{"id": "lay_1", "width": 1000, "height": 600.5, "background_url": nil, "decorations": nil},
		"zones": []any{
			map[string]any{
				"id": "z1", "name": "Stalls", "type": "seated", "color": "#f00", "shape": map[string]any{"points": []any{1, 2}},
				"sort_order": 1, "capacity": 2, "available": 1, "sold_out": false,
				"primary_tier":   map[string]any{"id": "tier_1", "name": "Stalls", "price": 250000, "currency": "RUB", "persons_included": 1},
				"standing_tiers": nil,
				"seats":          []any{map[string]any{"id": "seat_1", "label": "A1", "x": 1, "y": 2.5, "rotation": 0, "status": "unavailable", "ticket_tier_id": nil, "price": nil, "color": "#f00"}},
			},
			map[string]any{
				"id": "z2", "name": "Dance floor", "type": "standing", "color": "#0f0", "shape": nil,
				"sort_order": 2, "capacity": nil, "available": nil, "sold_out": true, "primary_tier": nil,
				"standing_tiers": []any{map[string]any{"id": "tier_2", "name": "Floor", "price": 100000, "currency": "RUB", "persons_included": 2, "color": "#0f0", "available": 0, "sold_out": true}},
				"seats":          nil,
			},
		},
		"legend": []any{map[string]any{"tier_id": "tier_1", "color": "#f00", "label": "Stalls", "price": 250000, "currency": "RUB"}},
	}
}

func orderCreateBody(status string) map[string]any {
	return map[string]any{
		"id": "ord_1", "status": status, "type": "ticket", "environment": "test", "currency": "RUB",
		"base_price": 300000, "service_fee": 0, "total_price": 300000,
		"payment":    map[string]any{"qr_image": "data:image/png;base64,iVBORw0KGgo=", "qr_payload": "https://qr.nspk.ru/AS1", "deep_link": nil, "expires_at": "2026-06-01T10:15:00Z", "provider": "sbp"},
		"poll_token": "pt_secret", "created_at": "2026-06-01T10:00:00Z",
	}
}

// record serves one handler answer for method+target and returns what a test
// has after reading the response.
func record(tb testing.TB, method, target string, status int, headers map[string]string, body any) (*http.Request, *http.Response, []byte) {
	tb.Helper()
	req := httptest.NewRequest(method, target, nil)
	rec := httptest.NewRecorder()
	for k, v := range headers {
		rec.Header().Set(k, v)
	}
	if body != nil {
		rec.Header().Set("Content-Type", "application/json")
		rec.WriteHeader(status)
		if s, ok := body.(string); ok {
			_, _ = io.WriteString(rec, s)
		} else if err := json.NewEncoder(rec).Encode(body); err != nil {
			tb.Fatal(err)
		}
	} else {
		rec.WriteHeader(status)
	}
	res := rec.Result()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return req, res, b
}

func commonHeaders() map[string]string {
	return map[string]string{
		"Tix-Request-Id":        testRequestID,
		"Tix-Version":           testVersion,
		"X-RateLimit-Limit":     "600",
		"X-RateLimit-Remaining": "599",
		"X-RateLimit-Reset":     "60",
	}
}

func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func with(m map[string]any, key string, v any) map[string]any {
	out := without(m, key)
	out[key] = v
	return out
}

func TestValidator_ChecksResponsesAgainstTheDocument(t *testing.T) {
	v := syntheticValidator(t)
	errEnvelope := map[string]any{"error": map[string]any{"code": "not_found", "message": "event not found"}}
	onlyIDs := map[string]string{"Tix-Request-Id": testRequestID, "Tix-Version": testVersion}

	tests := []struct {
		name    string
		method  string
		target  string
		status  int
		headers map[string]string
		body    any
		wantErr string // substring of the problems; "" means valid
	}{
		{name: "ValidPing", method: "GET", target: "http://127.0.0.1:8080/v1/ping", status: 200, headers: commonHeaders(), body: pingBody()},
		{name: "AnyHostIsAccepted", method: "GET", target: "http://127.0.0.1:39121/v1/ping", status: 200, headers: commonHeaders(), body: pingBody()},
		{name: "RateLimitHeadersAreOptional", method: "GET", target: "/v1/ping", status: 200, headers: onlyIDs, body: pingBody()},
		{name: "MissingRequiredField", method: "GET", target: "/v1/ping", status: 200, headers: commonHeaders(), body: without(pingBody(), "organizer_id"), wantErr: "organizer_id"},
		{name: "NullInNonNullableField", method: "GET", target: "/v1/ping", status: 200, headers: commonHeaders(), body: with(pingBody(), "key_id", nil), wantErr: "key_id"},
		{name: "NullableFieldAcceptsNull", method: "GET", target: "/v1/ping", status: 200, headers: commonHeaders(), body: with(pingBody(), "last4", nil)},
		{name: "UnknownFieldsAreAllowed", method: "GET", target: "/v1/ping", status: 200, headers: commonHeaders(), body: with(pingBody(), "future_field", 1)},
		{name: "MissingRequestIdHeader", method: "GET", target: "/v1/ping", status: 200, headers: map[string]string{"Tix-Version": testVersion}, body: pingBody(), wantErr: "Tix-Request-Id"},
		{name: "MissingVersionHeader", method: "GET", target: "/v1/ping", status: 200, headers: map[string]string{"Tix-Request-Id": testRequestID}, body: pingBody(), wantErr: "Tix-Version"},
		{name: "UndocumentedStatus", method: "GET", target: "/v1/ping", status: 418, headers: onlyIDs, body: errEnvelope, wantErr: "418"},
		{name: "DocumentedErrorOnKnownRoute", method: "GET", target: "/v1/events/evt_missing", status: 404, headers: onlyIDs, body: errEnvelope},
		{name: "ErrorWithoutMessage", method: "GET", target: "/v1/events/evt_missing", status: 404, headers: onlyIDs, body: map[string]any{"error": map[string]any{"code": "not_found"}}, wantErr: "message"},
		{name: "BadTimestampFormat", method: "GET", target: "/v1/orders/ord_1", status: 200, headers: commonHeaders(), body: with(orderStatusBody(), "created_at", "yesterday"), wantErr: "created_at"},
		{name: "OrderStatusPollToken", method: "GET", target: "/v1/orders/ord_1?poll_token=pt_1", status: 200, headers: commonHeaders(), body: orderStatusBody()},
		{name: "OrderStatusWithPII", method: "POST", target: "/v1/orders/ord_1/check-status", status: 200, headers: commonHeaders(), body: with(orderStatusBody(), "buyer", map[string]any{"email": "a@example.com", "name": nil, "phone": nil})},
		{name: "OrderStatusWithBadPII", method: "GET", target: "/v1/orders/ord_1", status: 200, headers: commonHeaders(), body: with(orderStatusBody(), "buyer", map[string]any{"name": nil, "phone": nil}), wantErr: "email"},
		{name: "EventDetail", method: "GET", target: "/v1/events/evt_1", status: 200, headers: commonHeaders(), body: eventDetailBody()},
		{name: "EventDetailBySlug", method: "GET", target: "/v1/events/by-slug/summer-fest", status: 200, headers: commonHeaders(), body: eventDetailBody()},
		{name: "EventDetailMissingTiers", method: "GET", target: "/v1/events/evt_1", status: 200, headers: commonHeaders(), body: without(eventDetailBody(), "tiers"), wantErr: "tiers"},
		{name: "EventDetailMoneyIsInteger", method: "GET", target: "/v1/events/evt_1", status: 200, headers: commonHeaders(), body: with(eventDetailBody(), "min_price", 1500.5), wantErr: "min_price"},
		{name: "EventList", method: "GET", target: "/v1/events?limit=2&scope=all", status: 200, headers: commonHeaders(), body: map[string]any{"data": []any{with(without(eventDetailBody(), "tiers"), "next_occurrence", nil)}, "next_cursor": "opaque", "has_more": true}},
		{name: "Seating", method: "GET", target: "/v1/events/evt_1/seating", status: 200, headers: commonHeaders(), body: seatingBody()},
		{name: "SeatingUnknownSeatStatus", method: "GET", target: "/v1/events/evt_1/seating", status: 200, headers: commonHeaders(), body: with(seatingBody(), "zones", []any{map[string]any{"id": "z1", "name": "Stalls", "type": "seated", "color": "#f00", "shape": nil, "sort_order": 1, "capacity": 2, "available": 1, "sold_out": false, "primary_tier": nil, "standing_tiers": nil, "seats": []any{map[string]any{"id": "seat_1", "label": "A1", "x": 1, "y": 2, "rotation": 0, "status": "held", "ticket_tier_id": nil, "price": nil, "color": "#f00"}}}}), wantErr: "status"},
		{name: "OrderCreated", method: "POST", target: "/v1/orders", status: 201, headers: commonHeaders(), body: orderCreateBody("pending")},
		{name: "OrderReplayRefunded", method: "POST", target: "/v1/orders", status: 200, headers: commonHeaders(), body: orderCreateBody("refunded")},
		{name: "OrderCreatedQRNotPNG", method: "POST", target: "/v1/orders", status: 201, headers: commonHeaders(), body: with(orderCreateBody("pending"), "payment", map[string]any{"qr_image": "https://x/qr.png", "qr_payload": "p"}), wantErr: "qr_image"},
		{name: "OrderPending409WithRetryAfter", method: "POST", target: "/v1/orders", status: 409, headers: map[string]string{"Tix-Request-Id": testRequestID, "Tix-Version": testVersion, "Retry-After": "1"}, body: map[string]any{"error": map[string]any{"code": "order_pending", "message": "retry"}}},
		{name: "PaymentProvider502", method: "POST", target: "/v1/orders", status: 502, headers: onlyIDs, body: map[string]any{"error": map[string]any{"code": "payment_provider_error", "message": "retry"}}},
		{name: "SalesClosedNotDocumentedOnOrderList", method: "GET", target: "/v1/orders", status: 410, headers: onlyIDs, body: map[string]any{"error": map[string]any{"code": "sales_closed", "message": "closed"}}, wantErr: "410"},
		{name: "RateLimited", method: "GET", target: "/v1/events", status: 429, headers: map[string]string{"Tix-Request-Id": testRequestID, "Tix-Version": testVersion, "Retry-After": "12", "X-RateLimit-Limit": "600", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "12"}, body: map[string]any{"error": map[string]any{"code": "rate_limited", "message": "slow down"}}},
		{name: "InsufficientScope403WithParam", method: "GET", target: "/v1/webhook-endpoints", status: 403, headers: onlyIDs, body: map[string]any{"error": map[string]any{"code": "insufficient_scope", "message": "needs webhooks:manage", "param": "scope"}}},
		{name: "UnknownEnumValue", method: "GET", target: "/v1/orders/ord_1", status: 200, headers: commonHeaders(), body: with(orderStatusBody(), "status", "weird"), wantErr: "status"},
		{name: "HealthHasNoCommonHeaders", method: "GET", target: "/v1/health", status: 200, body: map[string]any{"status": "ok", "db": "up", "version": testVersion, "response_time_ms": 3, "region": "eu"}},
		{name: "HealthDegraded", method: "GET", target: "/v1/health", status: 503, body: map[string]any{"status": "degraded", "db": "down", "version": testVersion, "response_time_ms": 1500}},
		{name: "HealthDegradedShapeOn200", method: "GET", target: "/v1/health", status: 200, body: map[string]any{"status": "degraded", "db": "down", "version": testVersion, "response_time_ms": 1500}, wantErr: "status"},
		{name: "UnknownRouteWithEnvelope", method: "GET", target: "/v1/nope", status: 404, headers: onlyIDs, body: errEnvelope},
		{name: "UnknownRouteWithoutEnvelope", method: "GET", target: "/v1/nope", status: 404, headers: onlyIDs, body: "404 page not found\n", wantErr: "envelope"},
		{name: "UnknownRouteWithoutRequestId", method: "GET", target: "/v1/nope", status: 404, headers: map[string]string{"Tix-Version": testVersion}, body: errEnvelope, wantErr: "Tix-Request-Id"},
		{name: "PathOutsideBasePathIsUnknown", method: "GET", target: "/ping", status: 200, headers: commonHeaders(), body: pingBody(), wantErr: "outside /v1"},
		{name: "WrongMethodWithEnvelopeAndAllow", method: "PUT", target: "/v1/ping", status: 405, headers: map[string]string{"Tix-Request-Id": testRequestID, "Tix-Version": testVersion, "Allow": "GET"}, body: map[string]any{"error": map[string]any{"code": "method_not_allowed", "message": "use GET"}}},
		{name: "WrongMethodWithoutAllow", method: "PUT", target: "/v1/ping", status: 405, headers: onlyIDs, body: map[string]any{"error": map[string]any{"code": "method_not_allowed", "message": "use GET"}}, wantErr: "Allow"},
		{name: "CORSPreflight", method: "OPTIONS", target: "/v1/events", status: 204},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, res, body := record(t, tc.method, tc.target, tc.status, tc.headers, tc.body)
			problems := v.Validate(req, res, body)
			got := strings.Join(problems, "\n")
			switch {
			case tc.wantErr == "" && len(problems) > 0:
				t.Errorf("want valid, got problems:\n%s", got)
			case tc.wantErr != "" && len(problems) == 0:
				t.Errorf("want a problem mentioning %q, got none", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(got, tc.wantErr):
				t.Errorf("want a problem mentioning %q, got:\n%s", tc.wantErr, got)
			}
			// The body stays readable for the caller.
			if rest, _ := io.ReadAll(res.Body); !bytes.Equal(rest, body) {
				t.Errorf("res.Body not rebuilt: %q", rest)
			}
		})
	}
}

func TestValidator_StripsServerBasePath(t *testing.T) {
	v := syntheticValidator(t)
	for _, tc := range []struct{ method, target, operationID string }{
		{"GET", "http://127.0.0.1:8080/v1/events", "listEvents"},
		{"GET", "https://abc123.execute-api.eu-central-1.amazonaws.com/v1/events/evt_1/seating?occurrence_id=occ_1", "getEventSeating"},
		{"GET", "/v1/events/by-slug/summer-fest", "getEventBySlug"},
		{"GET", "/v1/events/by-slug", "getEvent"},
		{"POST", "/v1/orders/preview", "previewOrder"},
		{"GET", "/v1/orders/ord_1", "getOrder"},
		{"DELETE", "/v1/seat-holds", "releaseSeatHolds"},
		{"POST", "/v1/webhook-deliveries/dlv_1/redeliver", "redeliverWebhookDelivery"},
		{"GET", "/v1/openapi.json", "getOpenAPI"},
		{"GET", "/v1/health", "getHealth"},
	} {
		op := v.Operation(httptest.NewRequest(tc.method, tc.target, nil))
		if op == nil {
			t.Errorf("%s %s: no operation", tc.method, tc.target)
			continue
		}
		if op.OperationId != tc.operationID {
			t.Errorf("%s %s: operation %s, want %s", tc.method, tc.target, op.OperationId, tc.operationID)
		}
	}
	for _, target := range []string{"/events", "/v2/events", "/v1x/events", "/v1/events/evt_1/nope"} {
		if op := v.Operation(httptest.NewRequest("GET", target, nil)); op != nil {
			t.Errorf("GET %s: matched %s, want no operation", target, op.OperationId)
		}
	}
}

// fakeTB records Errorf calls; everything else goes to the real test.
type fakeTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func TestValidator_CheckResponseFailsTheTest(t *testing.T) {
	v := syntheticValidator(t)

	ok := &fakeTB{TB: t}
	req, res, body := record(t, "GET", "/v1/ping", 200, commonHeaders(), pingBody())
	v.CheckResponse(ok, req, res, body)
	if len(ok.errors) > 0 {
		t.Errorf("valid response reported: %v", ok.errors)
	}

	bad := &fakeTB{TB: t}
	req, res, body = record(t, "GET", "/v1/ping", 200, commonHeaders(), without(pingBody(), "scopes"))
	v.CheckResponse(bad, req, res, body)
	if len(bad.errors) != 1 || !strings.Contains(bad.errors[0], "scopes") {
		t.Errorf("missing required field: got errors %v, want one mentioning scopes", bad.errors)
	}
}

func TestValidator_ConcurrentUse(t *testing.T) {
	v := syntheticValidator(t)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := pingBody()
			if i%2 == 1 {
				body = without(body, "scopes")
			}
			req, res, b := record(t, "GET", "/v1/ping", 200, commonHeaders(), body)
			problems := v.Validate(req, res, b)
			if (i%2 == 1) != (len(problems) > 0) {
				t.Errorf("goroutine %d: problems %v", i, problems)
			}
		}()
	}
	wg.Wait()
}

func decodeJSONDocument(tb testing.TB) map[string]any {
	tb.Helper()
	b, err := api.OpenAPIJSON()
	if err != nil {
		tb.Fatalf("OpenAPIJSON: %v", err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		tb.Fatal(err)
	}
	return root
}

func walk(node any, visit func(map[string]any)) {
	switch n := node.(type) {
	case map[string]any:
		visit(n)
		for _, v := range n {
			walk(v, visit)
		}
	case []any:
		for _, v := range n {
			walk(v, visit)
		}
	}
}

// resolvePointer follows an RFC 6901 JSON pointer ("/components/schemas/X").
func resolvePointer(root any, pointer string) (any, error) {
	cur := root
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q: not an object", tok)
		}
		if cur, ok = m[tok]; !ok {
			return nil, fmt.Errorf("%q: no such member", tok)
		}
	}
	return cur, nil
}

// syntheticValidator is a Validator of its own for tests that validate made-up
// responses, so that they do not count as statuses the API was seen to return
// (the shared one's StatusReport, checked by TestMain).
func syntheticValidator(t *testing.T) *openapitest.Validator {
	t.Helper()
	v, err := openapitest.NewFromBytes(readDocument(t))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// StatusReport lists observed statuses an operation does not document, and
// documented ones no response had; ranges and default cover their statuses.
func TestValidator_StatusReport(t *testing.T) {
	v := syntheticValidator(t)
	for _, status := range []int{200, 418} {
		req := httptest.NewRequest("GET", "/v1/ping", nil)
		res := &http.Response{StatusCode: status, Header: http.Header{}}
		v.Validate(req, res, []byte(`{}`))
	}
	undocumented, unobserved := v.StatusReport()
	if !reflect.DeepEqual(undocumented, []string{"GET /ping 418"}) {
		t.Errorf("undocumented = %v, want [GET /ping 418]", undocumented)
	}
	if !slices.Contains(unobserved, "GET /ping 401") || slices.Contains(unobserved, "GET /ping 200") {
		t.Errorf("unobserved = %v, want GET /ping 401 and not GET /ping 200", unobserved)
	}
	if !slices.Contains(unobserved, "POST /orders 201") {
		t.Errorf("unobserved lacks POST /orders 201: %v", unobserved)
	}
}
