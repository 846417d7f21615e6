package emailjobs

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"tix/internal/ticketing"
)

// Alert causes.
const (
	CauseEndpointDisabled = "endpoint_disabled" // a webhook endpoint disabled by its failures
	CauseLiveKeyRevoked   = "live_key_revoked"  // a live key revoked by the operator
	CauseKeyManyIPs       = "key_many_ips"      // a secret key used from many IPs in a day
	CauseKeyCeiling       = "key_ceiling"       // a publishable key's ceiling refused requests
	CauseKeyLeaked        = "key_leaked"        // a secret key found in a public source and revoked
	// CausePartlyRefundedOutside: part of a paid order's money was returned
	// at the bank, outside tix; the order stays paid, flagged.
	CausePartlyRefundedOutside = "partly_refunded_outside"
)

// MaxAlertErrors is how many of an endpoint's last failures its alert lists.
const MaxAlertErrors = 5

// Raise writes one alert job per owner contact of the organizer, once per
// cause: the jobs' names carry causeKey, and a job already written is left
// alone, so the same cause raised again (a retried message, a second
// process) sends nothing more. An organizer without contacts gets no email;
// the cause is logged (without addresses). It reports how many jobs it wrote.
func (s *Service) Raise(ctx context.Context, org, causeKey string, a Alert) (int, error) {
	id, err := s.identity(ctx, org)
	if err != nil {
		return 0, err
	}
	if len(id.Contacts) == 0 {
		slog.WarnContext(ctx, "owner alert without contacts (tixctl organizers set-contacts)", "organizer_id", org, "cause", a.Cause)
		return 0, nil
	}
	now := s.now()
	jobs := make([]*Job, 0, len(id.Contacts))
	for i, c := range id.Contacts {
		j := s.newJob(org, alertName(causeKey, i), KindAlert, org, "", now)
		alert := a
		j.To, j.Alert = c, &alert
		jobs = append(jobs, j)
	}
	n, err := s.Store.CreateJobs(ctx, jobs)
	if err != nil {
		return 0, err
	}
	if n > 0 {
		s.Enqueue(ctx, jobs) // a job written before has its own message or the sweep
	}
	return n, nil
}

// EndpointDisabled alerts the owner that an endpoint was disabled by its
// failures; the cause is the endpoint and the time it was disabled.
func (s *Service) EndpointDisabled(ctx context.Context, org, endpointID, url, reason string, failures int, lastErrors []string, at time.Time) {
	if len(lastErrors) > MaxAlertErrors {
		lastErrors = lastErrors[:MaxAlertErrors]
	}
	a := Alert{Cause: CauseEndpointDisabled, At: at.UTC(), EndpointID: endpointID, URL: url, Reason: reason,
		Failures: failures, LastErrors: lastErrors}
	key := CauseEndpointDisabled + "." + safe(endpointID) + "." + strconv.FormatInt(at.UnixMilli(), 10)
	if _, err := s.Raise(ctx, org, key, a); err != nil {
		slog.WarnContext(ctx, "owner alert not written", "organizer_id", org, "cause", a.Cause, "error", err)
	}
}

// LiveKeyRevoked alerts the owner that a live key was revoked; the cause is the key.
func (s *Service) LiveKeyRevoked(ctx context.Context, org, keyID string, at time.Time) (int, error) {
	a := Alert{Cause: CauseLiveKeyRevoked, At: at.UTC(), KeyID: keyID}
	return s.Raise(ctx, org, CauseLiveKeyRevoked+"."+safe(keyID), a)
}

// KeyLeaked alerts the owner that a secret key was found in a public source
// (source: its URL) and revoked at; the cause is the key, so it is sent once
// whoever reports the key again. The alert names the key by its id and kind
// and last four characters (label, e.g. sk_live_...Ab12), never the key.
func (s *Service) KeyLeaked(ctx context.Context, org, keyID, label, source string, at time.Time) (int, error) {
	a := Alert{Cause: CauseKeyLeaked, At: at.UTC(), KeyID: keyID, Key: label, URL: source}
	return s.Raise(ctx, org, CauseKeyLeaked+"."+safe(keyID), a)
}

// PartlyRefundedOutside alerts the owner that part of a paid order's money
// was returned at the bank, outside tix (ticketing.OwnerAlerts); the cause is
// the order, so it is sent once.
func (s *Service) PartlyRefundedOutside(ctx context.Context, org, orderID, paymentID string, at time.Time) error {
	a := Alert{Cause: CausePartlyRefundedOutside, At: at.UTC(), OrderID: orderID, PaymentID: paymentID}
	_, err := s.Raise(ctx, org, CausePartlyRefundedOutside+"."+safe(orderID), a)
	return err
}

// safe keeps a name part free of the job id's separators.
func safe(s string) string { return strings.NewReplacer("/", "_", ".", "_").Replace(s) }

// Dashboard account email causes (Alert.URL is the link, To the address).
const (
	CauseAccountVerify = "account_verify" // confirm a new account's address
	CauseAccountReset  = "account_reset"  // set a new password
	CauseAccountExists = "account_exists" // someone signed up with an address that has an account
	CauseMemberInvite  = "member_invite"  // join an organizer's dashboard
)

// CauseTicketTransfer is a transfer's offer to its recipient (a
// KindTransfer job): Alert.URL is the accept link, Event and Ticket what
// is offered.
const CauseTicketTransfer = "ticket_transfer"

// accountCauses are the causes whose jobs hold a single-use link (the
// account emails, a transfer's offer), removed once the job is final
// (sent, or given up).
var accountCauses = map[string]bool{CauseAccountVerify: true, CauseAccountReset: true, CauseAccountExists: true, CauseMemberInvite: true,
	CauseTicketTransfer: true}

// TransferOffer writes and sends a transfer's offer to its recipient: the
// accept link, held by the job until it is final. A test-mode transfer's
// offer reaches only the organizer's own addresses (skipped otherwise).
func (s *Service) TransferOffer(ctx context.Context, tr *ticketing.Transfer, eventTitle, link string) error {
	j := s.newJob(tr.ID, "offer", KindTransfer, tr.OrganizerID, tr.Environment, s.now())
	j.To, j.Alert = tr.ToEmail, &Alert{Cause: CauseTicketTransfer, At: s.now(), URL: link, Event: eventTitle, Ticket: tr.TicketNumber}
	if _, err := s.Store.CreateJobs(ctx, []*Job{j}); err != nil {
		return err
	}
	s.enqueue(ctx, j)
	return nil
}

// AccountEmail writes and sends one dashboard account email (a Cause
// Account* or CauseMemberInvite) to one address, through the same jobs as
// the alerts: claimed and sent once, retried, swept. org names the sender
// (its identity) and is the job's subject; link is the single-use link,
// which the job holds until it is final (sent, or given up), not after.
func (s *Service) AccountEmail(ctx context.Context, org, to, cause, link string) error {
	subject := org
	if subject == "" {
		subject = "dashboard"
	}
	j := s.newJob(subject, cause+"."+strconv.FormatInt(s.now().UnixNano(), 36), KindAlert, org, "", s.now())
	j.To, j.Alert = to, &Alert{Cause: cause, At: s.now(), URL: link}
	if _, err := s.Store.CreateJobs(ctx, []*Job{j}); err != nil {
		return err
	}
	s.enqueue(ctx, j)
	return nil
}
