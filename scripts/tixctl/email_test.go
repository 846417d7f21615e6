package main

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"tix/internal/emailjobs"
	"tix/internal/ticketing"
)

// set-identity changes only the flags given, set-contacts replaces the
// contacts; both print the whole identity in a stable shape; bad values are
// usage errors.
func TestOrganizersIdentityAndContacts(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	var org ticketing.Organizer
	c.json(0, &org, "organizers", "create", "--name", "Hall", "--id", "org_mail")
	var id map[string]any
	c.json(0, &id, "organizers", "set-identity", "--id", "org_mail", "--sender-name", "Hall Tickets", "--language", "en",
		"--reply-to", "help@hall.example", "--logo-url", "https://hall.example/logo.png", "--support", "+7 900 000-00-00")
	c.json(0, &id, "organizers", "set-contacts", "--id", "org_mail", "--email", "a@hall.example", "--email", "b@hall.example")
	c.json(0, &id, "organizers", "set-identity", "--id", "org_mail", "--reply-to", "")
	keys := slices.Sorted(maps.Keys(id))
	if want := []string{"contacts", "language", "logo_url", "name", "organizer_id", "reply_to", "sender_name", "support", "test_recipients"}; !slices.Equal(keys, want) {
		t.Errorf("--json keys %v, want %v", keys, want)
	}
	if id["sender_name"] != "Hall Tickets" || id["language"] != "en" || id["reply_to"] != "" || id["name"] != "Hall" ||
		len(id["contacts"].([]any)) != 2 || id["support"] != "+7 900 000-00-00" {
		t.Errorf("identity %v", id)
	}
	for _, args := range [][]string{
		{"organizers", "set-identity", "--id", "org_mail", "--language", "de"},
		{"organizers", "set-identity", "--id", "org_mail", "--reply-to", "Bob <b@x.example>"},
		{"organizers", "set-identity", "--id", "org_mail", "--sender-name", "a\r\nBcc: x@y"},
		{"organizers", "set-identity", "--id", "org_mail", "--sender-name", "support@bank.example"},
		{"organizers", "set-identity", "--id", "org_mail", "--sender-name", "Bank <support@bank.example>"},
		{"organizers", "set-identity", "--id", "org_mail", "--sender-name", "Hall >"},
		{"organizers", "set-identity", "--id", "org_mail", "--logo-url", "http://insecure.example/l.png"},
		{"organizers", "set-contacts", "--id", "org_mail"},
		{"organizers", "set-contacts", "--id", "org_mail", "--email", "not-an-address"},
	} {
		if code, _, _ := c.run(args...); code != 2 {
			t.Errorf("tixctl %s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
	if code, _, _ := c.run("organizers", "set-contacts", "--id", "org_none", "--email", "a@x.example"); code != 1 {
		t.Errorf("unknown organizer: exit %d, want 1", code)
	}
}

// test-recipients adds (normalized, once), removes and lists the test
// allow-list in a stable JSON shape beside the contacts; bad addresses are
// usage errors, an unknown organizer an error.
func TestOrganizersTestRecipients(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	var org ticketing.Organizer
	c.json(0, &org, "organizers", "create", "--name", "Hall", "--id", "org_tr")
	var v map[string]any
	c.json(0, &v, "organizers", "test-recipients", "--id", "org_tr", "--add", "Dev@Hall.example", "--add", "qa@hall.example", "--add", "dev@hall.example")
	c.json(0, &v, "organizers", "test-recipients", "--id", "org_tr", "--remove", "qa@hall.example")
	c.json(0, &v, "organizers", "test-recipients", "--id", "org_tr", "--list")
	keys := slices.Sorted(maps.Keys(v))
	if want := []string{"contacts", "organizer_id", "test_recipients"}; !slices.Equal(keys, want) {
		t.Errorf("--json keys %v, want %v", keys, want)
	}
	if l, _ := v["test_recipients"].([]any); len(l) != 1 || l[0] != "dev@hall.example" || v["organizer_id"] != "org_tr" {
		t.Errorf("test recipients %v", v)
	}
	if _, out, _ := c.run("organizers", "test-recipients", "--id", "org_tr"); !strings.Contains(out, "dev@hall.example") {
		t.Errorf("the listing: %q", out)
	}
	for _, args := range [][]string{
		{"organizers", "test-recipients", "--id", "org_tr", "--add", "Bob <b@hall.example>"},
		{"organizers", "test-recipients", "--id", "org_tr", "--remove", "not-an-address"},
		{"organizers", "test-recipients", "--add", "a@hall.example"},
	} {
		if code, _, _ := c.run(args...); code != 2 {
			t.Errorf("tixctl %s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
	if code, _, _ := c.run("organizers", "test-recipients", "--id", "org_none", "--add", "a@x.example"); code != 1 {
		t.Errorf("unknown organizer: exit %d, want 1", code)
	}
}

// resend-tickets writes one job per call id, shown by orders show; revoking
// a live key writes its owner alert once.
func TestResendTicketsAndRevokedKeyAlert(t *testing.T) {
	t.Parallel()
	c, st := newCLI(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	o := &ticketing.Order{
		ID: "ord_cliMail1", OrganizerID: "org_cli", Environment: ticketing.EnvTest, Type: "ticket",
		Status: ticketing.OrderPending, EventID: "evt_cli", EventTitle: "Rock Night", Quantity: 1, Currency: "RUB",
		TotalPrice: 100000, Buyer: ticketing.Buyer{Email: "buyer@example.com"}, CreatedAt: now, ExpiresAt: now.Add(time.Hour),
	}
	if err := st.Orders.CreateOrder(ctx, o, &ticketing.Event{ID: "evt_cli"}, now); err != nil {
		t.Fatal(err)
	}
	var v resendView
	c.json(1, &v, "orders", "resend-tickets", o.ID) // pending: nothing to send
	o.Status, o.PaidAt = ticketing.OrderPaid, &now
	ev := &ticketing.OrderEvent{ID: "evt_cliMailPaid00000000001", Type: ticketing.EventOrderPaid, OrganizerID: o.OrganizerID,
		Environment: o.Environment, CreatedAt: now, Order: o.Webhook()}
	if err := st.Orders.ConfirmOrder(ctx, o, ev, now, false); err != nil {
		t.Fatal(err)
	}
	c.json(0, &v, "orders", "resend-tickets", o.ID, "--call-id", "c1")
	if !v.Created || v.CallID != "c1" || v.Job.Status != emailjobs.StatusPending || v.Job.Name != "resend.c1" {
		t.Errorf("first resend %+v", v)
	}
	c.json(0, &v, "orders", "resend-tickets", o.ID, "--call-id", "c1")
	if v.Created {
		t.Errorf("the same call id created another job: %+v", v)
	}
	if code, _, _ := c.run("orders", "resend-tickets", o.ID, "--call-id", "a/b"); code != 2 {
		t.Errorf("bad call id: exit %d", code)
	}
	var show orderView
	c.json(0, &show, "orders", "show", o.ID)
	if len(show.Email) != 1 || show.Email[0].Name != "resend.c1" {
		t.Errorf("orders show email %+v", show.Email)
	}

	var org ticketing.Organizer
	c.json(0, &org, "organizers", "create", "--name", "Keys", "--id", "org_keys")
	c.json(0, &org, "organizers", "verify", "--id", "org_keys")
	var id map[string]any
	c.json(0, &id, "organizers", "set-contacts", "--id", "org_keys", "--email", "owner@keys.example")
	var live cliKey
	c.json(0, &live, "keys", "create", "--organizer", "org_keys", "--type", "sk", "--env", "live")
	var revoked map[string]any
	c.json(0, &revoked, "keys", "revoke", "--id", live.ID)
	j, err := st.Emails.GetJob(ctx, "org_keys/alert."+emailjobs.CauseLiveKeyRevoked+"."+live.ID+".0")
	if err != nil || j.To != "owner@keys.example" || j.Alert == nil || j.Alert.KeyID != live.ID || j.Status != emailjobs.StatusPending {
		t.Fatalf("alert job %+v %v", j, err)
	}
}
