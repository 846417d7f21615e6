package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"tix/internal/auth"
	"tix/internal/emailjobs"
	"tix/internal/secretscan"
	"tix/internal/store"
	"tix/internal/ticketing"
)

// The email commands: an organizer's identity and owner contacts, resending
// an order's tickets, and the owner's alert when a live key is revoked.
// tixctl writes jobs and has no queue: the service's sweep (every minute)
// sends them.

// mailer is the email service over the operator's store, without a queue or
// a sender: it writes jobs only.
func (a *app) mailer(st *store.Store) *emailjobs.Service {
	return &emailjobs.Service{Store: st.Emails, Orders: st.Orders, Events: st.Catalog, Clock: a.clock, Settings: emailjobs.DefaultSettings}
}

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func organizersSetIdentity(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("organizers set-identity", flag.ContinueOnError)
	id := fs.String("id", "", "organizer id")
	fs.String("sender-name", "", "the From display name of the organizer's emails (\"\" = its name)")
	fs.String("reply-to", "", "reply-to address (\"\" removes it)")
	fs.String("support", "", "support contact shown in the emails: an address, phone or URL")
	fs.String("logo-url", "", "https URL of the logo shown in the emails")
	fs.String("language", "", "default language of the emails: ru or en")
	if err := parseNamed(fs, args, "id"); err != nil {
		return err
	}
	fields := map[string]string{}
	var bad error
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "id" {
			return
		}
		field := strings.ReplaceAll(f.Name, "-", "_")
		fields[field] = f.Value.String()
		if err := emailjobs.CheckIdentityField(field, f.Value.String()); err != nil {
			bad = firstErr(bad, usagef("--%s: %s", f.Name, invalidText(err)))
		}
	})
	if bad != nil {
		return bad
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	ident, err := st.Emails.SetIdentity(ctx, *id, fields)
	if err != nil {
		return err
	}
	return a.emit(ident, func(w io.Writer) { printIdentity(w, ident) })
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func organizersSetContacts(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("organizers set-contacts", flag.ContinueOnError)
	id := fs.String("id", "", "organizer id")
	var emails stringList
	fs.Var(&emails, "email", "an owner contact address for alerts (repeat for more; at most 5)")
	if err := parseNamed(fs, args, "id"); err != nil {
		return err
	}
	if err := emailjobs.CheckContacts(emails); err != nil {
		return usagef("--email: %s", invalidText(err))
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	ident, err := st.Emails.SetContacts(ctx, *id, emails)
	if err != nil {
		return err
	}
	return a.emit(ident, func(w io.Writer) { printIdentity(w, ident) })
}

func printIdentity(w io.Writer, i *emailjobs.Identity) {
	or := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	fmt.Fprintf(w, "organizer: %s (%s)\nsender:    %s\nreply-to:  %s\nsupport:   %s\nlogo:      %s\nlanguage:  %s\ncontacts:  %s\ntest-mode: %s\n",
		i.OrganizerID, i.Name, i.From(), or(i.ReplyTo), or(i.Support), or(i.LogoURL), i.Lang(), or(strings.Join(i.Contacts, ", ")),
		or(strings.Join(i.TestRecipients, ", ")))
}

// resendView is orders resend-tickets' output.
type resendView struct {
	OrderID string            `json:"order_id"`
	CallID  string            `json:"call_id"`
	Created bool              `json:"created"` // false: this call id was used before; nothing new is sent
	Job     emailjobs.JobView `json:"job"`
}

func ordersResendTickets(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("orders resend-tickets", flag.ContinueOnError)
	call := fs.String("call-id", "", "idempotency id of this resend (default: a new one); the same id sends once")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 || rest[0] == "" {
		return usagef("orders resend-tickets takes one order id")
	}
	if *call == "" {
		*call = auth.RandomString("abcdefghijklmnopqrstuvwxyz0123456789", 16)
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	j, created, err := a.mailer(st).Resend(ctx, rest[0], *call)
	if err != nil {
		if ticketing.IsCode(err, ticketing.CodeInvalidRequest) {
			return usagef("--call-id: 1 to 64 letters, digits, '-' or '_'")
		}
		return err
	}
	v := resendView{OrderID: rest[0], CallID: *call, Created: created, Job: emailjobs.Views([]*emailjobs.Job{j})[0]}
	return a.emit(v, func(w io.Writer) {
		if created {
			fmt.Fprintf(w, "Tickets of %s will be sent again to the buyer within about two minutes (call id %s).\n", v.OrderID, v.CallID)
		} else {
			fmt.Fprintf(w, "Call id %s was used before for %s: nothing new is sent (status %s).\n", v.CallID, v.OrderID, v.Job.Status)
		}
	})
}

// orderEmails are an order's email jobs for orders show (never nil).
func orderEmails(ctx context.Context, st *store.Store, orderID string) ([]emailjobs.JobView, error) {
	jobs, err := st.Emails.OrderJobs(ctx, orderID)
	if err != nil {
		return nil, err
	}
	return emailjobs.Views(jobs), nil
}

// alertLeaked alerts the owner of a key revoked as leaked (once per key,
// whoever revoked it: a secret scanning report or an operator); a failure is
// reported, not fatal: the key is revoked.
func (a *app) alertLeaked(ctx context.Context, st *store.Store, k *auth.Key) {
	n, err := secretscan.AlertOwner(ctx, a.mailer(st), k)
	if err != nil {
		slog.Warn("owner alert of the leaked key not written", "key_id", k.ID, "error", err)
		return
	}
	if n > 0 && !a.json {
		fmt.Fprintf(a.stderr, "The owner's %d contact(s) will be told by email where the key was found and what to do.\n", n)
	}
}

// alertRevoked alerts the owner of a revoked live key (once per key); a
// failure is reported, not fatal: the key is revoked.
func (a *app) alertRevoked(ctx context.Context, st *store.Store, k *auth.Key) {
	if k.Environment != ticketing.EnvLive {
		return
	}
	n, err := a.mailer(st).LiveKeyRevoked(ctx, k.OrganizerID, k.ID, a.clock.Now())
	if err != nil {
		slog.Warn("owner alert of the revoked live key not written", "key_id", k.ID, "error", err)
		return
	}
	if n > 0 && !a.json {
		fmt.Fprintf(a.stderr, "The owner's %d contact(s) will be told by email.\n", n)
	}
}

// invalidText is an invalid_request's message without its code.
func invalidText(err error) string {
	var te *ticketing.Error
	if errors.As(err, &te) {
		return te.Message
	}
	return err.Error()
}
