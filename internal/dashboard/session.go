package dashboard

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"tix/internal/dashboard/account"
)

// session is a signed-in browser: the stored session and its id's hash.
type session struct {
	Hash string
	account.Session
}

// cookieName is the session cookie's name: __Host- (Secure, Path=/, no
// Domain, so no other host or path can set it) except on plain local HTTP.
func (s *Server) cookieName() string {
	if s.secure() {
		return "__Host-tix_dashboard"
	}
	return "tix_dashboard"
}

// currentSession is the request's live session, nil when it has none (no
// cookie, an unknown, ended or expired one, or one started before the
// user's password last changed: a reset ends every session).
func (s *Server) currentSession(r *http.Request) (*session, error) {
	c, err := r.Cookie(s.cookieName())
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return nil, nil
	}
	hash := account.HashSecret(c.Value)
	st, err := s.Accounts.GetSession(r.Context(), hash)
	if errors.Is(err, account.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !s.Clock.Now().Before(st.ExpiresAt) {
		return nil, nil
	}
	u, err := s.Accounts.GetUser(r.Context(), st.Email)
	if errors.Is(err, account.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if u.SessionEpoch != st.Epoch {
		return nil, nil
	}
	return &session{Hash: hash, Session: *st}, nil
}

// startSession signs email in under the user's current session epoch.
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, email string) error {
	u, err := s.Accounts.GetUser(r.Context(), email)
	if err != nil {
		return err
	}
	return s.startEpochSession(w, r, email, u.SessionEpoch)
}

// startEpochSession signs email in: whatever session id the browser
// presented is ended, and a new random one is issued (a session id fixed
// before sign-in is never the signed-in one). The session carries epoch,
// the user's as read before its password was checked: a password reset
// since then ends it too.
func (s *Server) startEpochSession(w http.ResponseWriter, r *http.Request, email string, epoch int) error {
	if c, err := r.Cookie(s.cookieName()); err == nil && c.Value != "" && len(c.Value) <= 100 {
		if err := s.Accounts.DeleteSession(r.Context(), account.HashSecret(c.Value)); err != nil {
			return err
		}
	}
	id := account.NewSecret()
	now := s.Clock.Now().UTC()
	st := account.Session{Email: email, CreatedAt: now, ExpiresAt: now.Add(s.Settings.SessionTTL), IP: clientIP(r), Epoch: epoch}
	if err := s.Accounts.CreateSession(r.Context(), account.HashSecret(id), st); err != nil {
		return err
	}
	s.setCookie(w, id, s.Settings.SessionTTL)
	return nil
}

func (s *Server) setCookie(w http.ResponseWriter, value string, ttl time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: value, Path: "/", MaxAge: int(ttl.Seconds()),
		HttpOnly: true, Secure: s.secure(), SameSite: http.SameSiteLaxMode})
}

// endSession deletes the session server-side (its cookie, stolen or kept,
// no longer works) and clears the cookie.
func (s *Server) endSession(w http.ResponseWriter, r *http.Request, sess *session) error {
	if sess != nil {
		if err := s.Accounts.DeleteSession(r.Context(), sess.Hash); err != nil {
			return err
		}
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: s.secure(), SameSite: http.SameSiteLaxMode})
	return nil
}

// signedIn runs h with the request's session, or sends the browser to the
// sign-in page (back here afterwards).
func (s *Server) signedIn(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, err := s.currentSession(r)
		if err != nil {
			s.internal(w, r, err)
			return
		}
		if sess == nil {
			if r.Method == http.MethodGet {
				s.redirect(w, r, "/signin?next="+r.URL.EscapedPath())
				return
			}
			s.fail(w, r, http.StatusUnauthorized, "err.signedout")
			return
		}
		h(w, r, sess)
	}
}

// nextPath is where to go after signing in: a dashboard path from the
// form, never another site.
func (s *Server) nextPath(next string) string {
	if strings.HasPrefix(next, s.Settings.Path+"/") && !strings.HasPrefix(next, "//") && !strings.ContainsAny(next, "\\\r\n") {
		return next
	}
	return s.Settings.Path + "/"
}

// errTooMany: the attempts' budget is spent until the window ends.
type errTooMany struct{ retry time.Duration }

func (e errTooMany) Error() string { return "too many attempts" }

// admitSignIn counts a sign-in attempt on the account's and the client's
// budgets (conditional counters shared by every process): past SlowAfter
// attempts it waits, past a limit it refuses until the window ends.
func (s *Server) admitSignIn(ctx context.Context, email, ip string) error {
	st := s.Settings
	now, win, end := s.signInWindow()
	used, ok, err := s.Counter.CountRequest(ctx, "dash#signin#acct#"+account.HashSecret(email)[:32]+"#"+win, st.AccountLimit, end)
	if err != nil {
		return err
	}
	if ok {
		_, ok, err = s.Counter.CountRequest(ctx, "dash#signin#ip#"+ip+"#"+win, st.ClientLimit, end)
		if err != nil {
			return err
		}
	}
	if !ok {
		return errTooMany{retry: end.Sub(now)}
	}
	if over := used - st.SlowAfter; over > 0 {
		d := min(time.Duration(over)*st.SlowDelay, st.MaxDelay)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// signInWindow is the current sign-in window: now, its name in the
// counters' keys, and when it ends.
func (s *Server) signInWindow() (now time.Time, win string, end time.Time) {
	now = s.Clock.Now()
	start := now.Truncate(s.Settings.SignInWindow)
	return now, strconv.FormatInt(start.Unix(), 10), start.Add(s.Settings.SignInWindow)
}

// admitClient counts an attempt of kind on the client's budget alone
// (ClientLimit per window): for steps that name no account yet.
func (s *Server) admitClient(ctx context.Context, kind, ip string) error {
	now, win, end := s.signInWindow()
	_, ok, err := s.Counter.CountRequest(ctx, "dash#"+kind+"#ip#"+ip+"#"+win, s.Settings.ClientLimit, end)
	if err != nil {
		return err
	}
	if !ok {
		return errTooMany{retry: end.Sub(now)}
	}
	return nil
}
