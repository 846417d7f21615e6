package dashboard

import (
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"tix/internal/dashboard/account"
)

// passkeySignInBegin answers the options of navigator.credentials.get for
// a discoverable credential: no account is named (the authenticator
// offers the passkeys it holds for this site). Starting counts on the
// client's sign-in budget, so the ceremonies' writes cannot be flooded.
func (s *Server) passkeySignInBegin(w http.ResponseWriter, r *http.Request) {
	if !s.passkeyAdmitted(w, r, s.admitClient(r.Context(), "passkey", clientIP(r))) {
		return
	}
	opts, sd, err := s.rp.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err == nil {
		err = s.startCeremony(w, r, account.PurposePasskeySignIn, "", ceremony{Session: *sd})
	}
	if err != nil {
		s.passkeyInternal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, opts)
}

// passkeySignInFinish verifies the assertion against this browser's
// ceremony and the stored passkey (signature, challenge, origin, relying
// party, user verification, the sign count moving forward) under the
// account's and the client's sign-in budgets, records the new count with a
// conditional write, and starts a new session as a password sign-in does.
// Every refusal answers alike: an unknown passkey, a bad signature, a
// replay.
func (s *Server) passkeySignInFinish(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	_, cer, err := s.takeCeremony(w, r, account.PurposePasskeySignIn)
	if err != nil {
		s.ceremonyFailed(w, r, err)
		return
	}
	body, err := io.ReadAll(r.Body)
	var parsed *protocol.ParsedCredentialAssertionData
	if err == nil {
		parsed, err = protocol.ParseCredentialRequestResponseBytes(body)
	}
	if err == nil && (len(parsed.RawID) == 0 || len(parsed.RawID) > maxCredentialID) {
		err = errors.New("credential id length")
	}
	if err != nil {
		s.passkeyFail(w, r, http.StatusBadRequest, "passkey.failed")
		return
	}
	id := base64.RawURLEncoding.EncodeToString(parsed.RawID)
	p, err := s.Passkeys.GetPasskey(ctx, id)
	if err != nil && !errors.Is(err, account.ErrNotFound) {
		s.passkeyInternal(w, r, err)
		return
	}
	budget := "passkey#" + id
	if p != nil {
		budget = p.Email
	}
	if !s.passkeyAdmitted(w, r, s.admitSignIn(ctx, budget, clientIP(r))) {
		return
	}
	if refused, err := s.checkAssertion(r, p, cer.Session, parsed); refused != nil {
		slog.InfoContext(ctx, "passkey sign-in refused", "passkey", id, "error", refused)
		s.passkeyFail(w, r, http.StatusUnauthorized, "passkey.failed")
		return
	} else if err != nil {
		s.passkeyInternal(w, r, err)
		return
	}
	if err := s.startSession(w, r, p.Email); err != nil {
		s.passkeyInternal(w, r, err)
		return
	}
	s.auditAccount(r, p.Email, "account.signin", p.Email, "passkey "+p.Name)
	writeJSON(w, http.StatusOK, passkeyReply{Redirect: s.nextPath(r.URL.Query().Get("next"))})
}

// checkAssertion verifies parsed against p (nil: unknown) and records the
// use. refused says why the sign-in is refused; err is a failure of ours.
func (s *Server) checkAssertion(r *http.Request, p *account.Passkey, sd webauthn.SessionData,
	parsed *protocol.ParsedCredentialAssertionData) (refused, err error) {
	ctx := r.Context()
	if p == nil {
		return errors.New("unknown credential"), nil
	}
	u, err := s.Accounts.GetUser(ctx, p.Email)
	if errors.Is(err, account.ErrNotFound) || err == nil && u.VerifiedAt == nil {
		return errors.New("no account with a verified address"), nil
	}
	if err != nil {
		return nil, err
	}
	cred, err := credentialOf(*p)
	if err != nil {
		return nil, err
	}
	user := passkeyUser{handle: p.UserHandle, email: p.Email, creds: []webauthn.Credential{cred}}
	_, got, err := s.rp.ValidatePasskeyLogin(func(_, _ []byte) (webauthn.User, error) { return user, nil }, sd, parsed)
	if err != nil {
		return err, nil
	}
	if got.Authenticator.CloneWarning {
		slog.WarnContext(ctx, "passkey sign count did not increase: a cloned authenticator or a replay", "passkey", p.ID, "email", p.Email)
		return errors.New("sign count did not increase"), nil
	}
	err = s.Passkeys.UsePasskey(ctx, p.Email, p.ID, account.PasskeyUse{PrevCount: p.SignCount,
		SignCount: got.Authenticator.SignCount, BackupState: got.Flags.BackupState, At: s.Clock.Now()})
	if errors.Is(err, account.ErrChanged) {
		return errors.New("used or removed meanwhile"), nil
	}
	return nil, err
}

// passkeyAdmitted answers a refused budget (429 with Retry-After) or a
// failure to count (500); false when it answered.
func (s *Server) passkeyAdmitted(w http.ResponseWriter, r *http.Request, err error) bool {
	var tooMany errTooMany
	switch {
	case errors.As(err, &tooMany):
		w.Header().Set("Retry-After", strconv.Itoa(int(tooMany.retry.Seconds())+1))
		s.passkeyFail(w, r, http.StatusTooManyRequests, "signin.too_many")
	case err != nil:
		s.passkeyInternal(w, r, err)
	}
	return err == nil
}
