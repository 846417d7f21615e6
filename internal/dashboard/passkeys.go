package dashboard

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"tix/internal/dashboard/account"
)

// passkeyRoutes: the signed-in user's passkeys page, adding one (two JSON
// steps the passkey script drives), removing one, and signing in with one
// (passkey_signin.go). Without a relying party (passkeys off) they are 404.
func (s *Server) passkeyRoutes(mux *http.ServeMux, p string) {
	on := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if s.rp == nil {
				s.notFound(w, r)
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("GET "+p+"/account/passkeys", on(s.signedIn(s.passkeysPage)))
	mux.HandleFunc("POST "+p+"/account/passkeys/remove", on(s.signedIn(s.removePasskey)))
	mux.HandleFunc("POST "+p+"/passkeys/add/begin", on(s.signedIn(s.addPasskeyBegin)))
	mux.HandleFunc("POST "+p+"/passkeys/add/finish", on(s.signedIn(s.addPasskeyFinish)))
	mux.HandleFunc("POST "+p+"/passkeys/signin/begin", on(s.passkeySignInBegin))
	mux.HandleFunc("POST "+p+"/passkeys/signin/finish", on(s.passkeySignInFinish))
}

// maxPasskeyName is the longest passkey name, in characters;
// maxCredentialID the longest credential id, in bytes (WebAuthn §4).
const (
	maxPasskeyName  = 60
	maxCredentialID = 1023
)

// passkeysPage lists the user's passkeys with the forms to add and remove.
func (s *Server) passkeysPage(w http.ResponseWriter, r *http.Request, sess *session) {
	ps, err := s.Passkeys.ListPasskeys(r.Context(), sess.Email)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	v := s.view(r, sess)
	v.Loc = s.accountZone(r, sess.Email)
	switch r.URL.Query().Get("done") {
	case "added":
		v.Message = "passkey.added"
	case "removed":
		v.Message = "passkey.removed"
	}
	v.Data = ps
	s.render(w, r, http.StatusOK, "passkeys", v)
}

// accountZone is the time zone of the account's first organizer, for
// pages outside one (UTC when it has none or it cannot be read).
func (s *Server) accountZone(r *http.Request, email string) *time.Location {
	ms, err := s.Accounts.Memberships(r.Context(), email)
	if err != nil || len(ms) == 0 {
		return time.UTC
	}
	st, err := s.Accounts.GetSettings(r.Context(), ms[0].OrganizerID)
	if err != nil {
		return time.UTC
	}
	return st.Location()
}

// removePasskey deletes one of the user's passkeys; another account's id
// is not found.
func (s *Server) removePasskey(w http.ResponseWriter, r *http.Request, sess *session) {
	id := r.FormValue("id")
	var p *account.Passkey
	err := account.ErrNotFound
	if id != "" && len(id) <= base64.RawURLEncoding.EncodedLen(maxCredentialID) {
		p, err = s.Passkeys.GetPasskey(r.Context(), id)
	}
	if err == nil && p.Email == sess.Email {
		err = s.Passkeys.RemovePasskey(r.Context(), sess.Email, id)
	} else if err == nil {
		err = account.ErrNotFound
	}
	if errors.Is(err, account.ErrNotFound) {
		s.notFound(w, r)
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.auditAccount(r, sess.Email, "passkey.remove", id, p.Name)
	s.redirect(w, r, "/account/passkeys?done=removed")
}

// addPasskeyBegin checks the new passkey's name and answers the options
// of navigator.credentials.create: the account's user handle (the same
// for all its passkeys), its passkeys excluded (one per authenticator).
func (s *Server) addPasskeyBegin(w http.ResponseWriter, r *http.Request, sess *session) {
	name := strings.Join(strings.Fields(r.FormValue("name")), " ")
	if name == "" || utf8.RuneCountInString(name) > maxPasskeyName {
		s.passkeyFail(w, r, http.StatusBadRequest, "passkey.bad_name")
		return
	}
	ps, err := s.Passkeys.ListPasskeys(r.Context(), sess.Email)
	if err != nil {
		s.passkeyInternal(w, r, err)
		return
	}
	if len(ps) >= account.MaxPasskeys {
		s.passkeyFail(w, r, http.StatusBadRequest, "passkey.too_many")
		return
	}
	user, err := userOf(sess.Email, ps)
	if err != nil {
		s.passkeyInternal(w, r, err)
		return
	}
	var exclude []protocol.CredentialDescriptor
	for _, c := range user.creds {
		exclude = append(exclude, c.Descriptor())
	}
	opts, sd, err := s.rp.BeginRegistration(user, webauthn.WithExclusions(exclude))
	if err == nil {
		err = s.startCeremony(w, r, account.PurposePasskeyAdd, sess.Email, ceremony{Session: *sd, Name: name})
	}
	if err != nil {
		s.passkeyInternal(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, opts)
}

// userOf is the account as the library sees it: its passkeys' handle, or
// a new random one for its first passkey.
func userOf(email string, ps []account.Passkey) (passkeyUser, error) {
	u := passkeyUser{email: email}
	for _, p := range ps {
		c, err := credentialOf(p)
		if err != nil {
			return u, err
		}
		u.creds = append(u.creds, c)
		u.handle = p.UserHandle
	}
	if u.handle == nil {
		u.handle = make([]byte, 32)
		if _, err := rand.Read(u.handle); err != nil {
			return u, err
		}
	}
	return u, nil
}

// addPasskeyFinish verifies the new credential against this browser's
// ceremony (its challenge, the origin, the relying party, user presence
// and verification) and stores it under the account.
func (s *Server) addPasskeyFinish(w http.ResponseWriter, r *http.Request, sess *session) {
	t, cer, err := s.takeCeremony(w, r, account.PurposePasskeyAdd)
	if err == nil && t.Email != sess.Email {
		err = errCeremony
	}
	if err != nil {
		s.ceremonyFailed(w, r, err)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.passkeyFail(w, r, http.StatusBadRequest, "err.form")
		return
	}
	ctx := r.Context()
	parsed, err := protocol.ParseCredentialCreationResponseBytes(body)
	var cred *webauthn.Credential
	if err == nil {
		cred, err = s.rp.CreateCredential(passkeyUser{handle: cer.Session.UserID, email: sess.Email}, cer.Session, parsed)
	}
	if err != nil {
		slog.InfoContext(ctx, "passkey not added", "error", err)
		s.passkeyFail(w, r, http.StatusBadRequest, "passkey.add_failed")
		return
	}
	enc, err := json.Marshal(cred)
	if err != nil {
		s.passkeyInternal(w, r, err)
		return
	}
	p := account.Passkey{ID: base64.RawURLEncoding.EncodeToString(cred.ID), Email: sess.Email, Name: cer.Name,
		UserHandle: cer.Session.UserID, Credential: enc, SignCount: cred.Authenticator.SignCount,
		BackupState: cred.Flags.BackupState, CreatedAt: s.Clock.Now().UTC()}
	err = s.Passkeys.AddPasskey(ctx, p)
	if errors.Is(err, account.ErrExists) {
		s.passkeyFail(w, r, http.StatusConflict, "passkey.exists")
		return
	}
	if err != nil {
		s.passkeyInternal(w, r, err)
		return
	}
	s.auditAccount(r, sess.Email, "passkey.add", p.ID, p.Name)
	writeJSON(w, http.StatusOK, passkeyReply{Redirect: s.Settings.Path + "/account/passkeys?done=added"})
}

// auditAccount records an action on the account in the audit log of each
// organizer it is a member of (their owners read it).
func (s *Server) auditAccount(r *http.Request, email, action, target, detail string) {
	ms, err := s.Accounts.Memberships(r.Context(), email)
	if err != nil {
		slog.ErrorContext(r.Context(), "dashboard audit entry", "action", action, "error", err)
		return
	}
	for _, m := range ms {
		s.audit(r, m.OrganizerID, email, action, target, detail)
	}
}
