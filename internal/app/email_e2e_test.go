package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"tix/internal/app"
	"tix/internal/auth"
	"tix/internal/config"
	"tix/internal/mail/mailtest"
	"tix/internal/queue"
	"tix/internal/testenv"
	"tix/internal/ticketing"
)

// End to end on the local stack: a test order is paid; the webhook fan-out
// writes the tickets job in its dispatch, the deliveries consumer renders and
// sends it over SMTP to MailDev, and the message read back from MailDev's API
// has the buyer as recipient, the event in its subject, both parts, one QR
// image per ticket decoding to that ticket's code, and a PDF page per ticket.
// A second confirmation of the payment sends nothing more.
func TestEmail_PaidOrderTicketsArriveInTheInbox(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st := testenv.Store(t, nil)
	vars := map[string]string{
		"TIX_CURSOR_SECRET": string(testenv.CursorSecret), "TIX_TABLE": st.TableName(),
		"TIX_DYNAMODB_ENDPOINT": testenv.DynamoEndpoint(t), "TIX_SQS_ENDPOINT": testenv.SQSEndpoint(t),
		"TIX_QUEUE_PREFIX": testenv.UniqueName("tix-mail"), "TIX_WEBHOOK_KEYRING": config.LocalKeyring,
		"TIX_MAIL_SENDER": "smtp", "TIX_SMTP_ADDR": testenv.SMTPEndpoint(t), "TIX_MAIL_FROM": "tickets@tix.localhost",
		"TIX_LOG_LEVEL": "warn",
	}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Email == nil {
		t.Fatal("TIX_MAIL_SENDER=smtp did not turn email on")
	}
	if _, err := a.Queue.EnsureQueues(ctx); err != nil {
		t.Fatal(err)
	}
	consume(ctx, t, a, queue.DeliveriesQueue, a.HandleDeliveryMessage)

	now := time.Now().UTC().Truncate(time.Second)
	if err := st.CreateOrganizer(ctx, ticketing.Organizer{ID: "org_mail", Name: "Mail Org", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	ev := &ticketing.Event{ID: "evt_mail", OrganizerID: "org_mail", Ref: "mail", Status: ticketing.EventPublished, Kind: ticketing.KindSingle,
		Title: "Jazz Night", City: "Kazan", Venue: "Hall", StartsAt: now.Add(48 * time.Hour), EndsAt: now.Add(50 * time.Hour),
		Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now,
		Tiers: []ticketing.Tier{{ID: "tier_mail", Name: "Dance floor", Price: 150000, Capacity: 10, PersonsIncluded: 1}},
	}
	if err := st.PutEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	buyer := mailtest.NewAddress("buyer")
	if _, err := st.AddTestRecipient(ctx, "org_mail", buyer); err != nil { // test mode mails the organizer's own addresses only
		t.Fatal(err)
	}
	tier, qty := "tier_mail", 3
	tenant := ticketing.Tenant{OrganizerID: "org_mail", Environment: ticketing.EnvTest}
	res, err := a.Sales.CreateOrder(ctx, ticketing.Caller{Tenant: tenant, KeyID: auth.NewKeyID()}, "mail-e2e",
		ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &buyer}, TierID: &tier, Quantity: &qty})
	if err != nil {
		t.Fatal(err)
	}
	paid, err := a.Sales.Simulate(ctx, tenant, res.Order.ID, ticketing.OutcomePaid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Sales.Simulate(ctx, tenant, res.Order.ID, ticketing.OutcomePaid); err != nil { // confirmed twice
		t.Fatal(err)
	}

	inbox := mailtest.MailDev{URL: testenv.MailDevURL(t)}
	raw, err := inbox.Raw(ctx, buyer, 20*time.Second)
	if err != nil {
		t.Fatalf("the tickets email did not reach the inbox: %v", err)
	}
	p, err := mailtest.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if p.To != buyer || !strings.Contains(p.Subject, "Jazz Night") || p.Text == "" || p.HTML == "" {
		t.Fatalf("to %q subject %q, text %d bytes, html %d bytes", p.To, p.Subject, len(p.Text), len(p.HTML))
	}
	if len(p.Inline) != len(paid.Tickets) {
		t.Fatalf("%d QR images for %d tickets", len(p.Inline), len(paid.Tickets))
	}
	for i, img := range p.Inline {
		got, err := mailtest.DecodeQR(img.Data)
		var code struct {
			TicketNumber string `json:"ticket_number"`
			OrderID      string `json:"order_id"`
		}
		if err != nil || json.Unmarshal([]byte(got), &code) != nil || code.TicketNumber != paid.Tickets[i].Number || code.OrderID != paid.ID {
			t.Errorf("QR %d decodes to %q (%v), want ticket %s of %s", i, got, err, paid.Tickets[i].Number, paid.ID)
		}
	}
	if len(p.Attachments) != 1 {
		t.Fatalf("%d attachments, want the PDF", len(p.Attachments))
	}
	if n, err := mailtest.PDFPages(p.Attachments[0].Data); err != nil || n != len(paid.Tickets) {
		t.Fatalf("PDF has %d pages (%v), want %d", n, err, len(paid.Tickets))
	}
	time.Sleep(time.Second) // room for a second email, if one were to come
	if n, err := inbox.Count(ctx, buyer); err != nil || n != 1 {
		t.Fatalf("%d emails to the buyer (%v), want exactly 1", n, err)
	}
}
