package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"tix/internal/config"
	"tix/internal/dashboard/account"
)

// passkeyParty is the passkeys' relying party id and origins: the
// configured ones (TIX_WEBAUTHN_RP_ID, TIX_WEBAUTHN_ORIGINS), else the
// public URL's host and origin. Browsers refuse an IP address as a relying
// party, so a loopback address (the local stack's 127.0.0.1) becomes
// localhost, which browsers treat as a secure context on plain HTTP; any
// other IP address needs TIX_WEBAUTHN_RP_ID.
func passkeyParty(publicURL, rpID string, origins []string) (string, []string, error) {
	u, err := url.Parse(publicURL)
	if err != nil || u.Host == "" {
		if rpID == "" || len(origins) == 0 {
			return "", nil, errors.New("TIX_PUBLIC_URL is not set: set it, or TIX_WEBAUTHN_RP_ID and TIX_WEBAUTHN_ORIGINS")
		}
		u = &url.URL{}
	}
	host := strings.ToLower(u.Hostname())
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		host = "localhost"
	}
	if rpID == "" {
		rpID = host
	}
	if err := config.CheckRPID(rpID); err != nil {
		return "", nil, fmt.Errorf("the passkeys' relying party %q: %w (set TIX_WEBAUTHN_RP_ID)", rpID, err)
	}
	if len(origins) == 0 {
		o := u.Scheme + "://" + host
		if p := u.Port(); p != "" {
			o += ":" + p
		}
		origins = []string{o}
	}
	for _, o := range origins {
		if err := config.CheckOrigin(o, rpID); err != nil {
			return "", nil, fmt.Errorf("the passkeys' origin %q: %w (set TIX_WEBAUTHN_ORIGINS)", o, err)
		}
	}
	return rpID, origins, nil
}

// relyingParty is the WebAuthn relying party of the settings: passkeys
// are discoverable credentials (sign-in names no account) and verify the
// user (a PIN or biometrics: the passkey replaces the password, not a
// second factor); no attestation is asked for.
func relyingParty(st Settings) (*webauthn.WebAuthn, error) {
	id, origins, err := passkeyParty(st.PublicURL, st.PasskeyRPID, st.PasskeyOrigins)
	if err != nil {
		return nil, err
	}
	return webauthn.New(&webauthn.Config{
		RPID: id, RPDisplayName: "tix", RPOrigins: origins,
		AttestationPreference: protocol.PreferNoAttestation,
		AuthenticatorSelection: protocol.AuthenticatorSelection{ResidentKey: protocol.ResidentKeyRequirementRequired,
			RequireResidentKey: protocol.ResidentKeyRequired(), UserVerification: protocol.VerificationRequired},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Timeout: st.PasskeyTTL, TimeoutUVD: st.PasskeyTTL},
			Registration: webauthn.TimeoutConfig{Timeout: st.PasskeyTTL, TimeoutUVD: st.PasskeyTTL},
		},
	})
}

// startPasskeys sets up the relying party when there is a passkey store;
// a relying party the settings cannot make turns passkeys off, logged.
func (s *Server) startPasskeys() {
	s.rp = nil
	if s.Passkeys == nil {
		return
	}
	rp, err := relyingParty(s.Settings)
	if err != nil {
		slog.Warn("dashboard passkeys are off", "error", err)
		return
	}
	s.rp = rp
}

// passkeyUser is an account as the WebAuthn library sees it.
type passkeyUser struct {
	handle []byte
	email  string
	creds  []webauthn.Credential
}

func (u passkeyUser) WebAuthnID() []byte                         { return u.handle }
func (u passkeyUser) WebAuthnName() string                       { return u.email }
func (u passkeyUser) WebAuthnDisplayName() string                { return u.email }
func (u passkeyUser) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// credentialOf is a stored passkey's credential record with its current
// sign count and backup state.
func credentialOf(p account.Passkey) (webauthn.Credential, error) {
	var c webauthn.Credential
	if err := json.Unmarshal(p.Credential, &c); err != nil {
		return c, fmt.Errorf("decode passkey %s: %w", p.ID, err)
	}
	c.Authenticator.SignCount, c.Flags.BackupState = p.SignCount, p.BackupState
	return c, nil
}

// ceremony is a passkey ceremony's server-side state: the library's
// session data (its challenge) and, when adding, the passkey's name.
type ceremony struct {
	Session webauthn.SessionData `json:"session"`
	Name    string               `json:"name,omitempty"`
}

// ceremonyCookie holds the secret of the browser's ceremony in progress:
// only the paths of the ceremonies get it, never a script.
func (s *Server) ceremonyCookie() string {
	if s.secure() {
		return "__Secure-tix_passkey"
	}
	return "tix_passkey"
}

func (s *Server) setCeremonyCookie(w http.ResponseWriter, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: s.ceremonyCookie(), Value: value, Path: s.Settings.Path + "/passkeys/", MaxAge: maxAge,
		HttpOnly: true, Secure: s.secure(), SameSite: http.SameSiteStrictMode})
}

// startCeremony stores the ceremony's state for a few minutes (a
// single-use token under the hash of a random secret) and gives the
// browser the secret in a cookie: the challenge is never trusted from the
// client, and only this browser can finish the ceremony.
func (s *Server) startCeremony(w http.ResponseWriter, r *http.Request, purpose, email string, c ceremony) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	now := s.Clock.Now().UTC()
	secret, err := account.Link(r.Context(), s.Accounts, account.Token{Purpose: purpose, Email: email, Data: string(data),
		CreatedAt: now, ExpiresAt: now.Add(s.Settings.PasskeyTTL)})
	if err != nil {
		return err
	}
	s.setCeremonyCookie(w, secret, int(s.Settings.PasskeyTTL.Seconds())+1)
	return nil
}

// errCeremony: the browser has no live ceremony of that purpose (none
// started, already finished, expired, or another browser's).
var errCeremony = errors.New("no passkey ceremony in progress")

// takeCeremony takes the browser's ceremony (once: a second finish with
// the same cookie finds nothing) and clears its cookie.
func (s *Server) takeCeremony(w http.ResponseWriter, r *http.Request, purpose string) (*account.Token, *ceremony, error) {
	c, err := r.Cookie(s.ceremonyCookie())
	s.setCeremonyCookie(w, "", -1)
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		return nil, nil, errCeremony
	}
	t, err := s.Accounts.TakeToken(r.Context(), account.HashSecret(c.Value))
	if errors.Is(err, account.ErrNotFound) {
		return nil, nil, errCeremony
	}
	if err != nil {
		return nil, nil, err
	}
	if t.Purpose != purpose || !s.Clock.Now().Before(t.ExpiresAt) {
		return nil, nil, errCeremony
	}
	var cer ceremony
	if err := json.Unmarshal([]byte(t.Data), &cer); err != nil {
		return nil, nil, fmt.Errorf("decode passkey ceremony: %w", err)
	}
	return t, &cer, nil
}

// passkeyReply is the JSON the passkey script reads: where to go next,
// or what went wrong (in the page's language).
type passkeyReply struct {
	Redirect string `json:"redirect,omitempty"`
	Error    string `json:"error,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// passkeyFail answers the script with a message key's text.
func (s *Server) passkeyFail(w http.ResponseWriter, r *http.Request, status int, key string) {
	writeJSON(w, status, passkeyReply{Error: s.view(r, nil).T(key)})
}

// ceremonyFailed answers a failed takeCeremony.
func (s *Server) ceremonyFailed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errCeremony) {
		s.passkeyFail(w, r, http.StatusBadRequest, "passkey.expired")
		return
	}
	s.passkeyInternal(w, r, err)
}

func (s *Server) passkeyInternal(w http.ResponseWriter, r *http.Request, err error) {
	slog.ErrorContext(r.Context(), "dashboard passkey", "path", r.URL.Path, "error", err)
	s.passkeyFail(w, r, http.StatusInternalServerError, "err.internal")
}

// passkeyOffer is what a page needs to offer passkeys: the origins they
// work from (the script shows the passkey buttons only there) and this
// page's address on the first of them, for the hint shown elsewhere.
type passkeyOffer struct {
	Origins   string
	Elsewhere string
}

// passkeyOffer is nil when passkeys are off.
func (s *Server) passkeyOffer(r *http.Request) *passkeyOffer {
	if s.rp == nil {
		return nil
	}
	origins := s.rp.Config.RPOrigins
	return &passkeyOffer{Origins: strings.Join(origins, " "), Elsewhere: origins[0] + r.URL.Path}
}
