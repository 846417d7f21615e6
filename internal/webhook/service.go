package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"tix/internal/clock"
	"tix/internal/ticketing"
)

// Service delivers order events to endpoints and manages endpoints.
//
// The path of an event: the order change commits its outbox event (one
// transaction); Publish sends a fan-out message; Fanout writes one delivery
// per receiving, subscribed endpoint and marks the event dispatched (one
// transaction), then sends attempt 1 of each; Attempt POSTs, records the
// outcome under the delivery's version and sends the next attempt. Every
// message may be lost (the process dies between a commit and a send) or
// arrive twice: the sweep re-sends what is overdue, and each step checks the
// stored state, so a duplicate changes nothing.
type Service struct {
	Store    Store
	Queue    Queue
	Sender   *Sender
	Box      SecretBox
	Clock    clock.Clock
	Settings Settings
	// Subscribers follow the outbox besides the endpoints (the email
	// pipeline): what an event owes each is written in its dispatch.
	Subscribers []Subscriber
	// Alerts, when set, tells the owner that an endpoint was disabled by its failures.
	Alerts OwnerAlerts
}

func (s *Service) now() time.Time { return s.Clock.Now().UTC() }

// hopSlack is how early a message may arrive and still be handled.
const hopSlack = time.Second

// Publish asks for an outbox event to be fanned out (ticketing.EventPublisher).
// A failure is only logged: the sweep fans out undispatched events.
func (s *Service) Publish(ctx context.Context, eventID string) {
	if err := s.Queue.Send(ctx, Message{Kind: KindFanout, EventID: eventID, Due: s.now()}, 0); err != nil {
		slog.WarnContext(ctx, "enqueue webhook fan-out; the sweep will do it", "event_id", eventID, "error", err)
	}
}

// ErrMalformedMessage marks a deliveries-queue message that is not one:
// retrying cannot help, so it is left to go to the dead-letter queue.
var ErrMalformedMessage = errors.New("malformed deliveries message")

// HandleMessage handles one deliveries-queue message. A message that arrived
// early (its wait was longer than one queue delay) is sent on again.
func (s *Service) HandleMessage(ctx context.Context, body []byte) error {
	var m Message
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformedMessage, err)
	}
	switch {
	case m.Kind == KindFanout && m.EventID != "":
	case m.Kind == KindAttempt && m.DeliveryID != "" && m.Gen >= 1 && m.N >= 1:
	default:
		return fmt.Errorf("%w: %s", ErrMalformedMessage, body)
	}
	now := s.now()
	if m.Due.After(now.Add(hopSlack)) {
		return s.Queue.Send(ctx, m, m.Due.Sub(now))
	}
	if m.Kind == KindFanout {
		return s.Fanout(ctx, m.EventID)
	}
	return s.Attempt(ctx, m)
}

// Fanout turns an outbox event into one delivery per active, verified
// endpoint of its organizer and environment that subscribes to its type, and
// sends their first attempts. An event fanned out already is left alone.
func (s *Service) Fanout(ctx context.Context, eventID string) error {
	ev, dispatched, err := s.Store.GetOrderEvent(ctx, eventID)
	if errors.Is(err, ErrNotFound) {
		slog.WarnContext(ctx, "fan-out of an unknown event", "event_id", eventID)
		return nil
	}
	if err != nil || dispatched {
		return err
	}
	eps, err := s.Store.ListEndpoints(ctx, ev.OrganizerID, ev.Environment)
	if err != nil {
		return err
	}
	now := s.now()
	var ds []*Delivery
	for _, ep := range eps {
		if ep.Receiving() && ep.Subscribes(ev.Type) {
			ds = append(ds, s.newDelivery(ev, ep, now))
		}
	}
	owed := make([][]Record, len(s.Subscribers))
	var all []Record
	for i, sub := range s.Subscribers {
		owed[i] = sub.Owed(ev, now)
		all = append(all, owed[i]...)
	}
	if err := s.Store.Dispatch(ctx, ev.ID, ds, all...); err != nil {
		if errors.Is(err, ErrStateChanged) {
			return nil // a duplicate message or the sweep got there first
		}
		return err
	}
	for _, d := range ds {
		s.sendAttempt(ctx, d)
	}
	for i, sub := range s.Subscribers {
		sub.Dispatched(ctx, owed[i])
	}
	return nil
}

func (s *Service) newDelivery(ev *ticketing.OrderEvent, ep *Endpoint, now time.Time) *Delivery {
	order := ev.Order.ID
	if ev.CheckIn != nil {
		order = ev.CheckIn.OrderID
	}
	d := &Delivery{
		ID: DeliveryID(ev.ID, ep.ID), OrganizerID: ev.OrganizerID, Environment: ev.Environment,
		EndpointID: ep.ID, EventID: ev.ID, EventType: ev.Type, OrderID: &order,
		CreatedAt: now,
	}
	s.schedule(d, 1, now, s.Settings.Schedule[0])
	return d
}

// schedule makes d pending for a fresh generation gen, first attempt after wait.
func (s *Service) schedule(d *Delivery, gen int, now time.Time, wait time.Duration) {
	d.Status, d.Gen, d.Attempts, d.MaxAttempts = DeliveryPending, gen, 0, len(s.Settings.Schedule)
	d.LastStatusCode, d.LastError, d.DeliveredAt, d.FailedAt = nil, nil, nil, nil
	d.NextAttemptAt = now.Add(wait)
	recheck := d.NextAttemptAt.Add(s.Settings.SweepGrace)
	d.RecheckAt = &recheck
}

// sendAttempt queues d's next attempt; a failure is left to the sweep.
func (s *Service) sendAttempt(ctx context.Context, d *Delivery) {
	m := Message{Kind: KindAttempt, DeliveryID: d.ID, Gen: d.Gen, N: d.Attempts + 1, Due: d.NextAttemptAt}
	if err := s.Queue.Send(ctx, m, d.NextAttemptAt.Sub(s.now())); err != nil {
		slog.WarnContext(ctx, "enqueue webhook attempt; the sweep will resend it", "delivery_id", d.ID, "attempt", m.N, "error", err)
	}
}

// Attempt makes attempt m.N of generation m.Gen of a delivery: unless that
// attempt was made already (a duplicate message), the delivery moved on, or
// its endpoint no longer receives (then the delivery is skipped).
func (s *Service) Attempt(ctx context.Context, m Message) error {
	d, ev, ep, err := s.Store.LoadAttempt(ctx, m.DeliveryID)
	if errors.Is(err, ErrNotFound) {
		slog.WarnContext(ctx, "attempt of an unknown delivery", "delivery_id", m.DeliveryID)
		return nil
	}
	if err != nil {
		return err
	}
	if d.Status != DeliveryPending || d.Gen != m.Gen || d.Attempts != m.N-1 {
		return nil // done already: a duplicate or stale message
	}
	now := s.now()
	if reason := notReceiving(ep); reason != "" {
		return s.skip(ctx, d, reason, now)
	}
	if ok, err := s.admit(ctx, ep.URL, now); err != nil || !ok {
		if err != nil {
			return err
		}
		// Over an outbound limit: try again in a moment; not an attempt.
		wait := time.Second + rand.N(2*time.Second)
		return s.Queue.Send(ctx, m, wait)
	}
	body, err := orderEnvelope(ev)
	if err != nil {
		return err
	}
	secrets, err := s.secrets(ep, now)
	if err != nil {
		return err
	}
	res := s.Sender.Post(ctx, ep.Environment == ticketing.EnvLive, ep.URL, body, SignAll(ev.ID, now, body, secrets...))
	s.record(d, m.N, now, res)
	if err := s.Store.SaveDelivery(ctx, d); err != nil {
		if errors.Is(err, ErrStateChanged) {
			return nil // a duplicate of this message recorded it first
		}
		return err // the message comes back and the attempt is made again
	}
	if d.Status == DeliveryPending {
		s.sendAttempt(ctx, d)
	}
	s.health(ctx, ep, res.OK(), res.ErrorText(), now)
	return nil
}

func notReceiving(ep *Endpoint) string {
	switch {
	case ep == nil:
		return "endpoint deleted"
	case ep.Status != EndpointActive:
		return "endpoint disabled"
	case !ep.Verified:
		return "endpoint not verified (its URL changed)"
	}
	return ""
}

// skip ends a pending delivery whose endpoint no longer receives; it can be
// redelivered once the endpoint is enabled again.
func (s *Service) skip(ctx context.Context, d *Delivery, reason string, now time.Time) error {
	d.Status, d.RecheckAt, d.LastError = DeliverySkipped, nil, &reason
	d.NextAttemptAt = now
	err := s.Store.SaveDelivery(ctx, d)
	if errors.Is(err, ErrStateChanged) {
		return nil
	}
	return err
}

// record writes attempt n's outcome into d and decides what follows.
func (s *Service) record(d *Delivery, n int, now time.Time, res Result) {
	d.Attempts = n
	a := Attempt{Gen: d.Gen, N: n, At: now, StatusCode: res.StatusCode, DurationMS: res.Duration.Milliseconds()}
	d.LastStatusCode, d.LastError = nil, nil
	if res.StatusCode > 0 {
		code := res.StatusCode
		d.LastStatusCode = &code
	}
	if !res.OK() {
		a.Error = res.ErrorText()
		d.LastError = &a.Error
	}
	d.Log = append(d.Log, a)
	if len(d.Log) > MaxLog {
		d.Log = d.Log[len(d.Log)-MaxLog:]
	}
	switch {
	case res.OK():
		d.Status, d.DeliveredAt, d.RecheckAt = DeliveryDelivered, &now, nil
	case n >= d.MaxAttempts:
		d.Status, d.FailedAt, d.RecheckAt = DeliveryFailed, &now, nil
	default:
		// The schedule may have been shortened since this delivery was
		// scheduled (max_attempts is kept per delivery): wait its last step.
		d.NextAttemptAt = now.Add(s.Settings.Schedule[min(n, len(s.Settings.Schedule)-1)])
		recheck := d.NextAttemptAt.Add(s.Settings.SweepGrace)
		d.RecheckAt = &recheck
	}
}

// admit takes the attempt from the per-domain and the global outbound budget.
func (s *Service) admit(ctx context.Context, rawURL string, now time.Time) (bool, error) {
	host := "invalid"
	if u, err := url.Parse(rawURL); err == nil {
		host = strings.ToLower(u.Hostname())
	}
	ok, err := s.Store.TakeOutbound(ctx, "host:"+host, s.Settings.DomainRate, now)
	if err != nil || !ok {
		return false, err
	}
	return s.Store.TakeOutbound(ctx, "*", s.Settings.GlobalRate, now)
}

// secrets are the plaintext secrets that sign now: the current one, and the
// previous one during the overlap after a rotation.
func (s *Service) secrets(ep *Endpoint, now time.Time) ([]string, error) {
	cur, err := s.Box.Open(ep.Secret, ep.ID)
	if err != nil {
		return nil, fmt.Errorf("open the secret of %s: %w", ep.ID, err)
	}
	out := []string{cur}
	if ep.OldSecret != "" && ep.SecretRotatedAt != nil && now.Before(ep.SecretRotatedAt.Add(s.Settings.RotationOverlap)) {
		old, err := s.Box.Open(ep.OldSecret, ep.ID)
		if err != nil {
			return nil, fmt.Errorf("open the previous secret of %s: %w", ep.ID, err)
		}
		out = append(out, old)
	}
	return out, nil
}

// quietSuccess is how long a healthy endpoint's last_delivery_at may lag, to
// save a write per delivery on a busy endpoint.
const quietSuccess = time.Minute

// health counts the attempt on the endpoint and disables it when its failures
// meet the rules of Settings. Failures here are logged: the delivery itself
// is recorded.
func (s *Service) health(ctx context.Context, ep *Endpoint, ok bool, lastErr string, now time.Time) {
	if ok {
		if ep.ConsecutiveFailures == 0 && ep.LastDeliveryAt != nil && now.Sub(*ep.LastDeliveryAt) < quietSuccess {
			return
		}
		if err := s.Store.EndpointSucceeded(ctx, ep.ID, now); err != nil {
			slog.WarnContext(ctx, "record endpoint success", "endpoint_id", ep.ID, "error", err)
		}
		return
	}
	after, err := s.Store.EndpointFailed(ctx, ep.ID, now)
	if err != nil {
		slog.WarnContext(ctx, "record endpoint failure", "endpoint_id", ep.ID, "error", err)
		return
	}
	reason := s.Settings.disableReason(after, now)
	if reason == "" {
		return
	}
	disabled, err := s.Store.DisableEndpoint(ctx, ep.ID, reason, now)
	if err != nil {
		slog.WarnContext(ctx, "disable failing endpoint", "endpoint_id", ep.ID, "error", err)
		return
	}
	if disabled {
		// The owner's notice: operators route this log line (level WARN,
		// msg below) to the organizer; tixctl webhooks list shows the reason.
		slog.WarnContext(ctx, "webhook endpoint disabled automatically", "endpoint_id", ep.ID,
			"organizer_id", ep.OrganizerID, "environment", ep.Environment, "url", ep.URL, "reason", reason)
		errs := s.skipPending(ctx, ep.ID, "endpoint disabled: "+reason, now)
		if s.Alerts != nil {
			last := append([]string{lastErr}, errs...)
			s.Alerts.EndpointDisabled(ctx, ep.OrganizerID, ep.ID, ep.URL, reason, after.ConsecutiveFailures, last, now)
		}
	}
}

// skipPending marks an endpoint's pending deliveries skipped (best effort: an
// attempt of one left pending skips it too). It returns the last errors of
// the deliveries it skipped (up to 4), for the owner's alert.
func (s *Service) skipPending(ctx context.Context, endpointID, reason string, now time.Time) []string {
	var errs []string
	for range 20 {
		ds, err := s.Store.PendingDeliveries(ctx, endpointID, 100)
		if err != nil {
			slog.WarnContext(ctx, "list pending deliveries to skip", "endpoint_id", endpointID, "error", err)
			return errs
		}
		for _, d := range ds {
			if d.LastError != nil && len(errs) < 4 {
				errs = append(errs, *d.LastError)
			}
			if err := s.skip(ctx, d, reason, now); err != nil {
				slog.WarnContext(ctx, "skip delivery", "delivery_id", d.ID, "error", err)
				return errs
			}
		}
		if len(ds) < 100 {
			return errs
		}
	}
	return errs
}

// SweepReport counts what one sweep found.
type SweepReport struct {
	Events     int // undispatched events fanned out
	Deliveries int // overdue attempts sent again
}

// Sweep finds work whose message was lost or never sent: events committed
// but not fanned out, and pending deliveries whose attempt is overdue by more
// than SweepGrace. It runs every minute (EventBridge on AWS, a ticker locally).
func (s *Service) Sweep(ctx context.Context) (SweepReport, error) {
	var rep SweepReport
	now := s.now()
	ids, err := s.Store.UndispatchedEvents(ctx, now.Add(-s.Settings.SweepGrace), s.Settings.SweepBatch)
	if err != nil {
		return rep, err
	}
	var errs []error
	for _, id := range ids {
		if err := s.Fanout(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("fan out %s: %w", id, err))
			continue
		}
		rep.Events++
	}
	ds, err := s.Store.OverdueDeliveries(ctx, now, s.Settings.SweepBatch)
	if err != nil {
		return rep, errors.Join(append(errs, err)...)
	}
	for _, d := range ds {
		// Claim the recheck so that overlapping sweeps send one message.
		recheck := now.Add(s.Settings.SweepGrace)
		d.RecheckAt = &recheck
		if err := s.Store.SaveDelivery(ctx, d); err != nil {
			if !errors.Is(err, ErrStateChanged) {
				errs = append(errs, fmt.Errorf("claim %s: %w", d.ID, err))
			}
			continue
		}
		s.sendAttempt(ctx, d)
		rep.Deliveries++
	}
	return rep, errors.Join(errs...)
}

// Deliveries lists an organizer environment's deliveries (GET /webhook-deliveries).
// Another organizer's (or environment's) endpoint_id is an empty page at once,
// as an unknown one is, without reading its deliveries; those of a deleted
// endpoint are read in bounded pages.
func (s *Service) Deliveries(ctx context.Context, q DeliveryQuery) (*DeliveryPage, error) {
	if q.EndpointID != "" {
		ep, err := s.Store.GetEndpoint(ctx, q.EndpointID)
		switch {
		case err == nil && (ep.OrganizerID != q.OrganizerID || ep.Environment != q.Environment):
			return &DeliveryPage{Deliveries: []*Delivery{}}, nil
		case err != nil && !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	return s.Store.ListDeliveries(ctx, q)
}

// Events pages an organizer environment's event log (GET /order-events).
func (s *Service) Events(ctx context.Context, q EventQuery) (*EventPage, error) {
	return s.Store.ListOrderEvents(ctx, q)
}

// Endpoints lists an organizer environment's endpoints (GET /webhook-endpoints).
func (s *Service) Endpoints(ctx context.Context, org string, env ticketing.Environment) ([]*Endpoint, error) {
	return s.Store.ListEndpoints(ctx, org, env)
}

// Redeliver moves a delivered, failed or skipped delivery of the caller's
// back to pending with a fresh schedule, behind the live events already
// queued (contract section 4 rule 9).
func (s *Service) Redeliver(ctx context.Context, org string, env ticketing.Environment, id string) (*Delivery, error) {
	d, err := s.Store.GetDelivery(ctx, id)
	if errors.Is(err, ErrNotFound) || err == nil && (d.OrganizerID != org || d.Environment != env) {
		return nil, ticketing.NotFound("webhook delivery")
	}
	if err != nil {
		return nil, err
	}
	if d.Status == DeliveryPending {
		return nil, ticketing.Errorf(ticketing.CodeConflict, "delivery %s is pending: its next attempt is at %s", d.ID, d.NextAttemptAt.UTC().Format(time.RFC3339))
	}
	ep, err := s.Store.GetEndpoint(ctx, d.EndpointID)
	if errors.Is(err, ErrNotFound) {
		return nil, ticketing.Errorf(ticketing.CodeConflict, "the endpoint of delivery %s was deleted", d.ID)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case ep.Status != EndpointActive:
		return nil, ticketing.Errorf(ticketing.CodeConflict, "endpoint %s is disabled; enable it in the dashboard, then redeliver", ep.ID)
	case !ep.Verified:
		return nil, ticketing.Errorf(ticketing.CodeConflict, "endpoint %s is not verified (its URL changed); verify it in the dashboard, then redeliver", ep.ID)
	}
	now := s.now()
	s.schedule(d, d.Gen+1, now, s.Settings.RedeliverDelay)
	if err := s.Store.SaveDelivery(ctx, d); err != nil {
		if errors.Is(err, ErrStateChanged) {
			return nil, ticketing.Errorf(ticketing.CodeConflict, "delivery %s changed while redelivering; read it and try again", d.ID)
		}
		return nil, err
	}
	s.sendAttempt(ctx, d)
	return d, nil
}
