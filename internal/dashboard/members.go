package dashboard

import (
	"context"
	"errors"
	"net/http"
	"time"

	"tix/internal/dashboard/account"
	"tix/internal/emailjobs"
)

func (s *Server) membersPage(w http.ResponseWriter, r *http.Request, o *orgReq) {
	s.showMembers(w, r, o, http.StatusOK)
}

func (s *Server) showMembers(w http.ResponseWriter, r *http.Request, o *orgReq, status int) {
	ms, err := s.Accounts.ListMembers(r.Context(), o.org())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	o.v.Data = struct {
		Members []account.Member
		Roles   []account.Role
	}{ms, account.Roles}
	s.render(w, r, status, "members", o.v)
}

// Invite stores an invitation of addr to org with role and returns the
// link's secret; the caller emails or prints <dashboard>/invite?t=<secret>.
// The owners' members page and tixctl organizers invite both use it.
func Invite(ctx context.Context, st account.Store, now time.Time, ttl time.Duration, org, addr string, role account.Role, by string) (string, error) {
	return account.Link(ctx, st, account.Token{Purpose: account.PurposeInvite, Email: addr, OrganizerID: org, Role: role,
		InvitedBy: by, CreatedAt: now.UTC(), ExpiresAt: now.UTC().Add(ttl)})
}

// invite emails an invitation to join the organizer with a role.
func (s *Server) invite(w http.ResponseWriter, r *http.Request, o *orgReq) {
	f := formValues(r, "email", "role")
	addr, role := account.NormalizeEmail(f["email"]), account.Role(f["role"])
	o.v.Form = f
	switch {
	case !emailjobs.ValidAddress(addr):
		o.v.Message = "signup.bad_email"
	case !role.Valid():
		o.v.Message = "members.bad_role"
	}
	if o.v.Message != "" {
		s.showMembers(w, r, o, http.StatusBadRequest)
		return
	}
	secret, err := Invite(r.Context(), s.Accounts, s.Clock.Now(), s.Settings.InviteTTL, o.org(), addr, role, o.sess.Email)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.sendLink(r, o.org(), addr, emailjobs.CauseMemberInvite, "/invite", secret)
	s.did(r, o, "member.invite", addr, string(role))
	o.v.Message, o.v.Form = "members.invited", map[string]string{"email": addr}
	s.showMembers(w, r, o, http.StatusOK)
}

// removeMember removes a member; an owner cannot remove itself (so an
// organizer always keeps an owner who can act).
func (s *Server) removeMember(w http.ResponseWriter, r *http.Request, o *orgReq) {
	addr := account.NormalizeEmail(formValues(r, "email")["email"])
	if addr == o.sess.Email {
		o.v.Message = "members.not_self"
		s.showMembers(w, r, o, http.StatusConflict)
		return
	}
	if err := s.Accounts.RemoveMember(r.Context(), o.org(), addr); errors.Is(err, account.ErrNotFound) {
		s.notFound(w, r)
		return
	} else if err != nil {
		s.internal(w, r, err)
		return
	}
	s.did(r, o, "member.remove", addr, "")
	s.redirect(w, r, "/o/"+o.org()+"/"+string(o.env())+"/members")
}

// inviteToken reads the invitation of the request's link without taking it.
func (s *Server) inviteToken(w http.ResponseWriter, r *http.Request, secret string) (*account.Token, *account.User, bool) {
	t := s.readLink(w, r, secret, account.PurposeInvite, s.Accounts.GetToken)
	if t == nil {
		return nil, nil, false
	}
	u, err := s.Accounts.GetUser(r.Context(), t.Email)
	if err != nil && !errors.Is(err, account.ErrNotFound) {
		s.internal(w, r, err)
		return nil, nil, false
	}
	return t, u, true
}

func (s *Server) inviteForm(w http.ResponseWriter, r *http.Request) {
	secret := r.URL.Query().Get("t")
	t, u, ok := s.inviteToken(w, r, secret)
	if !ok {
		return
	}
	v := s.view(r, nil)
	v.Form = map[string]string{"t": secret, "email": t.Email, "role": string(t.Role)}
	v.Data = u != nil
	s.render(w, r, http.StatusOK, "invite", v)
}

// acceptInvite joins the organizer: a new address sets its password (the
// link proved the address), an existing account confirms its own; then the
// link is taken (once) and the member signed in.
func (s *Server) acceptInvite(w http.ResponseWriter, r *http.Request) {
	f := formValues(r, "t", "password")
	t, u, ok := s.inviteToken(w, r, f["t"])
	if !ok {
		return
	}
	v := s.view(r, nil)
	v.Form = map[string]string{"t": f["t"], "email": t.Email, "role": string(t.Role)}
	v.Data = u != nil
	ctx := r.Context()
	now := s.Clock.Now().UTC()
	switch {
	case u != nil && !VerifyPassword(f["password"], u.PasswordHash):
		v.Message = "signin.failed"
	case u == nil && CheckPassword(f["password"]) != nil:
		v.Message = "password.rules"
	}
	if v.Message != "" {
		s.render(w, r, http.StatusBadRequest, "invite", v)
		return
	}
	if s.takeLink(w, r, f["t"], account.PurposeInvite) == nil {
		return
	}
	var err error
	if u == nil {
		// An account created for the address since the form was shown is
		// not this password's: refuse rather than sign in to it.
		err = s.Accounts.CreateUser(ctx, account.User{Email: t.Email, PasswordHash: HashPassword(f["password"]), VerifiedAt: &now, CreatedAt: now})
		if errors.Is(err, account.ErrExists) {
			s.fail(w, r, http.StatusConflict, "link.invalid")
			return
		}
	} else {
		err = s.Accounts.MarkVerified(ctx, t.Email, now)
	}
	if err == nil {
		err = s.Accounts.AddMember(ctx, account.Member{OrganizerID: t.OrganizerID, Email: t.Email, Role: t.Role, AddedAt: now, AddedBy: t.InvitedBy})
	}
	if err != nil && !errors.Is(err, account.ErrExists) {
		s.internal(w, r, err)
		return
	}
	s.audit(r, t.OrganizerID, t.Email, "member.join", t.Email, string(t.Role))
	if err := s.startSession(w, r, t.Email); err != nil {
		s.internal(w, r, err)
		return
	}
	s.redirect(w, r, "/o/"+t.OrganizerID+"/test/")
}
