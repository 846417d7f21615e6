package api

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// router serves a set of routes with net/http.ServeMux patterns ("GET
// /events/{id}"): the mux matches paths and methods, picks the most specific
// pattern and sets the path values. ServeMux refuses two patterns that both
// match a path without one being more specific, and the contract has such a
// pair: /events/by-slug/{slug} and /events/{id}/tiers both match
// /events/by-slug/tiers. A route that conflicts with one already registered
// therefore goes to the next mux, consulted after: the route listed first in
// the table wins (by-slug, as the contract wants the literal to).
type router struct {
	s       *Server
	muxes   []*http.ServeMux
	methods []string // the routes' methods, in table order
}

func newRouter(s *Server, rs []*route) *router {
	rt := &router{s: s}
	for i, r := range rs {
		if r.bucket == "" {
			r.bucket = bucketRead
		}
		r.order = i
		if !slices.Contains(rt.methods, r.method) {
			rt.methods = append(rt.methods, r.method)
		}
		rt.add(r.method+" "+r.pattern, routeHandler{rt: rt, route: r})
	}
	return rt
}

// add registers pattern on the first mux it does not conflict with.
func (rt *router) add(pattern string, h http.Handler) {
	for _, m := range rt.muxes {
		if tryHandle(m, pattern, h) {
			return
		}
	}
	m := http.NewServeMux()
	m.Handle(pattern, h) // a pattern that is not valid panics here
	rt.muxes = append(rt.muxes, m)
}

// tryHandle registers pattern on m unless m panics: a conflict with a pattern
// m has (ServeMux checks before it changes anything).
func tryHandle(m *http.ServeMux, pattern string, h http.Handler) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	m.Handle(pattern, h)
	return true
}

// find returns the route that serves method on target, and the mux that has
// it; nil when none (a nil target matches nothing).
func (rt *router) find(method string, target *url.URL) (*route, *http.ServeMux) {
	if target == nil {
		return nil, nil
	}
	for _, m := range rt.muxes {
		if h, ok := lookup(m, method, target); ok {
			return h.route, m
		}
	}
	return nil, nil
}

func lookup(m *http.ServeMux, method string, target *url.URL) (routeHandler, bool) {
	h, _ := m.Handler(&http.Request{Method: method, URL: target, Header: http.Header{}})
	rh, ok := h.(routeHandler)
	return rh, ok
}

// allowed lists the methods of the routes that take target's path, in table
// order: for each method and mux, the route the mux picks.
func (rt *router) allowed(target *url.URL) []string {
	if target == nil {
		return nil
	}
	var rs []*route
	for _, method := range rt.methods {
		for _, m := range rt.muxes {
			if h, ok := lookup(m, method, target); ok {
				rs = append(rs, h.route)
			}
		}
	}
	slices.SortFunc(rs, func(a, b *route) int { return a.order - b.order })
	var allow []string
	for _, r := range rs {
		if !slices.Contains(allow, r.method) { // two routes of one method can take one path
			allow = append(allow, r.method)
		}
	}
	return allow
}

// routeURL is the URL the muxes match for path (below /v1): its segments
// without leading or trailing slashes, so /events/ is /events. The segments
// are those of the decoded path, so an encoded slash (%2F) separates them as
// a slash does; each is escaped again, dots included, so that ServeMux neither
// joins segments nor resolves "." and "..", which name nothing special here
// (an id of ".." is not found like any other). A path with an empty segment
// (a double slash) matches no route: nil.
func routeURL(path, rawQuery string) *url.URL {
	segments := strings.Split(strings.Trim(path, "/"), "/")
	escaped := make([]string, len(segments))
	for i, seg := range segments {
		switch seg {
		case "":
			return nil
		case ".", "..":
			escaped[i] = strings.Repeat("%2E", len(seg))
		default:
			escaped[i] = url.PathEscape(seg)
		}
	}
	return &url.URL{Path: "/" + strings.Join(segments, "/"), RawPath: "/" + strings.Join(escaped, "/"), RawQuery: rawQuery}
}
