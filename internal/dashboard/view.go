package dashboard

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"tix/internal/dashboard/account"
	"tix/internal/ticketing"
)

// view is what every page template reads.
type view struct {
	Lang    string
	Base    string // Settings.Path
	Path    string // the request's path, for the language switch
	Email   string // the signed-in user, "" when signed out
	Org     *ticketing.Organizer
	Role    account.Role
	Env     ticketing.Environment
	Loc     *time.Location
	Message string // a message key (T) shown in the page's alert
	Error   string // an error text from a service, shown as is
	Form    map[string]string
	Data    any
	Now     time.Time
	Passkey *passkeyOffer // nil: passkeys are off
}

// T translates a message key into the page's language; args fill its %s/%d.
func (v *view) T(key string, args ...any) string {
	m, ok := messages[key]
	if !ok {
		return key
	}
	s := m.en
	if v.Lang == "ru" {
		s = m.ru
	}
	if len(args) > 0 && strings.Contains(s, "%") {
		return fmt.Sprintf(s, args...)
	}
	return s
}

// Time shows t in the organizer's time zone (UTC outside one).
func (v *view) Time(t any) string {
	var at time.Time
	switch x := t.(type) {
	case time.Time:
		at = x
	case *time.Time:
		if x == nil {
			return "—"
		}
		at = *x
	default:
		return ""
	}
	loc := v.Loc
	if loc == nil {
		loc = time.UTC
	}
	return at.In(loc).Format("2006-01-02 15:04:05 MST")
}

// Can reports whether the member's role has permission p.
func (v *view) Can(p string) bool { return v.Role.Can(account.Permission(p)) }

// OrgPath is a path inside the current organizer (and environment when env is true).
func (v *view) OrgPath(rest string) string {
	return v.Base + "/o/" + v.Org.ID + "/" + string(v.Env) + rest
}

// OtherEnv is the environment the switch leads to.
func (v *view) OtherEnv() ticketing.Environment {
	if v.Env == ticketing.EnvLive {
		return ticketing.EnvTest
	}
	return ticketing.EnvLive
}

// view builds a page's view for r: language, the signed-in user if any.
func (s *Server) view(r *http.Request, sess *session) *view {
	v := &view{Lang: lang(r), Base: s.Settings.Path, Path: r.URL.Path, Env: ticketing.EnvTest, Now: s.Clock.Now(), Form: map[string]string{}}
	if sess != nil {
		v.Email = sess.Email
	}
	v.Passkey = s.passkeyOffer(r)
	return v
}

// Lang is a page's language for r (the scanner's pages follow the dashboard's rule).
func Lang(r *http.Request) string { return lang(r) }

// lang is the page's language: the lang cookie, else the browser's first
// of ru and en, else Russian.
func lang(r *http.Request) string {
	if c, err := r.Cookie("lang"); err == nil && (c.Value == "ru" || c.Value == "en") {
		return c.Value
	}
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag := strings.ToLower(strings.TrimSpace(strings.Split(part, ";")[0]))
		switch {
		case strings.HasPrefix(tag, "ru"):
			return "ru"
		case strings.HasPrefix(tag, "en"):
			return "en"
		}
	}
	return "ru"
}

// parsePages parses each page template with the layout.
func parsePages() map[string]*template.Template { return ParsePages(templateFS) }

// ParsePages parses each page of fsys's templates/*.html with its
// templates/layout.html (the dashboard's pages, the scanner's).
func ParsePages(fsys fs.FS) map[string]*template.Template {
	layout := template.Must(template.New("layout.html").ParseFS(fsys, "templates/layout.html"))
	names, err := fs.Glob(fsys, "templates/*.html")
	if err != nil {
		panic(err)
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		pages[name] = template.Must(template.Must(layout.Clone()).ParseFS(fsys, n))
	}
	return pages
}

// render writes page with v as an HTML response of status.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page string, v *view) {
	var b bytes.Buffer
	if err := s.pages[page].ExecuteTemplate(&b, "layout.html", v); err != nil {
		slog.ErrorContext(r.Context(), "render dashboard page", "page", page, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Language", v.Lang)
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
