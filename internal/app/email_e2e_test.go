package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"maps"
	"strings"
	"testing"
	"time"

	"tix/internal/app"
	"tix/internal/app/sending"
	"tix/internal/auth"
	"tix/internal/config"
	"tix/internal/emailjobs"
	"tix/internal/emailsend/emailtest"
	"tix/internal/queue"
	"tix/internal/testenv"
	"tix/internal/ticketcode"
	"tix/internal/ticketing"
)

// mailStack is the local stack with email on: DynamoDB Local, fauxqs, the
// real deliveries consumer, SMTP into MailDev; organizer org_mail sells
// evt_mail's tier tier_mail in test mode.
type mailStack struct {
	ctx   context.Context
	app   *app.App
	inbox emailtest.MailDev
}

var mailTenant = ticketing.Tenant{OrganizerID: "org_mail", Environment: ticketing.EnvTest}

// newMailStack starts the stack; vars override its settings.
func newMailStack(t *testing.T, vars map[string]string) *mailStack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	st := testenv.Store(t, nil)
	env := map[string]string{
		"TIX_CURSOR_SECRET": string(testenv.CursorSecret), "TIX_TABLE": st.TableName(),
		"TIX_DYNAMODB_ENDPOINT": testenv.DynamoEndpoint(t), "TIX_SQS_ENDPOINT": testenv.SQSEndpoint(t),
		"TIX_QUEUE_PREFIX": testenv.UniqueName("tix-mail"), "TIX_WEBHOOK_KEYRING": config.LocalKeyring,
		"TIX_MAIL_SENDER": "smtp", "TIX_SMTP_ADDR": testenv.SMTPEndpoint(t), "TIX_MAIL_FROM": "tickets@tix.localhost",
		"TIX_LOG_LEVEL": "warn",
	}
	maps.Copy(env, vars)
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	a, err := sending.New(ctx, cfg, nil)
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
	if err := st.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: "org_mail", Name: "Mail Org", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	ev := &ticketing.Event{ID: "evt_mail", OrganizerID: "org_mail", Ref: "mail", Status: ticketing.EventPublished, Kind: ticketing.KindSingle,
		Title: "Jazz Night", City: "Kazan", Venue: "Hall", StartsAt: now.Add(48 * time.Hour), EndsAt: now.Add(50 * time.Hour),
		Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now,
		Tiers: []ticketing.Tier{{ID: "tier_mail", Name: "Dance floor", Price: 150000, Capacity: 100, PersonsIncluded: 1}},
	}
	if err := st.Catalog.PutEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	return &mailStack{ctx: ctx, app: a, inbox: emailtest.MailDev{URL: testenv.MailDevURL(t)}}
}

// paidOrder is a test order of qty tickets for buyer, paid.
func (m *mailStack) paidOrder(t *testing.T, buyer string, qty int) *ticketing.Order {
	t.Helper()
	tier := "tier_mail"
	res, err := m.app.Sales.Orders.CreateOrder(m.ctx, ticketing.Caller{Tenant: mailTenant, KeyID: auth.NewKeyID()}, testenv.UniqueName("mail"),
		ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &buyer}, TierID: &tier, Quantity: &qty})
	if err != nil {
		t.Fatal(err)
	}
	paid, err := m.app.Sales.Orders.Simulate(m.ctx, mailTenant, res.Order.ID, ticketing.OutcomePaid)
	if err != nil {
		t.Fatal(err)
	}
	return paid
}

// job waits up to 20 s for the email job to be final and returns it.
func (m *mailStack) job(t *testing.T, id string) *emailjobs.Job {
	t.Helper()
	var j *emailjobs.Job
	testenv.WaitFor(t, 20*time.Second, "email job "+id+" to finish", func() bool {
		var err error
		j, err = m.app.Store.Emails.GetJob(m.ctx, id)
		return err == nil && j.Status.Final()
	})
	return j
}

// End to end on the local stack: a test order is paid; the webhook fan-out
// writes the tickets job in its dispatch, the deliveries consumer renders and
// sends it over SMTP to MailDev, and the message read back from MailDev's API
// has the buyer as recipient, the event in its subject, both parts, one QR
// image per ticket decoding to that ticket's code, and a PDF page per ticket.
// A second confirmation of the payment sends nothing more. Being a test-mode
// order's, it says TEST in its subject, both parts and every PDF page, and
// each QR is framed in red and says "test": true.
func TestEmail_PaidOrderTicketsArriveInTheInbox(t *testing.T) {
	m := newMailStack(t, nil)
	ctx, a, inbox := m.ctx, m.app, m.inbox
	buyer := emailtest.NewAddress("buyer")
	if _, err := a.Store.Emails.AddTestRecipient(ctx, "org_mail", buyer); err != nil { // test mode mails the organizer's own addresses only
		t.Fatal(err)
	}
	paid := m.paidOrder(t, buyer, 3)
	if _, err := a.Sales.Orders.Simulate(ctx, mailTenant, paid.ID, ticketing.OutcomePaid); err != nil { // confirmed twice
		t.Fatal(err)
	}

	raw, err := inbox.Raw(ctx, buyer, 20*time.Second)
	if err != nil {
		t.Fatalf("the tickets email did not reach the inbox: %v", err)
	}
	p, err := emailtest.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if p.To != buyer || !strings.Contains(p.Subject, "Jazz Night") || p.Text == "" || p.HTML == "" {
		t.Fatalf("to %q subject %q, text %d bytes, html %d bytes", p.To, p.Subject, len(p.Text), len(p.HTML))
	}
	if !strings.HasPrefix(p.Subject, "[TEST] ") || !strings.HasPrefix(p.Text, "TEST") || !strings.Contains(p.HTML, "TEST · ТЕСТ") {
		t.Errorf("a test-mode email not marked TEST: subject %q, text %.60q, html has the banner: %v", p.Subject, p.Text, strings.Contains(p.HTML, "TEST"))
	}
	if len(p.Inline) != len(paid.Tickets) {
		t.Fatalf("%d QR images for %d tickets", len(p.Inline), len(paid.Tickets))
	}
	keys, err := a.TicketKeys.KeySet(ctx, mailTenant)
	if err != nil {
		t.Fatal(err)
	}
	for i, img := range p.Inline {
		got, err := emailtest.DecodeQR(img.Data)
		if c, verr := ticketcode.Verify(got, *keys, a.Sales.Deps.Clock.Now()); verr != nil || c.TicketNumber != paid.Tickets[i].Number {
			t.Errorf("QR %d is not the ticket's signed code (%v): %q", i, verr, got)
		}
		var code struct {
			TicketNumber string `json:"ticket_number"`
			OrderID      string `json:"order_id"`
			Livemode     bool   `json:"livemode"`
			Test         bool   `json:"test"`
		}
		if err != nil || json.Unmarshal([]byte(got), &code) != nil || code.TicketNumber != paid.Tickets[i].Number || code.OrderID != paid.ID {
			t.Errorf("QR %d decodes to %q (%v), want ticket %s of %s", i, got, err, paid.Tickets[i].Number, paid.ID)
		}
		if code.Livemode || !code.Test || !redFramed(t, img.Data) {
			t.Errorf("QR %d of a test order: %q, framed in red %v", i, got, redFramed(t, img.Data))
		}
	}
	if len(p.Attachments) != 1 {
		t.Fatalf("%d attachments, want the PDF", len(p.Attachments))
	}
	if n, err := emailtest.PDFPages(p.Attachments[0].Data); err != nil || n != len(paid.Tickets) {
		t.Fatalf("PDF has %d pages (%v), want %d", n, err, len(paid.Tickets))
	}
	if n := strings.Count(emailtest.PDFStrings(p.Attachments[0].Data), "(TEST - NOT A VALID TICKET)"); n != len(paid.Tickets) {
		t.Errorf("%d PDF pages say TEST, want every one of %d", n, len(paid.Tickets))
	}
	time.Sleep(time.Second) // room for a second email, if one were to come
	if n, err := inbox.Count(ctx, buyer); err != nil || n != 1 {
		t.Fatalf("%d emails to the buyer (%v), want exactly 1", n, err)
	}
}

// redFramed reports whether a QR image's corners are the test marking's
// (light) red: clearly redder than they are green.
func redFramed(t *testing.T, data []byte) bool {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	for _, p := range [][2]int{{b.Min.X, b.Min.Y}, {b.Max.X - 1, b.Max.Y - 1}} {
		r, g, _, _ := img.At(p[0], p[1]).RGBA()
		if r>>8 < 0xa0 || r>>8 < g>>8+0x20 {
			return false
		}
	}
	return true
}
