package api

import (
	"net/http"
	"time"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// Webhook replays (docs/webhooks.md, Replay): POST
// /webhook-endpoints/{id}/replay queues every event of the log since a time
// for one endpoint; GET .../replays/{replay_id} reads its progress.

func (s *Server) replayWebhooks(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Since *int64 `json:"since"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.Since == nil {
		return ticketing.Invalid("since", "since is required: the Unix time (seconds) to replay the events from, at most 30 days ago")
	}
	ik, err := idempotencyKey(r, false)
	if err != nil {
		return err
	}
	c := callerOf(r.Context())
	rp, err := s.Webhooks.StartReplay(r.Context(), webhook.ReplayRequest{OrganizerID: c.key.OrganizerID, Environment: c.key.Environment,
		EndpointID: r.PathValue("id"), Since: time.Unix(*req.Since, 0), IdempotencyKey: ik})
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusAccepted, rp.Wire())
	return nil
}

func (s *Server) getWebhookReplay(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r.Context())
	rp, err := s.Webhooks.GetReplay(r.Context(), c.key.OrganizerID, c.key.Environment, r.PathValue("id"), r.PathValue("replay_id"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, rp.Wire())
	return nil
}
