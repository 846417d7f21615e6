package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"time"

	"tix/internal/ticketing"
)

// Replay (POST /webhook-endpoints/{id}/replay) sends an endpoint every event
// of the event log since a time again, as deliveries behind live traffic:
//
//   - The request writes the replay (one conditional put; an Idempotency-Key
//     names it, so a retry finds the same one) and queues its first page.
//   - A page message takes up to ReplayBatch events of the log (newest first,
//     since the replay's since, none newer than the replay), and gives each
//     event the endpoint subscribes to a delivery generation of this replay:
//     the existing delivery of that event and endpoint moves to a new
//     generation (its pending attempt, if any, becomes stale, so the event
//     arrives once), or a new delivery is written. Each delivery is written
//     in one transaction with the replay's queued counter (ADD 1), so the
//     count is exact whatever messages are repeated or run at once; a
//     delivery of this replay already is left alone.
//   - The page then moves the replay's cursor (conditional on the cursor it
//     read, so one of two copies of a message carries on) and queues the next
//     page after ReplayPause: a replay takes the queue in small batches.
//   - Its attempts go out only within ReplayShare of the outbound limits
//     (admitReplay): live attempts take the whole window, so a replay yields
//     to them. A delivery of the replay that leaves pending (delivered,
//     failed, skipped, or taken over by a later replay) adds 1 to done in the
//     same transaction as its save.

// replayStalled is how long a replay's cursor may stand still before a retry
// of its request (the same Idempotency-Key) queues its page again.
const replayStalled = time.Minute

// ReplayWindow is how far back a replay may start (the log keeps 90 days).
const ReplayWindow = 30 * 24 * time.Hour

// Replay statuses (derived: Replay.Status).
const (
	ReplayQueued  = "queued"
	ReplayRunning = "running"
	ReplayDone    = "done"
)

// Replay is one replay of the event log to an endpoint.
type Replay struct {
	ID          string
	OrganizerID string
	Environment ticketing.Environment
	EndpointID  string
	Since       time.Time
	// Key is the Idempotency-Key that named it ("" without one).
	Key string
	// Queued counts the deliveries it queued, Done those that left pending.
	Queued, Done int
	// Cursor is the event log's cursor of the next page ("" the first);
	// Started is set by the first page, Paged by the last.
	Cursor         string
	Started, Paged bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Status is queued until its first page, done once every page is queued and
// every delivery left pending, running in between.
func (r *Replay) Status() string {
	switch {
	case r.Paged && r.Done >= r.Queued:
		return ReplayDone
	case r.Started:
		return ReplayRunning
	}
	return ReplayQueued
}

// ReplayObject is a replay on the wire (the API's answers, tixctl --json).
type ReplayObject struct {
	ID         string `json:"id"`
	Object     string `json:"object"` // webhook_replay
	EndpointID string `json:"endpoint_id"`
	Since      int64  `json:"since"` // Unix seconds, as created
	Status     string `json:"status"`
	Queued     int    `json:"queued"`
	Done       int    `json:"done"`
	Created    int64  `json:"created"`
}

// Wire is r as ReplayObject.
func (r *Replay) Wire() ReplayObject {
	return ReplayObject{ID: r.ID, Object: "webhook_replay", EndpointID: r.EndpointID, Since: r.Since.Unix(),
		Status: r.Status(), Queued: r.Queued, Done: r.Done, Created: r.CreatedAt.Unix()}
}

// ReplayStore keeps replays and writes their deliveries with their counters.
type ReplayStore interface {
	// CreateReplay writes r unless a replay with its id exists: then it
	// returns that one and ErrStateChanged.
	CreateReplay(ctx context.Context, r *Replay) (*Replay, error)
	// GetReplay reads a replay (strongly consistent); ErrNotFound.
	GetReplay(ctx context.Context, id string) (*Replay, error)
	// QueueReplayDelivery writes d (a new delivery when d.Version is 0,
	// conditional on none existing, else conditional on d.Version) and adds 1
	// to the replay's queued counter, and 1 to done of the replay d leaves
	// (supersedes, "" none), in one transaction: ErrStateChanged when d changed.
	QueueReplayDelivery(ctx context.Context, d *Delivery, supersedes string) error
	// SaveReplayDelivery saves d as DeliveryStore.SaveDelivery does and, in
	// the same transaction, adds 1 to its replay's done counter.
	SaveReplayDelivery(ctx context.Context, d *Delivery) error
	// AdvanceReplay moves the cursor from from to to (conditional on from;
	// Started set, Paged when last): false when the cursor was not from.
	AdvanceReplay(ctx context.Context, id, from, to string, last bool, now time.Time) (bool, error)
}

// ReplayRequest is POST /webhook-endpoints/{id}/replay.
type ReplayRequest struct {
	OrganizerID    string
	Environment    ticketing.Environment
	EndpointID     string
	Since          time.Time
	IdempotencyKey string
}

// replayID names a replay: from its Idempotency-Key (the same key of the same
// endpoint is the same replay), else at random.
func replayID(in ReplayRequest) string {
	if in.IdempotencyKey == "" {
		return "wrp_" + randomID(24)
	}
	sum := sha256.Sum256([]byte(in.OrganizerID + "\x00" + string(in.Environment) + "\x00" + in.EndpointID + "\x00" + in.IdempotencyKey))
	return "wrp_" + hex.EncodeToString(sum[:12])
}

// StartReplay checks the request, writes the replay and queues its first
// page. A repeated Idempotency-Key answers the replay it made (the same
// since), or a conflict for another since.
func (s *Service) StartReplay(ctx context.Context, in ReplayRequest) (*Replay, error) {
	if s.Replays == nil {
		return nil, ticketing.Errorf(ticketing.CodeUnsupported, "webhook replays are not enabled here")
	}
	now := s.now()
	switch {
	case in.Since.After(now):
		return nil, ticketing.Invalid("since", "since is in the future: give a Unix time in the last 30 days")
	case in.Since.Before(now.Add(-ReplayWindow)):
		return nil, ticketing.Invalid("since", "since is more than 30 days ago: a replay reaches 30 days back at most")
	}
	ep, err := s.ownEndpoint(ctx, in.OrganizerID, in.Environment, in.EndpointID)
	if err != nil {
		return nil, err
	}
	if reason := notReceiving(ep); reason != "" {
		return nil, ticketing.Errorf(ticketing.CodeConflict, "%s: %s; enable or verify it in the dashboard, then replay", ep.ID, reason)
	}
	r := &Replay{ID: replayID(in), OrganizerID: in.OrganizerID, Environment: in.Environment, EndpointID: ep.ID,
		Since: in.Since.UTC().Truncate(time.Second), Key: in.IdempotencyKey, CreatedAt: now, UpdatedAt: now}
	old, err := s.Replays.CreateReplay(ctx, r)
	if errors.Is(err, ErrStateChanged) {
		if !old.Since.Equal(r.Since) {
			return nil, ticketing.Errorf(ticketing.CodeConflict, "this Idempotency-Key started replay %s since %d; use a new key for another since", old.ID, old.Since.Unix())
		}
		if !old.Paged && now.Sub(old.UpdatedAt) > replayStalled {
			s.sendReplayPage(ctx, old.ID, old.Cursor, 0) // its message was lost: carry on
		}
		return old, nil
	}
	if err != nil {
		return nil, err
	}
	s.sendReplayPage(ctx, r.ID, "", 0)
	return r, nil
}

// GetReplay reads a replay of the caller's endpoint (404 for anyone else's).
func (s *Service) GetReplay(ctx context.Context, org string, env ticketing.Environment, endpointID, id string) (*Replay, error) {
	if s.Replays == nil {
		return nil, ticketing.NotFound("webhook replay")
	}
	r, err := s.Replays.GetReplay(ctx, id)
	if errors.Is(err, ErrNotFound) || err == nil && (r.OrganizerID != org || r.Environment != env || r.EndpointID != endpointID) {
		return nil, ticketing.NotFound("webhook replay")
	}
	return r, err
}

// ownEndpoint reads an endpoint of the caller's (404 for anyone else's).
func (s *Service) ownEndpoint(ctx context.Context, org string, env ticketing.Environment, id string) (*Endpoint, error) {
	ep, err := s.Store.GetEndpoint(ctx, id)
	if errors.Is(err, ErrNotFound) || err == nil && (ep.OrganizerID != org || ep.Environment != env) {
		return nil, ticketing.NotFound("webhook endpoint")
	}
	return ep, err
}

// sendReplayPage queues the page of a replay at cursor; a lost message is
// sent again by a retry of the request (StartReplay, same Idempotency-Key).
func (s *Service) sendReplayPage(ctx context.Context, id, cursor string, delay time.Duration) {
	m := Message{Kind: KindReplay, ReplayID: id, Cursor: cursor, Due: s.now().Add(delay)}
	if err := s.Queue.Send(ctx, m, delay); err != nil {
		slog.WarnContext(ctx, "enqueue webhook replay page", "replay_id", id, "error", err)
	}
}

// ReplayPage queues the deliveries of one page of a replay's events and
// queues the next page (see Replay above). A message whose cursor is not the
// replay's any more is a duplicate, and done.
func (s *Service) ReplayPage(ctx context.Context, m Message) error {
	r, err := s.Replays.GetReplay(ctx, m.ReplayID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil || r.Paged || r.Cursor != m.Cursor {
		return err
	}
	ep, err := s.Store.GetEndpoint(ctx, r.EndpointID)
	if errors.Is(err, ErrNotFound) || err == nil && notReceiving(ep) != "" {
		_, err = s.Replays.AdvanceReplay(ctx, r.ID, r.Cursor, "", true, s.now()) // nothing more to send it
		return err
	}
	if err != nil {
		return err
	}
	page, err := s.Store.ListOrderEvents(ctx, EventQuery{OrganizerID: r.OrganizerID, Environment: r.Environment,
		CreatedAfter: r.Since, Limit: s.Settings.ReplayBatch, Cursor: r.Cursor})
	if err != nil {
		return err
	}
	for _, ev := range page.Events {
		if ev.CreatedAt.After(r.CreatedAt) || !ep.Subscribes(ev.Type) {
			continue // live traffic's, or not the endpoint's
		}
		if err := s.replayEvent(ctx, r, ev, ep); err != nil {
			return err // the message comes back; what was queued stays queued once
		}
	}
	moved, err := s.Replays.AdvanceReplay(ctx, r.ID, r.Cursor, page.NextCursor, !page.HasMore, s.now())
	if err != nil || !moved || !page.HasMore {
		return err
	}
	s.sendReplayPage(ctx, r.ID, page.NextCursor, s.Settings.ReplayPause)
	return nil
}

// replayEvent gives ev's delivery to ep a generation of replay r (or writes
// one), with its counter, and queues its first attempt.
func (s *Service) replayEvent(ctx context.Context, r *Replay, ev *ticketing.OrderEvent, ep *Endpoint) error {
	for range 5 {
		now := s.now()
		d, err := s.Store.GetDelivery(ctx, DeliveryID(ev.ID, ep.ID))
		supersedes := ""
		switch {
		case errors.Is(err, ErrNotFound):
			if _, dispatched, err := s.Store.GetOrderEvent(ctx, ev.ID); err != nil || !dispatched {
				return err // not fanned out yet: its fan-out delivers it to ep
			}
			d = s.newDelivery(ev, ep, now)
		case err != nil:
			return err
		case d.ReplayID == r.ID:
			return nil // queued by this replay already (a repeated page)
		default:
			if d.ReplayID != "" && d.Status == DeliveryPending {
				supersedes = d.ReplayID
			}
		}
		gen := d.Gen + 1
		s.schedule(d, gen, now, s.Settings.RedeliverDelay)
		d.ReplayID = r.ID
		err = s.Replays.QueueReplayDelivery(ctx, d, supersedes)
		if errors.Is(err, ErrStateChanged) {
			continue // an attempt or a fan-out wrote it meanwhile: read it again
		}
		if err != nil {
			return err
		}
		s.sendAttempt(ctx, d)
		return nil
	}
	return ticketing.ErrContended
}

// admitReplay takes a replay's attempt from ReplayShare of the per-domain and
// the global outbound budget: the same windows as live attempts, which may
// fill them, so a replay only uses what live traffic leaves below its share.
func (s *Service) admitReplay(ctx context.Context, host string, now time.Time) (bool, error) {
	share := func(limit int) int { return max(1, int(float64(limit)*s.Settings.ReplayShare)) }
	ok, err := s.Store.TakeOutbound(ctx, "host:"+host, share(s.Settings.DomainRate), now)
	if err != nil || !ok {
		return false, err
	}
	return s.Store.TakeOutbound(ctx, "*", share(s.Settings.GlobalRate), now)
}

// saveDelivery saves d after an attempt or a skip; a delivery of a replay
// that leaves pending counts as done for it in the same write.
func (s *Service) saveDelivery(ctx context.Context, d *Delivery) error {
	if d.ReplayID != "" && d.Status != DeliveryPending && s.Replays != nil {
		return s.Replays.SaveReplayDelivery(ctx, d)
	}
	return s.Store.SaveDelivery(ctx, d)
}
