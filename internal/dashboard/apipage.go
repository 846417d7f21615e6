package dashboard

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"tix/internal/auth"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// The "API and webhooks" page (contract: keys and webhook endpoints are
// managed "in the organizer dashboard, section 'API and webhooks'").

// keyRow is a key as listed: never its secret.
type keyRow struct {
	auth.Key
	Status string // active, revoked, expired
}

type apiData struct {
	Keys        []keyRow
	Endpoints   []*webhook.Endpoint
	Scopes      []string
	EventTypes  []string
	NeedsVerify bool // live mode of an organizer that is not verified
}

func (s *Server) apiPage(w http.ResponseWriter, r *http.Request, o *orgReq) {
	s.showAPI(w, r, o, http.StatusOK)
}

func (s *Server) showAPI(w http.ResponseWriter, r *http.Request, o *orgReq, status int) {
	ctx := r.Context()
	keys, err := s.Keys.ListKeys(ctx, o.org())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	eps, err := s.Webhooks.Endpoints(ctx, o.org(), o.env())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	d := apiData{Endpoints: eps, Scopes: auth.AllScopes, EventTypes: webhook.EventTypes,
		NeedsVerify: o.env() == ticketing.EnvLive && !o.v.Org.Verified}
	now := s.Clock.Now()
	for _, k := range keys {
		if k.Environment != o.env() {
			continue
		}
		d.Keys = append(d.Keys, keyRow{Key: k, Status: k.Status(now)})
	}
	o.v.Data = d
	s.render(w, r, status, "api", o.v)
}

// lines splits a textarea or comma list into its trimmed non-empty values.
func lines(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == ',' || r == '\r' }) {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// createKey creates a key with auth.NewKey and the store's CreateKey, as
// tixctl keys create does, and shows its secret once.
func (s *Server) createKey(w http.ResponseWriter, r *http.Request, o *orgReq) {
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, http.StatusBadRequest, "err.form")
		return
	}
	f := r.PostForm
	o.v.Form = map[string]string{"type": f.Get("type"), "name": f.Get("name"), "origins": f.Get("origins"), "ips": f.Get("ips")}
	if o.env() == ticketing.EnvLive && !o.v.Org.Verified {
		o.v.Message = "api.live_unverified"
		s.showAPI(w, r, o, http.StatusConflict)
		return
	}
	now := s.Clock.Now()
	k, secret, hash, err := auth.NewKey(auth.KeyRequest{OrganizerID: o.org(), Type: auth.KeyType(f.Get("type")), Environment: o.env(),
		Name: strings.TrimSpace(f.Get("name")), Scopes: f["scopes"], Origins: lines(f.Get("origins")), IPs: lines(f.Get("ips"))}, now)
	if err == nil {
		err = s.Keys.CreateKey(r.Context(), k, hash)
	}
	if err != nil {
		s.serviceError(w, r, err, func(msg string, status int) {
			o.v.Error = msg
			s.showAPI(w, r, o, status)
		})
		return
	}
	s.did(r, o, "key.create", k.ID, string(k.Type)+"_"+string(k.Environment))
	o.v.Data = struct {
		Key    auth.Key
		Secret string
	}{k, secret}
	s.render(w, r, http.StatusCreated, "key_created", o.v)
}

// revokeKey revokes one of the organizer's keys of this environment, as
// tixctl keys revoke does (a live key's owners are told by email).
func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request, o *orgReq) {
	ctx := r.Context()
	keys, err := s.Keys.ListKeys(ctx, o.org())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	id := r.PathValue("id")
	if !slices.ContainsFunc(keys, func(k auth.Key) bool { return k.ID == id && k.Environment == o.env() }) {
		s.notFound(w, r)
		return
	}
	k, err := s.Keys.RevokeKey(ctx, id, s.Clock.Now())
	if err != nil {
		s.serviceError(w, r, err, func(msg string, status int) { o.v.Error = msg; s.showAPI(w, r, o, status) })
		return
	}
	if k.Environment == ticketing.EnvLive && s.Mail != nil {
		if _, err := s.Mail.LiveKeyRevoked(ctx, k.OrganizerID, k.ID, s.Clock.Now()); err != nil {
			s.internal(w, r, err)
			return
		}
	}
	s.did(r, o, "key.revoke", k.ID, "")
	s.redirect(w, r, "/o/"+o.org()+"/"+string(o.env())+"/api")
}

// secretData is a page that shows a new signing secret once.
type secretData struct {
	Endpoint   *webhook.Endpoint
	Secret     string
	SignsUntil *time.Time // the previous secret's end after a rotation
}

// createEndpoint registers an endpoint through the webhook service, as
// tixctl webhooks create does, and shows its signing secret once.
func (s *Server) createEndpoint(w http.ResponseWriter, r *http.Request, o *orgReq) {
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, http.StatusBadRequest, "err.form")
		return
	}
	f := r.PostForm
	o.v.Form = map[string]string{"url": f.Get("url"), "description": f.Get("description")}
	if o.env() == ticketing.EnvLive && !o.v.Org.Verified {
		o.v.Message = "api.live_unverified"
		s.showAPI(w, r, o, http.StatusConflict)
		return
	}
	in := webhook.NewEndpoint{OrganizerID: o.org(), Environment: o.env(), URL: strings.TrimSpace(f.Get("url")), EnabledEvents: f["events"]}
	if d := strings.TrimSpace(f.Get("description")); d != "" {
		in.Description = &d
	}
	ep, secret, err := s.Webhooks.CreateEndpoint(r.Context(), in)
	if err != nil {
		s.serviceError(w, r, err, func(msg string, status int) { o.v.Error = msg; s.showAPI(w, r, o, status) })
		return
	}
	s.did(r, o, "webhook.create", ep.ID, ep.URL)
	o.v.Data = secretData{Endpoint: ep, Secret: secret}
	s.render(w, r, http.StatusCreated, "endpoint_secret", o.v)
}

// endpoint reads the path's endpoint; another organizer's or environment's
// is not found, exactly like a missing one.
func (s *Server) endpoint(w http.ResponseWriter, r *http.Request, o *orgReq) *webhook.Endpoint {
	ep, err := s.Webhooks.GetEndpoint(r.Context(), r.PathValue("id"))
	if ticketing.IsCode(err, ticketing.CodeNotFound) || err == nil && (ep.OrganizerID != o.org() || ep.Environment != o.env()) {
		s.notFound(w, r)
		return nil
	}
	if err != nil {
		s.internal(w, r, err)
		return nil
	}
	return ep
}

type endpointData struct {
	Endpoint   *webhook.Endpoint
	Deliveries []*webhook.Delivery
	Result     *webhook.SendResult // the last Verify or Test press
	Action     string
	Replay     *replayForm // the "Replay events" form (replay.go); nil: none
}

func (s *Server) endpointPage(w http.ResponseWriter, r *http.Request, o *orgReq) {
	if ep := s.endpoint(w, r, o); ep != nil {
		s.showEndpoint(w, r, o, ep, nil, "", http.StatusOK)
	}
}

func (s *Server) showEndpoint(w http.ResponseWriter, r *http.Request, o *orgReq, ep *webhook.Endpoint, res *webhook.SendResult, action string, status int) {
	s.showEndpointWith(w, r, o, ep, endpointData{Result: res, Action: action}, status)
}

// showEndpointWith renders the endpoint's page with its last deliveries
// and d's result, action and replay form (a fresh one when d has none).
func (s *Server) showEndpointWith(w http.ResponseWriter, r *http.Request, o *orgReq, ep *webhook.Endpoint, d endpointData, status int) {
	page, err := s.Webhooks.Deliveries(r.Context(), webhook.DeliveryQuery{OrganizerID: o.org(), Environment: o.env(), EndpointID: ep.ID, Limit: 20})
	if err != nil {
		s.internal(w, r, err)
		return
	}
	d.Endpoint, d.Deliveries = ep, page.Deliveries
	if d.Replay == nil {
		d.Replay = s.replayFormFor(o.v)
	}
	o.v.Data = d
	s.render(w, r, status, "endpoint", o.v)
}

// endpointAction runs one of the endpoint's buttons through the webhook
// service: verify (ownership), test (webhook.test), rotate (a new secret;
// the old one signs for the overlap), disable, enable.
func (s *Server) endpointAction(w http.ResponseWriter, r *http.Request, o *orgReq) {
	ep := s.endpoint(w, r, o)
	if ep == nil {
		return
	}
	ctx, action := r.Context(), r.PathValue("action")
	var res *webhook.SendResult
	var err error
	switch action {
	case "verify":
		var sr webhook.SendResult
		if ep, sr, err = s.Webhooks.VerifyEndpoint(ctx, ep.ID); err == nil {
			res = &sr
		}
	case "test":
		var sr webhook.SendResult
		if sr, err = s.Webhooks.TestEndpoint(ctx, ep.ID); err == nil {
			res = &sr
		}
	case "rotate":
		var secret string
		if ep, secret, err = s.Webhooks.RotateSecret(ctx, ep.ID); err == nil {
			s.did(r, o, "webhook.rotate_secret", ep.ID, "")
			d := secretData{Endpoint: ep, Secret: secret}
			if ep.SecretRotatedAt != nil && s.Settings.SecretOverlap > 0 {
				until := ep.SecretRotatedAt.Add(s.Settings.SecretOverlap)
				d.SignsUntil = &until
			}
			o.v.Data = d
			s.render(w, r, http.StatusOK, "endpoint_secret", o.v)
			return
		}
	case "disable":
		ep, err = s.Webhooks.DisableEndpoint(ctx, ep.ID)
	case "enable":
		ep, err = s.Webhooks.EnableEndpoint(ctx, ep.ID)
	default:
		s.notFound(w, r)
		return
	}
	if err != nil {
		s.serviceError(w, r, err, func(msg string, status int) {
			o.v.Error = msg
			if cur := s.endpoint(w, r, o); cur != nil {
				s.showEndpoint(w, r, o, cur, nil, action, status)
			}
		})
		return
	}
	detail := ""
	if res != nil {
		detail = res.EnvelopeID
	}
	s.did(r, o, "webhook."+action, ep.ID, detail)
	s.showEndpoint(w, r, o, ep, res, action, http.StatusOK)
}

// redeliver sends a finished delivery again (the webhook service checks
// that it is this organizer environment's).
func (s *Server) redeliver(w http.ResponseWriter, r *http.Request, o *orgReq) {
	d, err := s.Webhooks.Redeliver(r.Context(), o.org(), o.env(), r.PathValue("id"))
	if err != nil {
		s.serviceError(w, r, err, func(msg string, status int) { o.v.Error = msg; s.showAPI(w, r, o, status) })
		return
	}
	s.did(r, o, "webhook.redeliver", d.ID, "")
	s.redirect(w, r, "/o/"+o.org()+"/"+string(o.env())+"/webhooks/"+d.EndpointID)
}
