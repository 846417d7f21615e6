package scanner

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"tix/internal/auth"
	"tix/internal/dashboard"
	"tix/internal/ticketing"
)

// view is what the scanner's templates read.
type view struct {
	Lang    string
	Base    string // the dashboard's path: its language switch
	Path    string // the scanner's path
	Back    string // the request's path, for the language switch
	Message string // a message key shown in the page's alert
	Key     string // the signed-in key's name and last four
	Env     ticketing.Environment
	Doors   []doorChoice
	CSRF    string
}

// T translates a message key into the page's language.
func (v *view) T(key string) string {
	m, ok := messages[key]
	switch {
	case !ok:
		return key
	case v.Lang == "ru":
		return m.ru
	}
	return m.en
}

// Texts are the page script's texts (its answers, its states) in the page's language.
func (v *view) Texts() map[string]string {
	out := map[string]string{}
	for k := range messages {
		if strings.HasPrefix(k, "js.") {
			out[strings.TrimPrefix(k, "js.")] = v.T(k)
		}
	}
	return out
}

// doorChoice is one entry of the door's event choice: an event, or one
// occurrence of a series (Value "evt_...|occ_...").
type doorChoice struct{ Value, Label string }

// doorChoices lists the events, and the series' occurrences not yet
// ended, each with its start in the event's time zone.
func doorChoices(events []*ticketing.Event, now time.Time) []doorChoice {
	var out []doorChoice
	for _, e := range events {
		loc, err := time.LoadLocation(e.Timezone)
		if err != nil || e.Timezone == "" {
			loc = time.UTC
		}
		if len(e.Occurrences) == 0 {
			out = append(out, doorChoice{e.ID, e.Title + " · " + e.StartsAt.In(loc).Format("2006-01-02 15:04")})
		}
		for _, o := range e.Occurrences {
			if o.EndsAt.After(now) {
				out = append(out, doorChoice{e.ID + "|" + o.ID, e.Title + " · " + o.StartsAt.In(loc).Format("2006-01-02 15:04")})
			}
		}
	}
	return out
}

func (s *Server) view(r *http.Request) *view {
	return &view{Lang: dashboard.Lang(r), Base: s.Base, Path: s.Path(), Back: r.URL.Path, Env: ticketing.EnvTest}
}

// page is the scanner when signed in, else its sign-in form.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	d, err := s.current(r)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	v := s.view(r)
	if d == nil {
		s.render(w, r, http.StatusOK, "signin", v)
		return
	}
	events, err := s.doorEvents(r.Context(), d)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	v.Doors = doorChoices(events, s.Clock.Now())
	v.Key, v.Env, v.CSRF = d.key.Name+" ····"+d.key.Last4, d.key.Environment, d.csrf
	s.render(w, r, http.StatusOK, "scanner", v)
}

// signIn checks the typed check-in key and starts a session on it.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		v := s.view(r)
		v.Message = "err.key_format"
		s.render(w, r, http.StatusBadRequest, "signin", v)
		return
	}
	secret := strings.TrimSpace(r.PostForm.Get("key"))
	key, why, err := s.keyOf(r, secret)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if why != "" {
		v := s.view(r)
		v.Message = why
		s.render(w, r, http.StatusUnauthorized, "signin", v)
		return
	}
	if err := s.setSession(w, auth.Hash(secret)); err != nil {
		s.internal(w, r, err)
		return
	}
	slog.InfoContext(r.Context(), "scanner signed in", "organizer", key.OrganizerID, "key", key.ID)
	http.Redirect(w, r, s.Path()+"/", http.StatusSeeOther)
}

// signOut ends the browser's session (the key itself stays valid).
func (s *Server) signOut(w http.ResponseWriter, r *http.Request) {
	s.cookie(w, "", -1)
	w.Header().Set("Clear-Site-Data", `"storage"`) // the admission list and queued scans go with it
	http.Redirect(w, r, s.Path()+"/", http.StatusSeeOther)
}

// serviceWorker serves static/sw.js at the scanner's root, so that its
// scope is the whole scanner.
func (s *Server) serviceWorker(w http.ResponseWriter, r *http.Request) {
	b, err := staticFS.ReadFile("static/sw.js")
	if err != nil {
		s.internal(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, page string, v *view) {
	var b bytes.Buffer
	if err := s.pages[page].ExecuteTemplate(&b, "layout.html", v); err != nil {
		s.internal(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Language", v.Lang)
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
