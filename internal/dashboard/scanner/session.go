package scanner

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The session cookie holds, sealed with AES-256-GCM (the keyring of the
// webhook secrets), the key's hash (never its secret: the cookie cannot be
// used as an API key), the session's end and its CSRF token. It is
// HttpOnly, so the page's scripts never read it; the page sends the token,
// which it got in the page, in a header of each JSON request.

// sessionAAD binds a sealed session to its use.
const sessionAAD = "tix.scanner.session.v1"

// csrfHeader carries the session's CSRF token on the JSON endpoints.
const csrfHeader = "X-Tix-Scanner-Csrf"

type cookieSession struct {
	hash string
	csrf string
}

// cookieName: __Secure- (only over HTTPS) except on plain local HTTP.
func (s *Server) cookieName() string {
	if s.Secure {
		return "__Secure-tix_scanner"
	}
	return "tix_scanner"
}

func (s *Server) setSession(w http.ResponseWriter, hash string) error {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	until := s.Clock.Now().Add(s.SessionTTL).Unix()
	sealed, err := s.Box.Seal(hash+"|"+strconv.FormatInt(until, 10)+"|"+base64.RawURLEncoding.EncodeToString(b), sessionAAD)
	if err != nil {
		return err
	}
	s.cookie(w, sealed, int(s.SessionTTL.Seconds()))
	return nil
}

func (s *Server) cookie(w http.ResponseWriter, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: value, Path: s.Path() + "/", MaxAge: maxAge,
		HttpOnly: true, Secure: s.Secure, SameSite: http.SameSiteStrictMode})
}

// readCookie opens the request's session; false when it has none, it was
// altered or sealed elsewhere, or it ended.
func (s *Server) readCookie(r *http.Request) (cookieSession, bool) {
	c, err := r.Cookie(s.cookieName())
	if err != nil || c.Value == "" || len(c.Value) > 1000 {
		return cookieSession{}, false
	}
	plain, err := s.Box.Open(c.Value, sessionAAD)
	if err != nil {
		return cookieSession{}, false
	}
	parts := strings.Split(plain, "|")
	if len(parts) != 3 {
		return cookieSession{}, false
	}
	until, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || !s.Clock.Now().Before(time.Unix(until, 0)) {
		return cookieSession{}, false
	}
	return cookieSession{hash: parts[0], csrf: parts[2]}, true
}
