package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/auth"
)

// putStock writes a stock item as the sales path will: a tier counter or a taken seat.
func (h *harness) putStock(event, sk string, attrs map[string]types.AttributeValue) {
	h.t.Helper()
	item := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "STK#" + event + "#test"},
		"SK": &types.AttributeValueMemberS{Value: sk},
	}
	for k, v := range attrs {
		item[k] = v
	}
	if _, err := h.st.Client().PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(h.st.TableName()), Item: item}); err != nil {
		h.t.Fatal(err)
	}
}

func nv(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
func sv(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func ids(t *testing.T, r response) []string {
	t.Helper()
	var out []string
	for _, d := range r.json(t)["data"].([]any) {
		out = append(out, d.(map[string]any)["id"].(string))
	}
	return out
}

func TestListEvents_DefaultIsPublishedUpcomingSoonestFirstOfOwnOrganizer(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	r := h.get("/v1/events", sk)
	wantStatus(t, r, 200)
	got := ids(t, r)
	want := []string{"evt_series", "evt_free", "evt_theatre", "evt_ended", "evt_concert"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ids %v, want %v (no draft, no past, no other organizer)", got, want)
	}
	body := r.json(t)
	if body["has_more"] != false || body["next_cursor"] != nil {
		t.Errorf("single page: has_more %v next_cursor %v", body["has_more"], body["next_cursor"])
	}
	first := body["data"].([]any)[0].(map[string]any)
	for _, f := range []string{"id", "title", "slug", "description", "city", "venue", "cover_url", "cover_wide_url", "cover_poster_url",
		"latitude", "longitude", "starts_at", "ends_at", "timezone", "status", "event_kind", "is_free", "genres", "scene",
		"min_price", "currency", "qty_total", "qty_sold", "next_occurrence"} {
		if _, ok := first[f]; !ok {
			t.Errorf("list item lacks %q (null must be sent as null)", f)
		}
	}
	if no := first["next_occurrence"].(map[string]any); no["id"] != "occ_1" {
		t.Errorf("next_occurrence %v, want occ_1", no)
	}
	if first["qty_total"].(float64) != 300 {
		t.Errorf("recurring qty_total %v, want 3 occurrences x 100", first["qty_total"])
	}
}

func TestListEvents_Filters(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	cases := []struct {
		name, query string
		want        []string
	}{
		{"q matches title case-insensitively", "q=HAMLET", []string{"evt_theatre"}},
		{"q matches venue", "q=blue+note", []string{"evt_series"}},
		{"city exact case-insensitive", "city=saint+petersburg", []string{"evt_theatre"}},
		{"city is not a substring match", "city=Saint", nil},
		{"scene_id", "scene_id=scn_main", []string{"evt_concert"}},
		{"scope past", "scope=past", []string{"evt_past"}},
		{"scope all", "scope=all", []string{"evt_past", "evt_series", "evt_free", "evt_theatre", "evt_ended", "evt_concert"}},
		{"order desc", "order=desc", []string{"evt_concert", "evt_ended", "evt_theatre", "evt_free", "evt_series"}},
		{"starts_after inclusive", "starts_after=" + url.QueryEscape(t0.Add(day(10)).Format(time.RFC3339)), []string{"evt_theatre", "evt_ended", "evt_concert"}},
		{"starts_before inclusive", "starts_before=" + url.QueryEscape(t0.Add(day(5)).Format(time.RFC3339)), []string{"evt_series", "evt_free"}},
		{"sort created_at", "sort=created_at", []string{"evt_concert", "evt_ended", "evt_theatre", "evt_free", "evt_series"}},
		{"sort created_at with start bounds", "sort=created_at&starts_after=" + url.QueryEscape(t0.Add(day(10)).Format(time.RFC3339)), []string{"evt_concert", "evt_ended", "evt_theatre"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := h.get("/v1/events?"+c.query, sk)
			wantStatus(t, r, 200)
			if got := ids(t, r); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("ids %v, want %v", got, c.want)
			}
		})
	}
}

func TestListEvents_CursorPagesThroughEverythingOnce(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	var all []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
		target := "/v1/events?limit=2&scope=all"
		if cursor != "" {
			target += "&cursor=" + url.QueryEscape(cursor)
		}
		r := h.get(target, sk)
		wantStatus(t, r, 200)
		body := r.json(t)
		page := ids(t, r)
		all = append(all, page...)
		if body["has_more"] == false {
			if body["next_cursor"] != nil {
				t.Fatalf("last page has next_cursor %v", body["next_cursor"])
			}
			break
		}
		if len(page) != 2 {
			t.Fatalf("a page before the last has %d items, want 2", len(page))
		}
		cursor = body["next_cursor"].(string)
	}
	want := []string{"evt_past", "evt_series", "evt_free", "evt_theatre", "evt_ended", "evt_concert"}
	if fmt.Sprint(all) != fmt.Sprint(want) {
		t.Fatalf("paged ids %v, want %v", all, want)
	}
}

func TestListEvents_BadInputIs400WithParam(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	first := h.get("/v1/events?limit=1", sk).json(t)["next_cursor"].(string)
	tampered := []byte(first)
	tampered[3] ^= 1
	cases := []struct{ name, query, param string }{
		{"limit zero", "limit=0", "limit"},
		{"limit over 100", "limit=101", "limit"},
		{"limit not a number", "limit=ten", "limit"},
		{"garbage cursor", "cursor=abc", "cursor"},
		{"tampered cursor", "limit=1&cursor=" + url.QueryEscape(string(tampered)), "cursor"},
		{"cursor of another query", "limit=1&q=rock&cursor=" + url.QueryEscape(first), "cursor"},
		{"bad scope", "scope=soon", "scope"},
		{"bad sort", "sort=title", "sort"},
		{"bad order", "order=up", "order"},
		{"bad date", "starts_after=tomorrow", "starts_after"},
		{"inverted range", "starts_after=2027-01-02T00:00:00Z&starts_before=2027-01-01T00:00:00Z", "starts_before"},
		{"unknown parameter", "colour=red", "colour"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, h.get("/v1/events?"+c.query, sk), 400, "invalid_request", c.param)
		})
	}
	t.Run("limit 100 is fine", func(t *testing.T) { wantStatus(t, h.get("/v1/events?limit=100", sk), 200) })
}

func TestEventDetail_EveryFieldAndTenancy(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	r := h.get("/v1/events/evt_concert", sk)
	wantStatus(t, r, 200)
	d := r.json(t)
	for _, f := range []string{"address", "age_restriction", "sales_start_at", "sales_end_at", "has_seating", "tiers", "occurrences", "performers", "min_price", "genres", "scene"} {
		if _, ok := d[f]; !ok {
			t.Errorf("detail lacks %q", f)
		}
	}
	if _, ok := d["next_occurrence"]; ok {
		t.Error("detail must not carry next_occurrence")
	}
	if d["min_price"].(float64) != 150000 || d["is_free"] != false {
		t.Errorf("min_price %v is_free %v", d["min_price"], d["is_free"])
	}
	tiers := d["tiers"].([]any)
	vip := tiers[1].(map[string]any)
	if vip["is_on_sale"] != false || vip["sales_start_at"] == nil || vip["persons_included"].(float64) != 2 {
		t.Errorf("VIP tier whose own window opens tomorrow: %v", vip)
	}
	if ga := tiers[0].(map[string]any); ga["is_on_sale"] != true || ga["qty_available"].(float64) != 100 || ga["sales_end_at"] != nil {
		t.Errorf("GA tier: %v", ga)
	}

	for name, target := range map[string]string{
		"draft":          "/v1/events/evt_draft",
		"other org":      "/v1/events/evt_other",
		"missing":        "/v1/events/evt_nope",
		"weird id":       "/v1/events/" + url.PathEscape("a b"),
		"draft slug":     "/v1/events/by-slug/evt_draft",
		"other slug":     "/v1/events/by-slug/evt_other",
		"draft tiers":    "/v1/events/evt_draft/tiers",
		"other seating":  "/v1/events/evt_other/seating",
		"other avail":    "/v1/events/evt_other/availability",
		"missing slug":   "/v1/events/by-slug/nope",
		"bad occurrence": "/v1/events/evt_series/availability?occurrence_id=occ_9",
	} {
		t.Run(name, func(t *testing.T) {
			r := h.get(target, sk)
			wantStatus(t, r, 404)
			if code, _ := r.errorCode(t); code != "not_found" {
				t.Fatalf("code %q", code)
			}
		})
	}
	t.Run("by slug", func(t *testing.T) {
		r := h.get("/v1/events/by-slug/evt_theatre", sk)
		wantStatus(t, r, 200)
		if r.json(t)["id"] != "evt_theatre" {
			t.Fatalf("by-slug returned %s", r.body)
		}
	})
}

func TestAvailability_SalesWindowsAndStock(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	open := func(target string) bool {
		r := h.get(target, sk)
		wantStatus(t, r, 200)
		return r.json(t)["is_sales_open"].(bool)
	}
	if !open("/v1/events/evt_concert/availability") {
		t.Error("published future event without windows: sales should be open")
	}
	if open("/v1/events/evt_ended/availability") {
		t.Error("explicit sales_end_at in the past: sales should be closed")
	}
	if open("/v1/events/evt_past/availability") {
		t.Error("past event: sales close when it starts")
	}
	if !open("/v1/events/evt_series/availability?occurrence_id=occ_2") {
		t.Error("future occurrence: open")
	}
	// The first occurrence starts: it closes, the series stays open through the others.
	h.clk.Set(t0.Add(day(3) + time.Minute))
	if open("/v1/events/evt_series/availability?occurrence_id=occ_1") {
		t.Error("started occurrence: sales should be closed")
	}
	if !open("/v1/events/evt_series/availability") {
		t.Error("series with later occurrences: open")
	}
	h.clk.Set(t0)

	h.putStock("evt_concert", "-#T#evt_concert_ga", map[string]types.AttributeValue{"sold": nv(100)})
	r := h.get("/v1/events/evt_concert/availability", sk)
	wantStatus(t, r, 200)
	a := r.json(t)
	ga := a["tiers"].([]any)[0].(map[string]any)
	if ga["qty_sold"].(float64) != 100 || ga["qty_available"].(float64) != 0 || ga["sold_out"] != true {
		t.Errorf("sold-out GA tier: %v", ga)
	}
	if a["total_available"].(float64) != 10 || a["sold_out"] != false || a["max_price"].(float64) != 900000 {
		t.Errorf("availability: total %v sold_out %v max %v", a["total_available"], a["sold_out"], a["max_price"])
	}
	if a["zones"] != nil {
		t.Errorf("event without seating: zones %v, want null", a["zones"])
	}
}

func TestSeating_MapStatusesAndHoldExpiry(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	until := t0.Add(15 * time.Minute).UnixMilli()
	h.putStock("evt_theatre", "-#S#seat_B1", map[string]types.AttributeValue{"t": sv("tier_stalls"), "st": sv("sold")})
	h.putStock("evt_theatre", "-#S#seat_B2", map[string]types.AttributeValue{"t": sv("tier_stalls"), "st": sv("held"), "u": nv(until)})
	h.putStock("evt_theatre", "-#T#tier_stand", map[string]types.AttributeValue{"sold": nv(15)})

	status := func() map[string]string {
		r := h.get("/v1/events/evt_theatre/seating", sk)
		wantStatus(t, r, 200)
		out := map[string]string{}
		for _, z := range r.json(t)["zones"].([]any) {
			zm := z.(map[string]any)
			if zm["type"] == "standing" {
				st := zm["standing_tiers"].([]any)[0].(map[string]any)
				out["stand"] = fmt.Sprint(st["available"])
				if zm["seats"] != nil {
					t.Errorf("standing zone seats %v, want null", zm["seats"])
				}
				continue
			}
			if zm["primary_tier"].(map[string]any)["id"] != "tier_stalls" {
				t.Errorf("primary tier %v", zm["primary_tier"])
			}
			for _, s := range zm["seats"].([]any) {
				sm := s.(map[string]any)
				out[sm["id"].(string)] = sm["status"].(string)
				if sm["id"] == "seat_A1" && (sm["ticket_tier_id"] != "tier_box" || sm["price"].(float64) != 500000) {
					t.Errorf("seat A1 overrides the zone tier: %v", sm)
				}
			}
			out["zone_available"] = fmt.Sprint(zm["available"])
		}
		return out
	}
	got := status()
	if got["seat_B1"] != "unavailable" || got["seat_B2"] != "unavailable" || got["seat_B3"] != "available" {
		t.Errorf("sold B1, held B2, free B3: %v", got)
	}
	if got["stand"] != "25" || got["zone_available"] != "13" {
		t.Errorf("standing available %s (want 25), stalls zone available %s (want 13)", got["stand"], got["zone_available"])
	}
	// The hold expires: no cleanup job runs, the seat is free again.
	h.clk.Advance(16 * time.Minute)
	if got := status(); got["seat_B2"] != "available" || got["seat_B1"] != "unavailable" {
		t.Errorf("after hold expiry: %v", got)
	}
	r := h.get("/v1/events/evt_concert/seating", sk)
	wantStatus(t, r, 200)
	if m := r.json(t); m["has_seating"] != false || m["layout"] != nil || len(m["zones"].([]any)) != 0 {
		t.Errorf("event without seating: %s", r.body)
	}
	tiers := h.get("/v1/events/evt_theatre/tiers", sk)
	wantStatus(t, tiers, 200)
	stalls := tiers.json(t)["data"].([]any)[0].(map[string]any)
	if stalls["seating"] != true || stalls["qty_total"].(float64) != 10 || stalls["qty_sold"].(float64) != 1 || stalls["qty_available"].(float64) != 9 {
		t.Errorf("stalls tier after expiry: %v", stalls)
	}
	_ = http.StatusOK
}
