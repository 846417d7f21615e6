package api

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

type pingJSON struct {
	KeyID             string   `json:"key_id"`
	Last4             *string  `json:"last4"`
	KeyType           string   `json:"key_type"`
	Environment       string   `json:"environment"`
	Livemode          bool     `json:"livemode"`
	OrganizerID       string   `json:"organizer_id"`
	Scopes            []string `json:"scopes"`
	WebhookEventTypes []string `json:"webhook_event_types"`
	APIVersion        string   `json:"api_version"`
}

// WebhookEventTypes are the event types an endpoint can subscribe to: the
// default order events and the opt-in ticket events (docs/webhooks.md).
var WebhookEventTypes = []string{"order.paid", "order.cancelled", "order.refunded", "ticket.checked_in", "ticket.transferred"}

func (s *Server) ping(w http.ResponseWriter, r *http.Request) error {
	k := callerOf(r.Context()).key
	var last4 *string
	if k.Last4 != "" {
		last4 = &k.Last4
	}
	scopes := k.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	writeJSON(w, http.StatusOK, pingJSON{
		KeyID: k.ID, Last4: last4, KeyType: string(k.Type), Environment: string(k.Environment),
		Livemode: k.Environment == ticketing.EnvLive, OrganizerID: k.OrganizerID, Scopes: scopes,
		WebhookEventTypes: WebhookEventTypes, APIVersion: APIVersion,
	})
	return nil
}

type healthJSON struct {
	Status         string `json:"status"`
	DB             string `json:"db"`
	Version        string `json:"version"`
	ResponseTimeMS int64  `json:"response_time_ms"`
}

// health checks the database with a short timeout; no key, no side effects.
func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	start := time.Now()
	up := s.probe.probe(r.Context(), s.Health, s.Clock.Now(), s.Limits.HealthCacheTTL)
	h := healthJSON{Status: "ok", DB: "up", Version: APIVersion}
	status := http.StatusOK
	if !up {
		h.Status, h.DB, status = "degraded", "down", http.StatusServiceUnavailable
	}
	h.ResponseTimeMS = time.Since(start).Milliseconds()
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, h)
	return nil
}

// healthCache keeps the last database probe for a few seconds, so that
// GET /health (no key, anyone may call it) does not reach DynamoDB on every call.
type healthCache struct {
	mu    sync.Mutex
	up    bool
	until time.Time
}

func (c *healthCache) probe(ctx context.Context, db HealthChecker, now time.Time, ttl time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Before(c.until) {
		return c.up
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c.up = db.Ping(ctx) == nil
	c.until = now.Add(ttl)
	return c.up
}

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	doc, err := ServedOpenAPIJSON(s.PublicURL)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(doc)
	return nil
}

// query holds a request's query parameters, already checked by the router
// against the route's declared parameters (checkQuery).
type query struct {
	vals map[string][]string
}

func queryOf(r *http.Request) *query { return &query{vals: r.URL.Query()} }

// checkQuery reads query parameters strictly, the same way on every route: an
// unknown parameter or a repeated one is a 400 naming it, so that typos do not
// silently return everything.
func checkQuery(r *http.Request, known []string) error {
	for k, v := range r.URL.Query() {
		if !slices.Contains(known, k) {
			if len(known) == 0 {
				return ticketing.Invalid(k, "unknown query parameter %q; this endpoint takes no query parameters", k)
			}
			return ticketing.Invalid(k, "unknown query parameter %q; known: %s", k, strings.Join(known, ", "))
		}
		if len(v) > 1 {
			return ticketing.Invalid(k, "query parameter %q given %d times; give it once", k, len(v))
		}
	}
	return nil
}

func (q *query) str(name string) string {
	if v := q.vals[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (q *query) has(name string) bool { return len(q.vals[name]) > 0 }

func (q *query) limit() (int, error) {
	if !q.has("limit") {
		return 20, nil
	}
	n, err := strconv.Atoi(q.str("limit"))
	if err != nil || n < 1 || n > 100 {
		return 0, ticketing.Invalid("limit", "limit must be an integer from 1 to 100 (got %q)", q.str("limit"))
	}
	return n, nil
}

func (q *query) time(name string) (*time.Time, error) {
	if !q.has(name) {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, q.str(name))
	if err != nil {
		return nil, ticketing.Invalid(name, "%s must be an ISO-8601 date-time such as 2026-12-31T19:00:00Z (got %q)", name, q.str(name))
	}
	t = t.UTC()
	return &t, nil
}

func (q *query) enum(name, def string, allowed ...string) (string, error) {
	if !q.has(name) {
		return def, nil
	}
	v := q.str(name)
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	return "", ticketing.Invalid(name, "%s must be one of %s (got %q)", name, strings.Join(allowed, ", "), v)
}

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r.Context())
	q := queryOf(r)
	eq := ticketing.EventQuery{OrganizerID: c.key.OrganizerID, Environment: c.key.Environment,
		Cursor: q.str("cursor"), Q: strings.TrimSpace(q.str("q")), City: strings.TrimSpace(q.str("city")), SceneID: q.str("scene_id")}
	var err error
	if eq.Limit, err = q.limit(); err != nil {
		return err
	}
	if q.has("cursor") && eq.Cursor == "" {
		return ticketing.Invalid("cursor", "cursor is empty; omit it for the first page")
	}
	for name, v := range map[string]string{"q": eq.Q, "city": eq.City, "scene_id": eq.SceneID} {
		if len(v) > 200 {
			return ticketing.Invalid(name, "%s is longer than 200 characters", name)
		}
	}
	if eq.StartsAfter, err = q.time("starts_after"); err != nil {
		return err
	}
	if eq.StartsBefore, err = q.time("starts_before"); err != nil {
		return err
	}
	if eq.StartsAfter != nil && eq.StartsBefore != nil && eq.StartsBefore.Before(*eq.StartsAfter) {
		return ticketing.Invalid("starts_before", "starts_before is earlier than starts_after")
	}
	if eq.Scope, err = q.enum("scope", ticketing.ScopeUpcoming, ticketing.ScopeUpcoming, ticketing.ScopePast, ticketing.ScopeAll); err != nil {
		return err
	}
	if eq.Sort, err = q.enum("sort", ticketing.SortStartAt, ticketing.SortStartAt, ticketing.SortCreatedAt); err != nil {
		return err
	}
	order, err := q.enum("order", "asc", "asc", "desc")
	if err != nil {
		return err
	}
	eq.Desc = order == "desc"
	page, err := s.Catalog.Events(r.Context(), eq)
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	out := pageJSON[eventListEntryJSON]{Data: make([]eventListEntryJSON, 0, len(page.Events)), HasMore: page.HasMore, NextCursor: strPtr(page.NextCursor)}
	for _, le := range page.Events {
		out.Data = append(out.Data, renderListEntry(le, now))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) getEvent(w http.ResponseWriter, r *http.Request) error {
	cat := s.catalogFor(r)
	v, err := cat.Event(r.Context(), callerOf(r.Context()).tenant(), r.PathValue("id"))
	if err != nil {
		return err
	}
	viewCacheHeaders(w, cat)
	writeJSON(w, http.StatusOK, renderDetail(v))
	return nil
}

func (s *Server) getEventBySlug(w http.ResponseWriter, r *http.Request) error {
	cat := s.catalogFor(r)
	v, err := cat.EventBySlug(r.Context(), callerOf(r.Context()).tenant(), r.PathValue("slug"))
	if err != nil {
		return err
	}
	viewCacheHeaders(w, cat)
	writeJSON(w, http.StatusOK, renderDetail(v))
	return nil
}

func (s *Server) getTiers(w http.ResponseWriter, r *http.Request) error {
	cat := s.catalogFor(r)
	v, err := cat.Event(r.Context(), callerOf(r.Context()).tenant(), r.PathValue("id"))
	if err != nil {
		return err
	}
	tiers, _ := renderTiers(v)
	viewCacheHeaders(w, cat)
	writeJSON(w, http.StatusOK, listJSON[tierJSON]{Data: tiers})
	return nil
}

// getSeating answers the seating map; zone_id (additive) fills the seats of
// that zone only, the other zones' seats being null, so that a seat picker
// loads a stadium zone by zone.
func (s *Server) getSeating(w http.ResponseWriter, r *http.Request) error {
	q := queryOf(r)
	zoneID := q.str("zone_id")
	if q.has("zone_id") && zoneID == "" {
		return ticketing.Invalid("zone_id", "zone_id is empty; omit it for the whole map, or give a zone id of the map")
	}
	v, err := s.Catalog.Seating(r.Context(), callerOf(r.Context()).tenant(), r.PathValue("id"), q.str("occurrence_id"))
	if err != nil {
		return err
	}
	m := renderSeating(v, zoneID)
	if zoneID != "" && !slices.ContainsFunc(m.Zones, func(z seatingZoneJSON) bool { return z.ID == zoneID }) {
		e := ticketing.NotFound("zone " + zoneID + " of this event's seating map")
		e.Param = "zone_id"
		return e
	}
	return s.writeSeating(w, r, m, zoneID)
}

func (s *Server) getAvailability(w http.ResponseWriter, r *http.Request) error {
	q := queryOf(r)
	cat := s.catalogFor(r)
	v, err := cat.Availability(r.Context(), callerOf(r.Context()).tenant(), r.PathValue("id"), q.str("occurrence_id"))
	if err != nil {
		return err
	}
	viewCacheHeaders(w, cat)
	writeJSON(w, http.StatusOK, renderAvailability(v))
	return nil
}

// catalogFor is the catalog a request reads: the process cache of event views
// for publishable keys (a storefront's visitors: where an on-sale's read volume
// is; a view may lag up to the cache's TTL behind sales made elsewhere), the
// table itself for secret keys (an integrator's server sees its own sales).
func (s *Server) catalogFor(r *http.Request) *ticketing.Catalog {
	if c := callerOf(r.Context()); c != nil && c.key.Type == auth.Publishable {
		return s.Catalog
	}
	return s.Catalog.Fresh()
}

// viewCacheHeaders marks an event detail, tiers or availability response read
// through cat: the view may be up to the catalog cache's TTL old already, and
// the caller's own client (a storefront's browser) may reuse it for as long
// again. It is private: the response is for one key (its organizer,
// environment, scopes, origin and rate-limit headers), so a shared cache in
// front must not serve it to another key, nor to this key once revoked; Vary:
// Authorization says the same to a cache that stores it regardless.
func viewCacheHeaders(w http.ResponseWriter, cat *ticketing.Catalog) {
	h := w.Header()
	if ttl := cat.Cache.TTL(); ttl > 0 {
		h.Set("Cache-Control", "private, max-age="+strconv.Itoa(int((ttl+time.Second-1)/time.Second)))
	} else {
		h.Set("Cache-Control", "private, no-cache")
	}
	h.Add("Vary", "Authorization")
}
