package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"tix/internal/ticketcode"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// ticketKeyView is a ticket signing key as tixctl shows it (never its private half).
type ticketKeyView struct {
	Kid         string     `json:"kid"`
	X           string     `json:"x"`
	Status      string     `json:"status"` // signing, verifying, retired
	CreatedAt   time.Time  `json:"created_at"`
	RetiredAt   *time.Time `json:"retired_at"`
	VerifyUntil *time.Time `json:"verify_until"`
}

type ticketKeysView struct {
	OrganizerID string          `json:"organizer_id"`
	Environment string          `json:"environment"`
	Keys        []ticketKeyView `json:"keys"`
}

// ticketKeys builds the signing keys' service as the Lambdas do: the keys'
// private halves are sealed with the webhook keyring (TIX_WEBHOOK_KEYRING).
func (a *app) ticketKeys(ctx context.Context) (*ticketing.TicketKeys, error) {
	cfg, err := a.webhookConfig()
	if err != nil {
		return nil, err
	}
	st, err := a.store(ctx)
	if err != nil {
		return nil, err
	}
	box, err := webhook.NewAESBoxKeys(cfg.Webhooks.Keyring)
	if err != nil {
		return nil, fmt.Errorf("TIX_WEBHOOK_KEYRING: %w", err)
	}
	return &ticketing.TicketKeys{Store: st.TicketKeys(), Box: box, Clock: a.clock, Overlap: cfg.TicketKeyOverlap}, nil
}

func ticketKeysArgs(name string, args []string, overlap bool) (ticketing.Tenant, time.Duration, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	org := fs.String("organizer", "", "organizer id")
	env := fs.String("env", "", "test or live")
	var d *time.Duration
	if overlap {
		d = fs.Duration("overlap", 0, "how long the current key still verifies (default TIX_TICKET_KEY_OVERLAP, 720h)")
	}
	if err := parseNamed(fs, args, "organizer"); err != nil {
		return ticketing.Tenant{}, 0, err
	}
	t := ticketing.Tenant{OrganizerID: *org, Environment: ticketing.Environment(*env)}
	if !t.Environment.Valid() {
		return t, 0, usagef("--env must be test or live")
	}
	if d != nil && *d < 0 {
		return t, 0, usagef("--overlap cannot be negative")
	}
	if d == nil {
		return t, 0, nil
	}
	return t, *d, nil
}

func viewTicketKeys(ks *ticketcode.KeySet, now time.Time) ticketKeysView {
	v := ticketKeysView{OrganizerID: ks.OrganizerID, Environment: ks.Environment, Keys: []ticketKeyView{}}
	for i, k := range ks.Keys {
		status := "retired"
		switch {
		case i == 0 && k.RetiredAt == nil:
			status = "signing"
		case k.Verifies(now):
			status = "verifying"
		}
		v.Keys = append(v.Keys, ticketKeyView{Kid: k.Kid, X: k.X, Status: status, CreatedAt: k.CreatedAt, RetiredAt: k.RetiredAt, VerifyUntil: k.VerifyUntil})
	}
	return v
}

func printTicketKeys(w io.Writer, v ticketKeysView) {
	fmt.Fprintf(w, "Ticket signing keys of %s (%s):\n", v.OrganizerID, v.Environment)
	for _, k := range v.Keys {
		until := ""
		if k.VerifyUntil != nil {
			until = ", verifies until " + formatTime(k.VerifyUntil)
		}
		fmt.Fprintf(w, "  %s  %-9s created %s%s\n", k.Kid, k.Status, formatTime(&k.CreatedAt), until)
	}
}

func ticketKeysList(ctx context.Context, a *app, args []string) error {
	t, _, err := ticketKeysArgs("ticket-keys list", args, false)
	if err != nil {
		return err
	}
	svc, err := a.ticketKeys(ctx)
	if err != nil {
		return err
	}
	ks, err := svc.Refresh(ctx, t)
	if err != nil {
		return err
	}
	v := viewTicketKeys(ks, a.clock.Now())
	return a.emit(v, func(w io.Writer) { printTicketKeys(w, v) })
}

func ticketKeysRotate(ctx context.Context, a *app, args []string) error {
	t, overlap, err := ticketKeysArgs("ticket-keys rotate", args, true)
	if err != nil {
		return err
	}
	svc, err := a.ticketKeys(ctx)
	if err != nil {
		return err
	}
	ks, err := svc.Rotate(ctx, t, overlap)
	if err != nil {
		return err
	}
	v := viewTicketKeys(ks, a.clock.Now())
	return a.emit(v, func(w io.Writer) {
		printTicketKeys(w, v)
		fmt.Fprintln(w, "New codes are signed by the first key; codes signed before still verify until the previous key's verify_until.")
		fmt.Fprintln(w, "Scanners that work offline must download GET /v1/ticket-keys again (it lists both keys).")
	})
}
