package dashboard

import (
	"context"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"tix/internal/dashboard/account"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// The "Replay events" form of a webhook endpoint's page (docs/dashboard.md,
// Replaying events): the service call POST /webhook-endpoints/{id}/replay
// and tixctl webhooks replay make (webhook.Service.StartReplay, its 30-day
// window and its checks), then a page with the replay's progress.

// WebhookReplays starts and reads replays of the event log (*webhook.Service).
type WebhookReplays interface {
	StartReplay(ctx context.Context, in webhook.ReplayRequest) (*webhook.Replay, error)
	GetReplay(ctx context.Context, org string, env ticketing.Environment, endpointID, id string) (*webhook.Replay, error)
}

func (s *Server) replayRoutes(mux *http.ServeMux, o string) {
	mux.HandleFunc("POST "+o+"/webhooks/{id}/replay", s.inOrg(account.ManageAPI, s.startReplay))
	mux.HandleFunc("GET "+o+"/webhooks/{id}/replays/{replay}", s.inOrg(account.ManageAPI, s.replayPage))
}

// localMinute is the datetime-local inputs' format (the organizer's time zone).
const localMinute = "2006-01-02T15:04"

// replayForm is the form as the endpoint's page shows it: a fresh token
// (a double submit of one form is one replay), the bounds of since in the
// organizer's time zone, and what was sent with its error after a refusal.
type replayForm struct {
	Token, Min, Max, Since string
	Zone                   string // the organizer's time zone
	Error                  string // a message key
}

// replayFormFor is the form for the page v (nil: replays are not wired).
func (s *Server) replayFormFor(v *view) *replayForm {
	if s.Replays == nil {
		return nil
	}
	now := s.Clock.Now().In(v.location())
	// The oldest minute the window still holds when the form is sent a few
	// minutes later; the service checks the exact bound.
	oldest := now.Add(-webhook.ReplayWindow).Add(10 * time.Minute)
	return &replayForm{Token: account.NewSecret(), Min: oldest.Format(localMinute), Max: now.Format(localMinute), Zone: now.Location().String()}
}

// location is the organizer's time zone (UTC outside one).
func (v *view) location() *time.Location {
	if v.Loc == nil {
		return time.UTC
	}
	return v.Loc
}

// formToken is a replay form's token (account.NewSecret's shape).
var formToken = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// startReplay starts a replay of the endpoint since the form's time, named
// by the form's token and that time: the same form sent twice answers the
// same replay, a new since is a new replay. It then shows the progress page
// (303, so reloading it never starts another).
func (s *Server) startReplay(w http.ResponseWriter, r *http.Request, o *orgReq) {
	ep := s.replayEndpoint(w, r, o)
	if ep == nil {
		return
	}
	f := formValues(r, "since", "token")
	refuse := func(key string, status int) {
		form := s.replayFormFor(o.v)
		form.Since, form.Error = f["since"], key
		s.showEndpointReplay(w, r, o, ep, form, status)
	}
	if !formToken.MatchString(f["token"]) {
		refuse("replay.bad_token", http.StatusBadRequest)
		return
	}
	since, err := time.ParseInLocation(localMinute, strings.TrimSpace(f["since"]), o.v.location())
	if err != nil {
		refuse("replay.bad_since", http.StatusBadRequest)
		return
	}
	rp, err := s.Replays.StartReplay(r.Context(), webhook.ReplayRequest{OrganizerID: o.org(), Environment: o.env(), EndpointID: ep.ID,
		Since: since, IdempotencyKey: "dashboard:" + f["token"] + ":" + strconv.FormatInt(since.Unix(), 10)})
	switch {
	case fieldError(err) == "since" && since.After(s.Clock.Now()):
		refuse("replay.future", http.StatusBadRequest)
	case fieldError(err) == "since":
		refuse("replay.too_old", http.StatusBadRequest)
	case ticketing.IsCode(err, ticketing.CodeConflict):
		refuse("replay.not_receiving", http.StatusConflict)
	case err != nil:
		s.serviceError(w, r, err, func(msg string, status int) { o.v.Error = msg; s.showEndpointReplay(w, r, o, ep, nil, status) })
	default:
		s.did(r, o, "webhook.replay", ep.ID, rp.ID+" since "+rp.Since.Format(time.RFC3339))
		s.redirect(w, r, "/o/"+o.org()+"/"+string(o.env())+"/webhooks/"+ep.ID+"/replays/"+rp.ID)
	}
}

// replayEndpoint reads the path's endpoint when replays are wired (nil:
// answered, not found).
func (s *Server) replayEndpoint(w http.ResponseWriter, r *http.Request, o *orgReq) *webhook.Endpoint {
	if s.Replays == nil {
		s.notFound(w, r)
		return nil
	}
	return s.endpoint(w, r, o)
}

// showEndpointReplay shows the endpoint's page with the replay form as sent.
func (s *Server) showEndpointReplay(w http.ResponseWriter, r *http.Request, o *orgReq, ep *webhook.Endpoint, form *replayForm, status int) {
	s.showEndpointWith(w, r, o, ep, endpointData{Replay: form}, status)
}

// replayPage shows a replay's progress: reloading it reads the replay again.
func (s *Server) replayPage(w http.ResponseWriter, r *http.Request, o *orgReq) {
	ep := s.replayEndpoint(w, r, o)
	if ep == nil {
		return
	}
	rp, err := s.Replays.GetReplay(r.Context(), o.org(), o.env(), ep.ID, r.PathValue("replay"))
	if err != nil {
		s.serviceError(w, r, err, func(msg string, status int) { o.v.Error = msg; s.render(w, r, status, "error", o.v) })
		return
	}
	o.v.Data = struct {
		Endpoint *webhook.Endpoint
		Replay   *webhook.Replay
	}{ep, rp}
	s.render(w, r, http.StatusOK, "replay", o.v)
}
