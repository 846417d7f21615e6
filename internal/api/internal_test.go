package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/ticketing"
)

// fakeKeys admits one key without storage: for router behaviour that needs no data.
type fakeKeys struct{ key *auth.Key }

func (f fakeKeys) LookupKey(context.Context, string) (*auth.Key, error) {
	if f.key == nil {
		return nil, auth.ErrUnknownKey
	}
	return f.key, nil
}

func (f fakeKeys) CountRequest(context.Context, string, int, time.Time) (int, bool, error) {
	return 1, true, nil
}

func serve(t *testing.T, rt *route, key *auth.Key, req *http.Request) (*httptest.ResponseRecorder, errorBody) {
	t.Helper()
	s := &Server{Keys: fakeKeys{key}, Clock: clock.System{}, Limits: DefaultLimits}
	rt.group = GroupCatalog
	h := newRouter(s, []*route{rt})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var body errorBody
	_ = jsonUnmarshal(rec.Body.Bytes(), &body)
	return rec, body
}

func testKey(typ auth.KeyType) *auth.Key {
	return &auth.Key{ID: "key_x", OrganizerID: "org_x", Type: typ, Environment: ticketing.EnvTest, Scopes: auth.AllScopes,
		AllowedOrigins: []string{"http://localhost:3000"}}
}

func authed(method, path, body string, typ auth.KeyType) *http.Request {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+auth.NewSecret(typ, ticketing.EnvTest))
	if typ == auth.Publishable {
		r.Header.Set("Origin", "http://localhost:3000")
	}
	r.Header.Set("Content-Type", "application/json")
	return r
}

func TestSecretOnlyRoute_PublishableKeyIs403Forbidden(t *testing.T) {
	rt := &route{method: "GET", pattern: "/orders", skOnly: true, handle: func(w http.ResponseWriter, r *http.Request) error {
		writeJSON(w, 200, map[string]string{"ok": "yes"})
		return nil
	}}
	rec, body := serve(t, rt, testKey(auth.Publishable), authed("GET", "/v1/orders", "", auth.Publishable))
	if rec.Code != 403 || body.Error.Code != ticketing.CodeForbidden {
		t.Fatalf("pk on sk route: %d %+v", rec.Code, body)
	}
	rec, _ = serve(t, rt, testKey(auth.Secret), authed("GET", "/v1/orders", "", auth.Secret))
	if rec.Code != 200 {
		t.Fatalf("sk on sk route: %d %s", rec.Code, rec.Body)
	}
}

func TestPanic_Is500InternalErrorWithoutStack(t *testing.T) {
	rt := &route{method: "GET", pattern: "/boom", handle: func(http.ResponseWriter, *http.Request) error { panic("secret detail") }}
	rec, body := serve(t, rt, testKey(auth.Secret), authed("GET", "/v1/boom", "", auth.Secret))
	if rec.Code != 500 || body.Error.Code != ticketing.CodeInternal {
		t.Fatalf("panic: %d %+v", rec.Code, body)
	}
	if strings.Contains(rec.Body.String(), "secret detail") || strings.Contains(rec.Body.String(), "goroutine") {
		t.Fatalf("panic detail leaked: %s", rec.Body)
	}
	if id := rec.Header().Get("Tix-Request-Id"); id == "" || !strings.Contains(body.Error.Message, id) {
		t.Fatalf("500 should quote the request id %q: %s", id, body.Error.Message)
	}
}

// The router is a net/http.ServeMux: the handler sees the pattern that
// matched and the path values it set, an encoded value decoded.
func TestRouter_HandlersSeeTheServeMuxPatternAndPathValues(t *testing.T) {
	rt := &route{method: "GET", pattern: "/things/{id}/parts", handle: func(w http.ResponseWriter, r *http.Request) error {
		writeJSON(w, 200, map[string]string{"pattern": r.Pattern, "id": r.PathValue("id"), "path": r.URL.Path})
		return nil
	}}
	rec, _ := serve(t, rt, testKey(auth.Secret), authed("GET", "/v1/things/caf%C3%A9/parts/", "", auth.Secret))
	want := `{"id":"café","path":"/v1/things/café/parts/","pattern":"GET /things/{id}/parts"}` + "\n"
	if rec.Code != 200 || rec.Body.String() != want {
		t.Fatalf("%d %s, want %s", rec.Code, rec.Body, want)
	}
}

type sampleBody struct {
	EventID  string   `json:"event_id"`
	Quantity int      `json:"quantity"`
	SeatIDs  []string `json:"seat_ids"`
	Buyer    struct {
		Email string `json:"email"`
	} `json:"buyer"`
}

func TestDecodeJSON_BadBodiesAre400WithParam(t *testing.T) {
	rt := &route{method: "POST", pattern: "/echo", handle: func(w http.ResponseWriter, r *http.Request) error {
		var b sampleBody
		if err := decodeJSON(r, &b); err != nil {
			return err
		}
		writeJSON(w, 200, b)
		return nil
	}}
	cases := []struct{ name, body, param string }{
		{"malformed", `{"event_id": `, ""},
		{"not an object", `[1,2]`, ""},
		{"wrong type", `{"quantity": "two"}`, "quantity"},
		{"wrong nested type", `{"buyer": {"email": 5}}`, "buyer.email"},
		{"wrong array item", `{"seat_ids": [1]}`, "seat_ids"},
		{"unknown field", `{"quantitty": 2}`, "quantitty"},
		{"unknown nested field", `{"quantity": 2, "buyer": {"email": "a@b.example", "nmae": "A"}}`, "buyer.nmae"},
		{"trailing data", `{"quantity": 2} {}`, ""},
		{"empty", ``, ""},
		{"oversized", `{"event_id": "` + strings.Repeat("x", int(DefaultLimits.MaxBodyBytes)) + `"}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec, body := serve(t, rt, testKey(auth.Secret), authed("POST", "/v1/echo", c.body, auth.Secret))
			if rec.Code != 400 || body.Error.Code != ticketing.CodeInvalidRequest || body.Error.Param != c.param {
				t.Fatalf("%d %+v, want 400 invalid_request param %q", rec.Code, body, c.param)
			}
		})
	}
	rec, _ := serve(t, rt, testKey(auth.Secret), authed("POST", "/v1/echo", `{"quantity": 2}`, auth.Secret))
	if rec.Code != 200 {
		t.Fatalf("good body: %d %s", rec.Code, rec.Body)
	}
}
