package emailjobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"tix/internal/clock"
	"tix/internal/emailsend"
	"tix/internal/ticketing"
)

// compose builds a claimed job's message. final is set when the job cannot
// be sent and retrying cannot help (rejected: no valid address; suppressed;
// skipped: tix's own rules, the reason as a skip error; failed: its order is
// gone); err alone is a transient failure (retried).
//
// The reads run two at a time (the organizer's identity beside the order,
// then the event beside the suppression list), as the consumer's rate is
// bound by their round trips.
func (s *Service) compose(ctx context.Context, j *Job) (emailsend.Message, Status, error) {
	var m emailsend.Message
	id, o, to, final, err := s.recipient(ctx, j)
	if final != "" || err != nil {
		return m, final, err
	}
	var sup bool
	supErr, err := both(
		func() (err error) { sup, err = s.Store.Suppressed(ctx, to); return err },
		func() (err error) {
			if o == nil {
				m, err = s.Renderer.Alert(AlertData{To: to, Lang: id.Lang(), Organizer: *id, Alert: *j.Alert})
			} else {
				m, err = s.renderOrder(ctx, j, id, o, to)
			}
			if err != nil {
				return fmt.Errorf("render: %w", err)
			}
			return nil
		})
	switch {
	case supErr != nil || err != nil:
		return m, "", errors.Join(supErr, err)
	case sup:
		return m, StatusSuppressed, errors.New("address suppressed (bounce or complaint)")
	}
	if final, err := s.charge(ctx, j, to); final != "" || err != nil {
		return m, final, err
	}
	m.FromName, m.ReplyTo, m.To = id.From(), id.ReplyTo, to
	if m.Headers == nil {
		m.Headers = map[string]string{}
	}
	m.Headers["X-Tix-Job"] = j.ID()
	m.Headers["X-Tix-Kind"] = string(j.Kind)
	if j.OrderID != "" {
		m.Headers["X-Tix-Order"] = j.OrderID
	}
	return m, "", nil
}

// recipient reads the organizer's identity and the job's order and decides
// whom the job may reach: the order's buyer (a test-mode order's only when
// the address is one of the organizer's own) or the alert's contact.
func (s *Service) recipient(ctx context.Context, j *Job) (id *Identity, o *ticketing.Order, to string, final Status, err error) {
	idErr, err := both(
		func() (err error) { id, err = s.identity(ctx, j.OrganizerID); return err },
		func() (err error) {
			if j.Kind != KindAlert && j.Kind != KindTransfer {
				o, err = s.Orders.GetOrder(ctx, j.OrderID)
			}
			return err
		})
	switch {
	case ticketing.IsCode(err, ticketing.CodeNotFound):
		return nil, nil, "", StatusFailed, errors.New("order not found")
	case idErr != nil || err != nil:
		return nil, nil, "", "", errors.Join(idErr, err)
	}
	to = j.To
	if o != nil {
		to = o.Buyer.Email
	}
	switch {
	case o != nil && j.Kind != KindRefund && o.Status != ticketing.OrderPaid:
		// Refunded (or otherwise not paid) before its tickets went out.
		return nil, nil, "", StatusFailed, fmt.Errorf("order is %s: its tickets are not sent", o.Status)
	case (j.Kind == KindAlert || j.Kind == KindTransfer) && j.Alert == nil:
		return nil, nil, "", StatusFailed, errors.New("alert job without its alert")
	case !ValidAddress(to):
		return nil, nil, "", StatusRejected, errors.New("invalid address")
	case o != nil && o.Environment != ticketing.EnvLive && !id.OwnAddress(to),
		j.Kind == KindTransfer && j.Environment != ticketing.EnvLive && !id.OwnAddress(to):
		return nil, nil, "", StatusSkipped, skip(ReasonTestMode)
	}
	return id, o, to, "", nil
}

// charge counts an order's email against its address's daily cap (an alert
// is not counted: it goes to the organizer's own contacts, once per cause).
func (s *Service) charge(ctx context.Context, j *Job, to string) (Status, error) {
	if j.Kind == KindAlert || s.Settings.RecipientDailyCap <= 0 {
		return "", nil
	}
	ok, err := s.Store.ChargeRecipient(ctx, j.OrganizerID, to, s.now().Format(time.DateOnly), j.ID(), s.Settings.RecipientDailyCap)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return StatusSkipped, skip(ReasonRecipientDailyCap)
	}
	return "", nil
}

// skip is why a job is skipped (a Reason...), carried as compose's error.
type skip string

func (r skip) Error() string { return "skipped: " + string(r) }

// both runs a and b at once and returns their errors.
func both(a, b func() error) (errA, errB error) {
	var wg sync.WaitGroup
	wg.Go(func() { errA = a() })
	errB = b()
	wg.Wait()
	return errA, errB
}

// identity is the organizer's identity; an organizer without one is shown
// by its id.
func (s *Service) identity(ctx context.Context, org string) (*Identity, error) {
	id, err := s.Store.GetIdentity(ctx, org)
	if errors.Is(err, ErrNotFound) {
		return &Identity{OrganizerID: org, Name: org}, nil
	}
	return id, err
}

func (s *Service) renderOrder(ctx context.Context, j *Job, id *Identity, o *ticketing.Order, to string) (emailsend.Message, error) {
	ev := EventInfo{Title: o.EventTitle}
	if e, err := s.Events.GetEvent(ctx, o.OrganizerID, o.EventID, o.Environment); err == nil {
		ev = EventInfo{Title: e.Title, Venue: e.Venue, City: e.City, StartsAt: e.StartsAt, Timezone: e.Timezone}
	} else {
		if !ticketing.IsCode(err, ticketing.CodeNotFound) {
			return emailsend.Message{}, err
		}
	}
	test := o.Environment != ticketing.EnvLive
	codes, err := s.ticketCodes(ctx, o)
	if err != nil {
		return emailsend.Message{}, err
	}
	var tickets []TicketInfo
	for _, t := range o.Tickets {
		ti := TicketInfo{Number: t.Number, QRPayload: codes[t.Number], SeatRef: t.Seat}
		if t.Seat != nil {
			ti.Seat = t.Seat.Label
		}
		tickets = append(tickets, ti)
	}
	if j.Kind == KindRefund {
		amount := o.TotalPrice
		if o.Refund != nil {
			amount = o.Refund.Amount
		}
		return s.Renderer.Refund(RefundData{To: to, Lang: id.Lang(), Organizer: *id, Event: ev, OrderID: o.ID,
			Amount: amount, Currency: o.Currency, Tickets: tickets, Test: test})
	}
	return s.Renderer.Tickets(TicketsData{To: to, Lang: id.Lang(), Organizer: *id, Event: ev, OrderID: o.ID,
		Total: o.TotalPrice, Currency: o.Currency, Tickets: tickets, Resend: j.Kind == KindResend, Test: test})
}

// ticketCodes are the signed codes of the order's tickets.
func (s *Service) ticketCodes(ctx context.Context, o *ticketing.Order) (map[string]string, error) {
	if s.Codes == nil {
		_, codes := o.UnsignedCodes()
		return codes, nil
	}
	_, codes, err := s.Codes.TicketCodes(ctx, o)
	return codes, err
}

// Resend writes a job that sends a paid order's tickets again to its
// buyer's address, once per callID (a second call with the same id changes
// nothing). With a Queue it is sent at once, else by the next sweep.
func (s *Service) Resend(ctx context.Context, orderID, callID string) (*Job, bool, error) {
	if !validName(callID) {
		return nil, false, ticketing.Invalid("call_id", "1 to 64 letters, digits, '-' or '_'")
	}
	o, err := s.Orders.GetOrder(ctx, orderID)
	if err != nil {
		return nil, false, err
	}
	if o.Status != ticketing.OrderPaid {
		return nil, false, ticketing.Errorf(ticketing.CodeConflict, "order %s is %s: only a paid order's tickets are sent", o.ID, o.Status)
	}
	j := s.newJob(o.ID, string(KindResend)+"."+callID, KindResend, o.OrganizerID, o.Environment, s.now())
	j.OrderID = o.ID
	n, err := s.Store.CreateJobs(ctx, []*Job{j})
	if err != nil {
		return nil, false, err
	}
	if n == 0 {
		j, err = s.Store.GetJob(ctx, j.ID())
		return j, false, err
	}
	s.enqueue(ctx, j)
	return j, true, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// JobView is one job as the organizer sees it (GET /orders/{id}, tixctl).
type JobView struct {
	Kind      Kind    `json:"kind"`
	Name      string  `json:"name"`
	Status    Status  `json:"status"`
	Attempts  int     `json:"attempts"`
	SentAt    *string `json:"sent_at"`
	LastError *string `json:"last_error"`
	// Reason is why a skipped job sent nothing (test_mode,
	// recipient_daily_cap); null otherwise.
	Reason *string `json:"reason"`
}

// OrderStatus is the order's email jobs, oldest first.
func (s *Service) OrderStatus(ctx context.Context, orderID string) ([]JobView, error) {
	jobs, err := s.Store.OrderJobs(ctx, orderID)
	if err != nil {
		return nil, err
	}
	return Views(jobs), nil
}

// Views are jobs as JobViews.
func Views(jobs []*Job) []JobView {
	out := make([]JobView, 0, len(jobs))
	for _, j := range jobs {
		v := JobView{Kind: j.Kind, Name: j.Name, Status: j.Status, Attempts: j.Attempts, SentAt: clock.FormatPtr(j.SentAt)}
		if j.LastError != "" {
			e := j.LastError
			v.LastError = &e
		}
		if j.Reason != "" {
			r := j.Reason
			v.Reason = &r
		}
		out = append(out, v)
	}
	return out
}

// alertName is an alert job's name: alert.<cause key>.<contact index>.
func alertName(causeKey string, i int) string { return "alert." + causeKey + "." + strconv.Itoa(i) }
