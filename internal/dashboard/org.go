package dashboard

import (
	"errors"
	"log/slog"
	"net/http"

	"tix/internal/dashboard/account"
	"tix/internal/ticketing"
)

// orgReq is a request inside an organizer the signed-in user is a member of.
type orgReq struct {
	sess   *session
	member *account.Member
	v      *view
}

func (o *orgReq) org() string                { return o.v.Org.ID }
func (o *orgReq) env() ticketing.Environment { return o.v.Env }

func (s *Server) orgRoutes(mux *http.ServeMux, p string) {
	o := p + "/o/{org}/{env}"
	mux.HandleFunc("GET "+p+"/o/{org}/{$}", func(w http.ResponseWriter, r *http.Request) {
		s.redirect(w, r, "/o/"+r.PathValue("org")+"/test/")
	})
	s.overviewRoutes(mux, o)
	s.eventsRoutes(mux, o)
	mux.HandleFunc("GET "+o+"/api", s.inOrg(account.ManageAPI, s.apiPage))
	mux.HandleFunc("POST "+o+"/keys", s.inOrg(account.ManageAPI, s.createKey))
	mux.HandleFunc("POST "+o+"/keys/{id}/revoke", s.inOrg(account.ManageAPI, s.revokeKey))
	mux.HandleFunc("POST "+o+"/webhooks", s.inOrg(account.ManageAPI, s.createEndpoint))
	mux.HandleFunc("GET "+o+"/webhooks/{id}", s.inOrg(account.ManageAPI, s.endpointPage))
	mux.HandleFunc("POST "+o+"/webhooks/{id}/{action}", s.inOrg(account.ManageAPI, s.endpointAction))
	mux.HandleFunc("POST "+o+"/deliveries/{id}/redeliver", s.inOrg(account.ManageAPI, s.redeliver))
	mux.HandleFunc("GET "+o+"/members", s.inOrg(account.ManageMembers, s.membersPage))
	mux.HandleFunc("POST "+o+"/members", s.inOrg(account.ManageMembers, s.invite))
	mux.HandleFunc("POST "+o+"/members/remove", s.inOrg(account.ManageMembers, s.removeMember))
	mux.HandleFunc("GET "+o+"/audit", s.inOrg(account.ReadAudit, s.auditPage))
	s.ordersRoutes(mux, o)
	s.paymentRoutes(mux, o)
	s.settingsRoutes(mux, o)
	s.onsaleRoutes(mux, o)
	s.replayRoutes(mux, o)
}

// inOrg runs h for a member of the path's organizer whose role has perm.
// A non-member gets 404, exactly as for an organizer that does not exist
// (an id reveals nothing, as in the API); a member without the permission
// gets 403 naming its role.
func (s *Server) inOrg(perm account.Permission, h func(http.ResponseWriter, *http.Request, *orgReq)) http.HandlerFunc {
	return s.signedIn(func(w http.ResponseWriter, r *http.Request, sess *session) {
		env := ticketing.Environment(r.PathValue("env"))
		if !env.Valid() {
			s.notFound(w, r)
			return
		}
		ctx := r.Context()
		m, err := s.Accounts.GetMember(ctx, r.PathValue("org"), sess.Email)
		if errors.Is(err, account.ErrNotFound) {
			s.notFound(w, r)
			return
		}
		if err != nil {
			s.internal(w, r, err)
			return
		}
		org, err := s.Organizers.GetOrganizer(ctx, m.OrganizerID)
		if err != nil {
			s.internal(w, r, err)
			return
		}
		settings, err := s.Accounts.GetSettings(ctx, m.OrganizerID)
		if err != nil {
			s.internal(w, r, err)
			return
		}
		v := s.view(r, sess)
		v.Org, v.Role, v.Env, v.Loc = org, m.Role, env, settings.Location()
		s.orgLanguage(r, v)
		if !m.Role.Can(perm) {
			v.Message = "err.role"
			s.render(w, r, http.StatusForbidden, "error", v)
			return
		}
		h(w, r, &orgReq{sess: sess, member: m, v: v})
	})
}

// orgLanguage shows the organizer's language (its Settings page's, which
// its emails use too) to a member who has not picked one with the switch.
func (s *Server) orgLanguage(r *http.Request, v *view) {
	if _, err := r.Cookie("lang"); err == nil || s.Identities == nil {
		return
	}
	if id, err := s.Identities.GetIdentity(r.Context(), v.Org.ID); err == nil && id.Language != "" {
		v.Lang = id.Language
	}
}

// audit appends a line to the organizer's audit log; a failure is logged,
// the action it records is done.
func (s *Server) audit(r *http.Request, org, actor, action, target, detail string) {
	e := account.Entry{OrganizerID: org, At: s.Clock.Now().UTC(), Actor: actor, Action: action, Target: target, Detail: detail, IP: clientIP(r)}
	if err := s.Accounts.AddEntry(r.Context(), e); err != nil {
		slog.ErrorContext(r.Context(), "dashboard audit entry", "action", action, "error", err)
	}
}

func (s *Server) did(r *http.Request, o *orgReq, action, target, detail string) {
	s.audit(r, o.org(), o.sess.Email, action, target, detail)
}

func (s *Server) auditPage(w http.ResponseWriter, r *http.Request, o *orgReq) {
	es, err := s.Accounts.Entries(r.Context(), o.org(), 200)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	o.v.Data = es
	s.render(w, r, http.StatusOK, "audit", o.v)
}
