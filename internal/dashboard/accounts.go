package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	tixauth "tix/internal/auth"
	"tix/internal/dashboard/account"
	"tix/internal/emailjobs"
	"tix/internal/ticketing"
)

func (s *Server) accountRoutes(mux *http.ServeMux, p string) {
	mux.HandleFunc("GET "+p+"/{$}", s.signedIn(s.home))
	mux.HandleFunc("GET "+p+"/signup", s.signupForm)
	mux.HandleFunc("POST "+p+"/signup", s.signup)
	mux.HandleFunc("GET "+p+"/verify", s.verify)
	mux.HandleFunc("GET "+p+"/signin", s.signinForm)
	mux.HandleFunc("POST "+p+"/signin", s.signin)
	mux.HandleFunc("POST "+p+"/signout", s.signout)
	mux.HandleFunc("GET "+p+"/reset", s.resetForm)
	mux.HandleFunc("POST "+p+"/reset", s.resetRequest)
	mux.HandleFunc("GET "+p+"/reset/confirm", s.resetConfirmForm)
	mux.HandleFunc("POST "+p+"/reset/confirm", s.resetConfirm)
	mux.HandleFunc("GET "+p+"/invite", s.inviteForm)
	mux.HandleFunc("POST "+p+"/invite", s.acceptInvite)
	mux.HandleFunc("GET "+p+"/lang/{lang}", s.setLang)
}

// TimeZones are the zones the sign-up form offers (Russia's, then UTC).
var TimeZones = []string{"Europe/Kaliningrad", "Europe/Moscow", "Europe/Samara", "Asia/Yekaterinburg", "Asia/Omsk",
	"Asia/Novosibirsk", "Asia/Krasnoyarsk", "Asia/Irkutsk", "Asia/Yakutsk", "Asia/Vladivostok", "Asia/Magadan",
	"Asia/Kamchatka", "UTC"}

// home lists the signed-in user's organizers (one: straight to it).
func (s *Server) home(w http.ResponseWriter, r *http.Request, sess *session) {
	ms, err := s.Accounts.Memberships(r.Context(), sess.Email)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	if len(ms) == 1 {
		s.redirect(w, r, "/o/"+ms[0].OrganizerID+"/test/")
		return
	}
	v := s.view(r, sess)
	v.Data = ms
	s.render(w, r, http.StatusOK, "home", v)
}

func (s *Server) signupForm(w http.ResponseWriter, r *http.Request) {
	v := s.view(r, nil)
	if !s.Settings.OpenSignup {
		v.Message = "signup.closed"
		s.render(w, r, http.StatusForbidden, "error", v)
		return
	}
	v.Form["time_zone"] = account.DefaultTimeZone
	v.Data = TimeZones
	s.render(w, r, http.StatusOK, "signup", v)
}

// signup creates a test-mode organizer with its owner and emails the
// verification link. An address that has an account gets an email saying
// so, and the page answers the same, so the form tells nobody which
// addresses have accounts.
func (s *Server) signup(w http.ResponseWriter, r *http.Request) {
	if !s.Settings.OpenSignup {
		s.fail(w, r, http.StatusForbidden, "signup.closed")
		return
	}
	v := s.view(r, nil)
	v.Data = TimeZones
	f := formValues(r, "org_name", "email", "password", "time_zone")
	v.Form = f
	addr := account.NormalizeEmail(f["email"])
	show := func(key string) {
		v.Message = key
		s.render(w, r, http.StatusBadRequest, "signup", v)
	}
	switch name := strings.TrimSpace(f["org_name"]); {
	case name == "" || utf8.RuneCountInString(name) > 100:
		show("signup.bad_name")
		return
	case !emailjobs.ValidAddress(addr):
		show("signup.bad_email")
		return
	case CheckPassword(f["password"]) != nil:
		show("password.rules")
		return
	case !validZone(f["time_zone"]):
		show("signup.bad_zone")
		return
	}
	now := s.Clock.Now().UTC()
	org := ticketing.Organizer{ID: "org_" + tixauth.RandomString("abcdefghijklmnopqrstuvwxyz0123456789", 12),
		Name: strings.TrimSpace(f["org_name"]), CreatedAt: now}
	u := account.User{Email: addr, PasswordHash: HashPassword(f["password"]), CreatedAt: now}
	m := account.Member{OrganizerID: org.ID, Email: addr, Role: account.Owner, AddedAt: now, AddedBy: "signup"}
	err := s.Accounts.SignUp(r.Context(), org, u, m, account.Settings{OrganizerID: org.ID, TimeZone: f["time_zone"]})
	switch {
	case errors.Is(err, account.ErrExists):
		s.sendLink(r, "", addr, emailjobs.CauseAccountExists, "/signin", "")
	case err != nil:
		s.internal(w, r, err)
		return
	default:
		s.audit(r, org.ID, addr, "account.signup", addr, "")
		s.emailLink(r, org.ID, account.Token{Purpose: account.PurposeVerify, Email: addr, CreatedAt: now, ExpiresAt: now.Add(s.Settings.VerifyTTL)},
			emailjobs.CauseAccountVerify, "/verify")
	}
	s.message(w, r, "signup.check_email", addr)
}

// message shows a page saying key about addr.
func (s *Server) message(w http.ResponseWriter, r *http.Request, key, addr string) {
	v := s.view(r, nil)
	v.Message, v.Form = key, map[string]string{"email": addr}
	s.render(w, r, http.StatusOK, "message", v)
}

func validZone(z string) bool {
	for _, t := range TimeZones {
		if t == z {
			return true
		}
	}
	return false
}

// emailLink stores a single-use link for t and emails it.
func (s *Server) emailLink(r *http.Request, org string, t account.Token, cause, path string) {
	secret, err := account.Link(r.Context(), s.Accounts, t)
	if err != nil {
		slog.ErrorContext(r.Context(), "dashboard link", "purpose", t.Purpose, "error", err)
		return
	}
	s.sendLink(r, org, t.Email, cause, path, secret)
}

func (s *Server) sendLink(r *http.Request, org, to, cause, path, secret string) {
	link := s.link(path)
	if secret != "" {
		link += "?t=" + secret
	}
	if s.Mail == nil {
		slog.WarnContext(r.Context(), "no email sender: the dashboard link is not sent", "cause", cause)
		return
	}
	if err := s.Mail.AccountEmail(r.Context(), org, to, cause, link); err != nil {
		slog.ErrorContext(r.Context(), "dashboard email", "cause", cause, "error", err)
	}
}

// takeLink takes the single-use link of secret for purpose; nil (and the
// error page shown) when it is unknown, used, expired or another purpose's.
func (s *Server) takeLink(w http.ResponseWriter, r *http.Request, secret, purpose string) *account.Token {
	return s.readLink(w, r, secret, purpose, s.Accounts.TakeToken)
}

// readLink reads (GetToken) or takes (TakeToken) the link of secret and
// checks its purpose and expiry, showing the error page when it fails.
func (s *Server) readLink(w http.ResponseWriter, r *http.Request, secret, purpose string,
	read func(ctx context.Context, hash string) (*account.Token, error)) *account.Token {
	var t *account.Token
	var err error
	if secret != "" && len(secret) <= 100 {
		t, err = read(r.Context(), account.HashSecret(secret))
	}
	if err != nil && !errors.Is(err, account.ErrNotFound) {
		s.internal(w, r, err)
		return nil
	}
	if t == nil || t.Purpose != purpose || !s.Clock.Now().Before(t.ExpiresAt) {
		s.fail(w, r, http.StatusBadRequest, "link.invalid")
		return nil
	}
	return t
}

// verify opens the verification link: the address is confirmed.
func (s *Server) verify(w http.ResponseWriter, r *http.Request) {
	t := s.takeLink(w, r, r.URL.Query().Get("t"), account.PurposeVerify)
	if t == nil {
		return
	}
	if err := s.Accounts.MarkVerified(r.Context(), t.Email, s.Clock.Now()); err != nil {
		s.internal(w, r, err)
		return
	}
	s.message(w, r, "verify.done", t.Email)
}

func (s *Server) signinForm(w http.ResponseWriter, r *http.Request) {
	v := s.view(r, nil)
	v.Form["next"] = s.nextPath(r.URL.Query().Get("next"))
	s.render(w, r, http.StatusOK, "signin", v)
}

// signin checks the password under the attempts' budgets and starts a new
// session. Every failure answers alike: the page does not tell an unknown
// address from a wrong password.
func (s *Server) signin(w http.ResponseWriter, r *http.Request) {
	f := formValues(r, "email", "password", "next")
	addr := account.NormalizeEmail(f["email"])
	v := s.view(r, nil)
	v.Form = map[string]string{"email": addr, "next": s.nextPath(f["next"])}
	if addr == "" || len(addr) > 320 || len(f["password"]) > MaxPassword {
		v.Message = "signin.failed"
		s.render(w, r, http.StatusUnauthorized, "signin", v)
		return
	}
	var tooMany errTooMany
	if err := s.admitSignIn(r.Context(), addr, clientIP(r)); errors.As(err, &tooMany) {
		w.Header().Set("Retry-After", strconv.Itoa(int(tooMany.retry.Seconds())+1))
		v.Message = "signin.too_many"
		s.render(w, r, http.StatusTooManyRequests, "signin", v)
		return
	} else if err != nil {
		s.internal(w, r, err)
		return
	}
	u, err := s.Accounts.GetUser(r.Context(), addr)
	if err != nil && !errors.Is(err, account.ErrNotFound) {
		s.internal(w, r, err)
		return
	}
	if u == nil && !VerifyNoAccount(f["password"]) || u != nil && !VerifyPassword(f["password"], u.PasswordHash) {
		v.Message = "signin.failed"
		s.render(w, r, http.StatusUnauthorized, "signin", v)
		return
	}
	if u.VerifiedAt == nil {
		now := s.Clock.Now().UTC()
		s.emailLink(r, "", account.Token{Purpose: account.PurposeVerify, Email: addr, CreatedAt: now, ExpiresAt: now.Add(s.Settings.VerifyTTL)},
			emailjobs.CauseAccountVerify, "/verify")
		v.Message = "signin.unverified"
		s.render(w, r, http.StatusForbidden, "signin", v)
		return
	}
	if err := s.startEpochSession(w, r, addr, u.SessionEpoch); err != nil {
		s.internal(w, r, err)
		return
	}
	s.auditAccount(r, addr, "account.signin", addr, "password")
	http.Redirect(w, r, v.Form["next"], http.StatusSeeOther)
}

func (s *Server) signout(w http.ResponseWriter, r *http.Request) {
	sess, err := s.currentSession(r)
	if err == nil {
		err = s.endSession(w, r, sess)
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.redirect(w, r, "/signin")
}

func (s *Server) resetForm(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "reset", s.view(r, nil))
}

// resetRequest emails a reset link to an address with an account; the page
// answers the same either way. Requests count on the sign-in budgets, so
// the form cannot flood an inbox.
func (s *Server) resetRequest(w http.ResponseWriter, r *http.Request) {
	addr := account.NormalizeEmail(formValues(r, "email")["email"])
	v := s.view(r, nil)
	v.Message, v.Form = "reset.sent", map[string]string{"email": addr}
	var tooMany errTooMany
	if err := s.admitSignIn(r.Context(), addr, clientIP(r)); errors.As(err, &tooMany) {
		v.Message = "signin.too_many"
		s.render(w, r, http.StatusTooManyRequests, "reset", v)
		return
	} else if err != nil {
		s.internal(w, r, err)
		return
	}
	if u, err := s.Accounts.GetUser(r.Context(), addr); err == nil {
		now := s.Clock.Now().UTC()
		s.emailLink(r, "", account.Token{Purpose: account.PurposeReset, Email: u.Email, CreatedAt: now, ExpiresAt: now.Add(s.Settings.ResetTTL)},
			emailjobs.CauseAccountReset, "/reset/confirm")
	} else if !errors.Is(err, account.ErrNotFound) {
		s.internal(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "message", v)
}

func (s *Server) resetConfirmForm(w http.ResponseWriter, r *http.Request) {
	v := s.view(r, nil)
	v.Form["t"] = r.URL.Query().Get("t")
	s.render(w, r, http.StatusOK, "reset_confirm", v)
}

// resetConfirm sets the new password (the link is taken only once the
// password is acceptable) and confirms the address, which the link proved.
func (s *Server) resetConfirm(w http.ResponseWriter, r *http.Request) {
	f := formValues(r, "t", "password")
	if CheckPassword(f["password"]) != nil {
		v := s.view(r, nil)
		v.Form["t"], v.Message = f["t"], "password.rules"
		s.render(w, r, http.StatusBadRequest, "reset_confirm", v)
		return
	}
	t := s.takeLink(w, r, f["t"], account.PurposeReset)
	if t == nil {
		return
	}
	err := s.Accounts.SetPassword(r.Context(), t.Email, HashPassword(f["password"]))
	if err == nil {
		err = s.Accounts.MarkVerified(r.Context(), t.Email, s.Clock.Now())
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.message(w, r, "reset.done", t.Email)
}

// setLang remembers the chosen language and goes back to the page.
func (s *Server) setLang(w http.ResponseWriter, r *http.Request) {
	l := r.PathValue("lang")
	if l != "ru" && l != "en" {
		s.notFound(w, r)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: "lang", Value: l, Path: s.Settings.Path, MaxAge: int((365 * 24 * time.Hour).Seconds()),
		HttpOnly: true, Secure: s.secure(), SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, s.nextPath(r.URL.Query().Get("back")), http.StatusSeeOther)
}

// formValues reads the named fields of a posted form (or the query).
func formValues(r *http.Request, names ...string) map[string]string {
	out := map[string]string{}
	for _, n := range names {
		out[n] = r.FormValue(n)
	}
	return out
}
