package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The golden bodies: one response of every wire resource, byte for byte, in
// testdata/bodies.golden (go test ./internal/api -run Golden -update rewrites it).
const bodiesGolden = "testdata/bodies.golden"

// bodyMasks names the values a run draws at random (ids, tokens, the
// receivers' ports) so that the golden bodies are the same every run.
type bodyMasks struct {
	names map[string]string // value -> <name>
	seen  map[string]int    // member -> values named so far
}

// randomMembers are the members whose values are drawn at random.
var randomMembers = []string{"id", "hold_id", "reservation_id", "poll_token", "ticket_number", "order_id", "key_id", "next_cursor"}

// qrImages are PNGs of payloads that hold random ids; a key's last4 is random.
var (
	qrImages = regexp.MustCompile(`"qr_image":"[^"]*"`)
	last4s   = regexp.MustCompile(`"last4":"[^"]*"`)
	sbpLinks = regexp.MustCompile(`https://qr\.nspk\.ru/[^"]*`) // a random payment id, and its checksum
	// A ticket code's key id and signature, and a JWK's public key, are random.
	codeKeys = regexp.MustCompile(`\\"(kid|sig)\\":\\"[^"\\]*\\"`)
	jwkKeys  = regexp.MustCompile(`"(kid|x)":"[^"]*"`)
)

func (m *bodyMasks) learn(member, value string) {
	if value == "" || m.names[value] != "" || strings.HasPrefix(value, "<") {
		return
	}
	for _, fixed := range []string{"evt_", "tier_", "seat_", "occ_", "zone_", "gen_", "scn_", "lay_", "org_"} {
		if strings.HasPrefix(value, fixed) {
			return
		}
	}
	m.seen[member]++
	m.names[value] = fmt.Sprintf("<%s#%d>", member, m.seen[member])
}

// walk learns the random values of a decoded body.
func (m *bodyMasks) walk(v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // names are given in a stable order
		for _, k := range keys {
			if s, ok := v[k].(string); ok && slices.Contains(randomMembers, k) {
				m.learn(k, s)
			}
			m.walk(v[k])
		}
	case []any:
		for _, e := range v {
			m.walk(e)
		}
	}
}

func (m *bodyMasks) apply(body string) string {
	values := make([]string, 0, len(m.names))
	for v := range m.names {
		values = append(values, v)
	}
	// Longest first: a value never masks part of a longer one.
	slices.SortFunc(values, func(a, b string) int { return len(b) - len(a) })
	for _, v := range values {
		body = strings.ReplaceAll(body, v, m.names[v])
	}
	body = last4s.ReplaceAllString(body, `"last4":"<last4>"`)
	body = sbpLinks.ReplaceAllString(body, `<sbp-link>`)
	body = codeKeys.ReplaceAllString(body, `\"$1\":\"<$1>\"`)
	body = jwkKeys.ReplaceAllString(body, `"$1":"<$1>"`)
	return qrImages.ReplaceAllString(body, `"qr_image":"<png>"`)
}

// TestBodiesGolden_EveryWireResourceAsRecorded pins one response of every
// resource (event list and detail, tiers, seating, availability, hold,
// preview, order created and status, tickets, ticket keys, check-ins,
// refund, order list, ping, webhook endpoints and deliveries) to
// testdata/bodies.golden.
func TestBodiesGolden_EveryWireResourceAsRecorded(t *testing.T) {
	w := newHookWorld(t)
	w.attemptAll()
	h := w.h
	m := &bodyMasks{names: map[string]string{w.okRC.srv.URL: "<receiver-ok>", w.badRC.srv.URL: "<receiver-bad>"}, seen: map[string]int{}}
	var out []string
	call := func(label, method, target, body string, want int, opts ...reqOpt) map[string]any {
		t.Helper()
		h.clk.Advance(time.Second) // each order its own created_at: lists sort by it
		r := h.do(method, target, body, append([]reqOpt{bearer(w.skA)}, opts...)...)
		wantStatus(t, r, want)
		var v any
		if err := json.Unmarshal(r.body, &v); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		m.walk(v)
		out = append(out, m.apply(fmt.Sprintf("%s: %s %s -> %d\n%s", label, method, target, r.StatusCode, r.body)))
		obj, _ := v.(map[string]any)
		return obj
	}
	for _, c := range []struct{ label, target string }{
		{"ping", "/v1/ping"},
		{"event list", "/v1/events?limit=100&scope=all"},
		{"event list page", "/v1/events?limit=2"},
		{"event detail", "/v1/events/evt_concert"},
		{"event detail by slug, occurrences", "/v1/events/by-slug/evt_series"},
		{"event detail, seated", "/v1/events/evt_theatre"},
		{"tiers", "/v1/events/evt_concert/tiers"},
		{"seating", "/v1/events/evt_theatre/seating"},
		{"seating of an event without", "/v1/events/evt_concert/seating"},
		{"availability, seated", "/v1/events/evt_theatre/availability"},
		{"availability, occurrence", "/v1/events/evt_series/availability?occurrence_id=occ_1"},
		{"availability", "/v1/events/evt_concert/availability"},
	} {
		call(c.label, "GET", c.target, "", 200)
	}
	hold := call("hold", "POST", "/v1/seat-holds", `{"event_id":"evt_theatre","seat_ids":["seat_A1","seat_B2"]}`, 200)
	seats := `"seat_reservation_ids":["` + strings.Join(reservationIDs(hold), `","`) + `"]`
	seated := `{` + buyer + `,` + seats + `}`
	call("preview, seats", "POST", "/v1/orders/preview", `{`+seats+`}`, 200)
	call("preview, promo", "POST", "/v1/orders/preview", `{"tier_id":"evt_concert_ga","quantity":3,"promo_code":"TEN"}`, 200)
	seatOrder := call("order created, seats", "POST", "/v1/orders", seated, 201, idem("golden-seats"))
	call("order paid, seats", "POST", "/v1/orders/"+seatOrder["id"].(string)+"/simulate-payment", "", 200)
	seatTickets := call("tickets, seats", "GET", "/v1/orders/"+seatOrder["id"].(string)+"/tickets", "", 200)

	o := call("order created", "POST", "/v1/orders", gaBody("evt_concert_ga", 2), 201, idem("golden-ga"))
	id, token := o["id"].(string), o["poll_token"].(string)
	call("order status with PII", "GET", "/v1/orders/"+id, "", 200)
	r := h.do("GET", "/v1/orders/"+id+"?poll_token="+token, "")
	wantStatus(t, r, 200)
	out = append(out, m.apply("order status by poll token: GET /v1/orders/"+id+"?poll_token="+token+" -> 200\n"+string(r.body)))
	call("check-status", "POST", "/v1/orders/"+id+"/check-status", "", 200)
	call("order paid", "POST", "/v1/orders/"+id+"/simulate-payment", `{"outcome":"paid"}`, 200)
	call("tickets", "GET", "/v1/orders/"+id+"/tickets", "", 200)
	call("refund", "POST", "/v1/orders/"+id+"/refund", `{"reason":"golden"}`, 200)
	call("refund read", "GET", "/v1/orders/"+id+"/refund", "", 200)

	late := call("order created, late payment", "POST", "/v1/orders", gaBody("evt_concert_ga", 1), 201, idem("golden-late"))
	call("order cancelled", "POST", "/v1/orders/"+late["id"].(string)+"/simulate-payment", `{"outcome":"cancelled"}`, 200)
	call("late payment", "POST", "/v1/orders/"+late["id"].(string)+"/simulate-payment", `{"outcome":"late_payment"}`, 200)

	call("order list", "GET", "/v1/orders?limit=100", "", 200)
	call("order list page", "GET", "/v1/orders?limit=1", "", 200)
	again := call("hold to release", "POST", "/v1/seat-holds", `{"event_id":"evt_theatre","seat_ids":["seat_C3"]}`, 200)
	rid := again["seats"].([]any)[0].(map[string]any)["reservation_id"].(string)
	call("release", "DELETE", "/v1/seat-holds", `{"reservation_ids":["`+rid+`"]}`, 200)

	call("webhook endpoints", "GET", "/v1/webhook-endpoints", "", 200)
	// One endpoint's deliveries each have their own created_at (two of one event share theirs).
	call("webhook deliveries", "GET", "/v1/webhook-deliveries?limit=100&endpoint_id="+w.epOK.ID, "", 200)
	call("webhook deliveries, failing", "GET", "/v1/webhook-deliveries?endpoint_id="+w.epBad.ID, "", 200)
	call("webhook deliveries page", "GET", "/v1/webhook-deliveries?limit=1&endpoint_id="+w.epBad.ID, "", 200)
	call("redeliver", "POST", "/v1/webhook-deliveries/"+w.bad4+"/redeliver", "", 200)
	call("error", "GET", "/v1/events/evt_nope", "", http.StatusNotFound)
	// The door, last: its calls move the clock of nothing above.
	call("ticket keys", "GET", "/v1/ticket-keys", "", 200)
	firstSeat := seatTickets["tickets"].([]any)[0].(map[string]any)
	code, _ := json.Marshal(firstSeat["qr_payload"])
	scan := call("check-in", "POST", "/v1/check-ins", `{"code":`+string(code)+`,"gate":"north"}`, 200)
	call("check-in, already admitted", "POST", "/v1/check-ins", `{"code":"`+firstSeat["ticket_number"].(string)+`","gate":"south"}`, 200)
	call("check-in stats", "GET", "/v1/events/evt_theatre/check-in-stats", "", 200)
	call("check-in undone", "DELETE", "/v1/check-ins/"+scan["check_in"].(map[string]any)["id"].(string), "", 200)
	r = h.do("GET", "/v1/health", "")
	wantStatus(t, r, 200)
	out = append(out, "health: GET /v1/health -> 200\n"+responseTime.ReplaceAllString(string(r.body), `"response_time_ms":*`))
	checkGolden(t, bodiesGolden, strings.Join(out, "\n\n")+"\n")
}
