package api

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

// caller is the authenticated key of a request.
type caller struct {
	key    *auth.Key
	budget auth.Budget // the budget the headers show
	// ceiling is a publishable key's ceiling, still to be charged once the
	// request is valid (chargeCeiling); nil for a secret key.
	ceiling *ceilingCharge
}

// ceilingCharge is the state of a publishable key's ceiling in one request.
type ceilingCharge struct {
	bucket  string
	charged bool
}

func callerOf(ctx context.Context) *caller {
	c, _ := ctx.Value(ctxCaller).(*caller)
	return c
}

func (c *caller) tenant() ticketing.Tenant {
	return ticketing.Tenant{OrganizerID: c.key.OrganizerID, Environment: c.key.Environment}
}

func unauthorized(msg string) error {
	return &ticketing.Error{Code: ticketing.CodeUnauthorized, Message: msg}
}

// clientIP is the source address API Gateway reports (RemoteAddr in Lambda; the
// socket peer locally). X-Forwarded-For is never trusted: clients can forge it.
func clientIP(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// authenticate runs contract section 5 for a keyed route: 401 for a missing,
// malformed, unknown, revoked or expired key; 403 for a pk key on an sk route,
// a disallowed origin or IP, a missing scope; 429 over budget. The key is read
// through the process's key cache (a revocation takes effect within
// Limits.KeyCacheTTL) and never written; only a request that passed every
// check is counted on its budgets (ratelimit.go), so nobody can spend a key's
// budget from a place the key does not work from; a publishable key's ceiling
// is charged later, once the request is valid (chargeCeiling).
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, rt *route) (*http.Request, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return r, unauthorized("Missing API key: send Authorization: Bearer <key> (sk_test_..., pk_test_..., sk_live_... or pk_live_...)")
	}
	scheme, secret, ok := strings.Cut(h, " ")
	secret = strings.TrimSpace(secret)
	if !ok || !strings.EqualFold(scheme, "Bearer") || secret == "" {
		return r, unauthorized("Malformed Authorization header: expected Bearer <key>")
	}
	keyType, env, ok := auth.ParseSecret(secret)
	if !ok {
		return r, unauthorized("Malformed API key: expected sk_test_..., pk_test_..., sk_live_... or pk_live_... as issued in the dashboard")
	}
	now := s.Clock.Now()
	hash := auth.Hash(secret)
	key, err := s.lookupKey(r.Context(), hash, now)
	if errors.Is(err, auth.ErrUnknownKey) {
		return r, unauthorized("Invalid API key: it does not exist. Check that you copied the whole key")
	}
	if err != nil {
		return r, err
	}
	if key.Type == keyType && key.Environment == env {
		noteKey(r.Context(), key) // a key of the organizer: the request log keeps the request
	}
	if err := s.checkKey(r, rt, key, keyType, env, now); err != nil {
		return r, err
	}
	budget, whose, err := s.admit(r.Context(), key, rt.bucket, ticketing.ClientNetwork(clientIP(r)), now)
	if err != nil {
		return r, err
	}
	setBudgetHeaders(w, budget, now)
	if key.Type == auth.Secret && s.KeyIPs != nil {
		// A secret key used from many places is likely leaked: its owner is
		// told (once a day), the request goes on whatever happens.
		s.KeyIPs.Seen(r.Context(), key.OrganizerID, key.ID, ticketing.ClientNetwork(clientIP(r)), now)
	}
	if !budget.Admitted {
		return r, rateLimited(budget, s.Limits.Window, whose, now)
	}
	c := &caller{key: key, budget: budget}
	if key.Type == auth.Publishable {
		c.ceiling = &ceilingCharge{bucket: rt.bucket}
	}
	return r.WithContext(context.WithValue(r.Context(), ctxCaller, c)), nil
}

// checkKey applies every rule that binds a key (type, environment, revocation,
// expiry, origin, IP allow-list, scope) before anything is charged to it.
func (s *Server) checkKey(r *http.Request, rt *route, key *auth.Key, keyType auth.KeyType, env ticketing.Environment, now time.Time) error {
	if key.Type != keyType || key.Environment != env {
		return unauthorized("Invalid API key")
	}
	if key.RevokedAt != nil {
		return unauthorized("This API key was revoked; create a new one in the dashboard")
	}
	if !key.Usable(now) {
		return unauthorized("This API key has expired; create a new one in the dashboard")
	}
	if key.Type == auth.Publishable {
		if rt.skOnly {
			return ticketing.Errorf(ticketing.CodeForbidden, "This endpoint needs a secret key (sk_); publishable keys (pk_) cannot call it")
		}
		origin := r.Header.Get("Origin")
		if !key.OriginAllowed(origin) && !(rt.ownOrigin && s.ownOrigin(r)) {
			msg := "Origin " + strconv.Quote(origin) + " is not allowed for this publishable key; add it to the key's allowed origins in the dashboard"
			if origin == "" {
				msg = "Publishable keys work only from a browser on an allowed origin: the request has no Origin header"
			}
			return &ticketing.Error{Code: ticketing.CodeOriginNotAllowed, Message: msg, Param: "origin"}
		}
	}
	if key.Type == auth.Secret && !key.IPAllowed(clientIP(r)) {
		return &ticketing.Error{Code: ticketing.CodeIPNotAllowed, Param: "ip",
			Message: "Requests from " + clientIP(r) + " are not in this secret key's IP allow-list"}
	}
	if rt.scope != "" && !key.HasScope(rt.scope) {
		return &ticketing.Error{Code: ticketing.CodeInsufficientScope, Param: "scope",
			Message: "This key lacks the scope " + rt.scope + " that this endpoint requires"}
	}
	return nil
}

// pollTokenPrefix starts every poll token; keys start with sk_ or pk_.
const pollTokenPrefix = "pt_"

// pollToken returns the poll token a request carries instead of a key, in the
// order of preference: Authorization: Bearer pt_..., the Tix-Poll-Token header,
// the poll_token query parameter (which ends up in access logs: the headers are
// preferred). A request with a key in Authorization carries no poll token.
func pollToken(r *http.Request) (string, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		tok = strings.TrimSpace(tok)
		if ok && strings.EqualFold(scheme, "Bearer") && strings.HasPrefix(tok, pollTokenPrefix) {
			return tok, true
		}
		return "", false
	}
	if v := r.Header.Values("Tix-Poll-Token"); len(v) > 0 {
		return v[0], true
	}
	if r.URL.Query().Has("poll_token") {
		return r.URL.Query().Get("poll_token"), true
	}
	return "", false
}

func hasPollToken(r *http.Request) bool {
	_, ok := pollToken(r)
	return ok
}

func setBudgetHeaders(w http.ResponseWriter, b auth.Budget, now time.Time) {
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(b.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(b.Remaining))
	h.Set("X-RateLimit-Reset", strconv.Itoa(int(math.Ceil(b.Reset.Sub(now).Seconds()))))
}
