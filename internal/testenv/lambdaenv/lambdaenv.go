// Package lambdaenv wires a whole App over a fresh DynamoDB Local table and
// fresh fauxqs queues, with an organizer, a secret test key (bound to the source
// IP of the sample events) and a small catalog: what the functions' tests feed
// the sample events of events/ to.
package lambdaenv

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"tix/internal/app"
	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/config"
	"tix/internal/emailrender"
	"tix/internal/emailsend"
	"tix/internal/payment"
	"tix/internal/payment/tbank"
	"tix/internal/secretscan/scantest"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// Env is the wired app and the placeholders the sample events use.
type Env struct {
	App  *app.App
	Vars map[string]string
	// keyID is the id of the secret test key ({{SK_TEST}}).
	keyID string
}

// New builds the environment on the system clock.
func New(t *testing.T) *Env {
	t.Helper()
	return NewWithClock(t, nil)
}

// NewWithClock builds the environment with every part of the app on clock c
// (nil: the system clock), so that a test can move time instead of waiting.
func NewWithClock(t *testing.T, c clock.Clock) *Env {
	t.Helper()
	return NewWithSettings(t, c, nil)
}

// NewWithSettings builds the environment on clock c with more TIX_* settings
// (a test's bank simulator, shorter timings).
func NewWithSettings(t *testing.T, c clock.Clock, settings map[string]string) *Env {
	t.Helper()
	ctx := context.Background()
	st := testenv.Store(t, c)
	prefix := testenv.UniqueName("tix-fn")
	// The app reaches DynamoDB Local through a recorder (Record, CheckAccess).
	dynamo := newRecorder(t, testenv.DynamoEndpoint(t))
	reporter := scantest.New() // GitHub's secret scanning, for webhooks-secret-scanning-report.json
	t.Cleanup(reporter.Close)
	cfg, err := config.Load(func(k string) string {
		switch k {
		case "TIX_SECRET_SCANNING_KEYS_URL":
			if v := settings[k]; v != "" {
				return v
			}
			return reporter.KeysURL()
		case "TIX_CURSOR_SECRET":
			return string(testenv.CursorSecret)
		case "TIX_TABLE":
			return st.TableName()
		case "TIX_DYNAMODB_ENDPOINT":
			return dynamo
		case "TIX_SQS_ENDPOINT":
			return testenv.SQSEndpoint(t)
		case "TIX_QUEUE_PREFIX":
			return prefix
		case "TIX_WEBHOOK_KEYRING":
			return config.LocalKeyring
		}
		return settings[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(ctx, cfg, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Queue.EnsureQueues(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	if err := st.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: "org_l", Name: "L", CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	secret := auth.NewSecret(auth.Secret, ticketing.EnvTest)
	keyID := auth.NewKeyID()
	// The key only accepts the source IP API Gateway reports, not the X-Forwarded-For in the events.
	if err := st.Keys.CreateKey(ctx, auth.Key{ID: keyID, OrganizerID: "org_l", Type: auth.Secret, Environment: ticketing.EnvTest,
		Scopes: auth.AllScopes, AllowedIPs: []string{"198.51.100.7"}, CreatedAt: now}, auth.Hash(secret)); err != nil {
		t.Fatal(err)
	}
	slug := "lambda-show"
	ev := &ticketing.Event{ID: "evt_lambda", OrganizerID: "org_l", Ref: "l", Status: ticketing.EventPublished, Kind: ticketing.KindSingle,
		Title: "Lambda Show", Slug: &slug, City: "Kazan", Venue: "Hall", StartsAt: now.Add(48 * time.Hour), EndsAt: now.Add(50 * time.Hour),
		Timezone: "Europe/Moscow", Currency: "RUB", CreatedAt: now, UpdatedAt: now, HasSeating: true,
		Tiers: []ticketing.Tier{
			{ID: "tier_l", Name: "GA", Price: 100000, Capacity: 20, PersonsIncluded: 1, Color: "#000000"},
			{ID: "tier_seat", Name: "Seats", Price: 200000, Capacity: 4, PersonsIncluded: 1, Color: "#FF0000", ZoneID: "zone_s", Seated: true},
		},
		Zones: []ticketing.ZoneSummary{{ID: "zone_s", Name: "Stalls", Type: ticketing.ZoneSeated, PrimaryTierID: "tier_seat", SeatCount: 4}},
		Seating: &ticketing.Seating{LayoutID: "lay_l", Width: 10, Height: 10, Zones: []ticketing.Zone{{
			ID: "zone_s", Name: "Stalls", Type: ticketing.ZoneSeated, Color: "#FF0000", PrimaryTierID: "tier_seat",
			Seats: seats(4),
		}}},
	}
	if err := st.Catalog.PutEvent(ctx, ev); err != nil {
		t.Fatal(err)
	}
	leaked := auth.NewSecret(auth.Secret, ticketing.EnvTest)
	if err := st.Keys.CreateKey(ctx, auth.Key{ID: auth.NewKeyID(), OrganizerID: "org_l", Type: auth.Secret, Environment: ticketing.EnvTest,
		Scopes: auth.AllScopes, Last4: leaked[len(leaked)-4:], CreatedAt: now}, auth.Hash(leaked)); err != nil {
		t.Fatal(err)
	}
	report := []byte(strings.ReplaceAll(SecretScanReport, "{{LEAKED_SK}}", leaked))
	return &Env{App: a, keyID: keyID, Vars: map[string]string{"SK_TEST": secret, "EVENT_ID": "evt_lambda", "EVENT_SLUG": slug,
		"TIER_ID": "tier_l", "SEAT_ID": "seat_l1", "TBANK_TOKEN": connectTerminal(t, a),
		"LEAKED_SK": leaked, "GITHUB_KEY_ID": reporter.CurrentKeyID(), "GITHUB_SIGNATURE": reporter.Sign(reporter.CurrentKeyID(), report)}}
}

// SecretScanReport is the body of webhooks-secret-scanning-report.json: GitHub
// reports {{LEAKED_SK}}, a secret key of org_l, found in public; the event
// carries the signature of the body with the placeholder replaced.
const SecretScanReport = `[{"token":"{{LEAKED_SK}}","type":"tix_secret_key","url":"https://github.com/octo/shop/blob/0123abc/.env","source":"content"}]`

// The T-Bank terminal of org_l (a test's bank simulator adds it to accept
// org_l's live payments).
const (
	TerminalKey      = "TixLambdaDEMO"
	TerminalPassword = "lambda-terminal-password"
)

// TBankNotification is the body of orders-payment-notification.json without
// its Token: a notification of org_l's terminal for an unknown order.
const TBankNotification = `{"TerminalKey":"TixLambdaDEMO","OrderId":"ord_unknown","Success":true,"Status":"NEW","PaymentId":"7000000001","ErrorCode":"0","Amount":100000}`

// connectTerminal connects the T-Bank terminal TixLambdaDEMO to org_l (its
// password sealed under the app's keyring) and returns the Token the bank
// would sign TBankNotification with.
func connectTerminal(t *testing.T, a *app.App) string {
	t.Helper()
	acct := ticketing.PaymentAccount{OrganizerID: "org_l", Acquirer: ticketing.AcquirerTBank, TerminalKey: TerminalKey, Taxation: "osn", VAT: "none"}
	sealed, err := a.Webhooks.Box.Seal(TerminalPassword, payment.PasswordAAD(&acct))
	if err != nil {
		t.Fatal(err)
	}
	acct.SealedPassword = sealed
	if err := a.Store.Payments.PutPaymentAccount(context.Background(), acct); err != nil {
		t.Fatal(err)
	}
	signed, err := tbank.SignNotification([]byte(TBankNotification), TerminalPassword)
	if err != nil {
		t.Fatal(err)
	}
	var n struct{ Token string }
	if err := json.Unmarshal(signed, &n); err != nil {
		t.Fatal(err)
	}
	return n.Token
}

// tenant is the organizer environment of the test key.
var tenant = ticketing.Tenant{OrganizerID: "org_l", Environment: ticketing.EnvTest}

// AddOrders creates, through the real sales service, the one-ticket test
// orders (tier_l) that the orders-*.json events act on, and adds their
// placeholders to Vars. Each mutating event has an order of its own, so the
// expected statuses do not depend on the order the events run in:
//
//	ORDER_ID, POLL_TOKEN  a pending order and its poll token (reads; tickets and refund answer 409)
//	PAYABLE_ORDER_ID      a pending order that simulate-payment pays
//	PAID_ORDER_ID         a paid order (tickets; it has no refund)
//	REFUNDABLE_ORDER_ID   a paid order that POST /refund refunds
//	REFUNDING_ORDER_ID    a paid order whose refund has started (GET /refund)
//	CANCELLABLE_ORDER_ID  a pending order that POST /cancel cancels
//	EXPIRABLE_ORDER_ID    a pending order that the expire test helper expires
//	LATE_PAYABLE_ORDER_ID a pending order that the late-payment test helper pays late
//	SETTLEABLE_ORDER_ID   a paid order whose refund the refund-outcome test helper settles
//	EXPIRABLE_RESERVATION_ID  a live hold's reservation (seat_l4) the seat-holds expire test helper expires
//
// It is not part of New: the orders' stock, expiry markers and outbox events
// would change what the timers and webhook tests observe.
func (e *Env) AddOrders(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	sales := e.App.Sales
	order := func(name string) string {
		t.Helper()
		tier, qty, email := "tier_l", 1, "fixture@example.com"
		res, err := sales.Orders.CreateOrder(ctx, ticketing.Caller{Tenant: tenant, KeyID: e.keyID}, "fixture-"+name, ticketing.OrderRequest{
			Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty,
		})
		if err != nil {
			t.Fatalf("create the %s order: %v", name, err)
		}
		return res.Order.ID
	}
	paid := func(name string) string {
		t.Helper()
		id := order(name)
		if o, err := sales.Orders.Simulate(ctx, tenant, id, ticketing.OutcomePaid); err != nil || o.Status != ticketing.OrderPaid {
			t.Fatalf("pay the %s order: %v", name, err)
		}
		return id
	}
	pending := order("pending")
	e.Vars["ORDER_ID"] = pending
	e.Vars["POLL_TOKEN"] = sales.Deps.PollToken(pending)
	e.Vars["PAYABLE_ORDER_ID"] = order("payable")
	e.Vars["PAID_ORDER_ID"] = paid("paid")
	e.Vars["REFUNDABLE_ORDER_ID"] = paid("refundable")
	refunding := paid("refunding")
	if _, err := sales.Orders.RefundOrder(ctx, tenant, refunding, nil); err != nil {
		t.Fatalf("refund the refunding order: %v", err)
	}
	e.Vars["REFUNDING_ORDER_ID"] = refunding
	e.Vars["CANCELLABLE_ORDER_ID"] = order("cancellable")
	e.Vars["EXPIRABLE_ORDER_ID"] = order("expirable")
	e.Vars["LATE_PAYABLE_ORDER_ID"] = order("late-payable")
	settleable := paid("settleable")
	if _, err := sales.Orders.RefundOrder(ctx, tenant, settleable, nil); err != nil {
		t.Fatalf("refund the settleable order: %v", err)
	}
	e.Vars["SETTLEABLE_ORDER_ID"] = settleable
	evt := "evt_lambda"
	h, err := sales.Holds.CreateHold(ctx, ticketing.Caller{Tenant: tenant, KeyID: e.keyID}, "", ticketing.HoldRequest{EventID: &evt, SeatIDs: []string{"seat_l4"}})
	if err != nil {
		t.Fatalf("hold seat_l4: %v", err)
	}
	e.Vars["EXPIRABLE_RESERVATION_ID"] = h.Seats[0].ReservationID
}

// AddHold holds seat_l3 of evt_lambda through the real sales service and
// adds EXTENDABLE_RESERVATION_ID to Vars: what holds-extend.json extends.
func (e *Env) AddHold(t *testing.T) {
	t.Helper()
	evt := "evt_lambda"
	h, err := e.App.Sales.Holds.CreateHold(context.Background(), ticketing.Caller{Tenant: tenant, KeyID: e.keyID}, "",
		ticketing.HoldRequest{EventID: &evt, SeatIDs: []string{"seat_l3"}})
	if err != nil {
		t.Fatalf("hold seat_l3: %v", err)
	}
	e.Vars["EXTENDABLE_RESERVATION_ID"] = h.Seats[0].ReservationID
}

// AddWebhookDelivery creates a verified webhook endpoint and a failed delivery
// of a real order.paid event to it (fanned out by the real service), and adds
// DELIVERY_ID to Vars: what webhooks-redeliver.json redelivers; and a replay
// of that endpoint (ENDPOINT_ID, REPLAY_ID, REPLAY_SINCE an hour ago). Nothing
// consumes the deliveries queue in the functions' tests, so nothing is sent to
// the endpoint's URL.
func (e *Env) AddWebhookDelivery(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	a := e.App
	ep, _, err := a.Webhooks.CreateEndpoint(ctx, webhook.NewEndpoint{
		OrganizerID: tenant.OrganizerID, Environment: tenant.Environment, URL: "https://example.com/tix-webhooks",
	})
	if err != nil {
		t.Fatal(err)
	}
	// Verification POSTs to the URL; the fixture marks the endpoint verified instead.
	now := time.Now().UTC()
	ep.Verified, ep.VerifiedAt = true, &now
	if err := a.Store.Webhooks.UpdateEndpoint(ctx, ep, false); err != nil {
		t.Fatal(err)
	}
	tier, qty, email := "tier_l", 1, "fixture@example.com"
	res, err := a.Sales.Orders.CreateOrder(ctx, ticketing.Caller{Tenant: tenant, KeyID: e.keyID}, "fixture-webhook", ticketing.OrderRequest{
		Buyer: &ticketing.BuyerInput{Email: &email}, TierID: &tier, Quantity: &qty,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Sales.Orders.Simulate(ctx, tenant, res.Order.ID, ticketing.OutcomePaid); err != nil {
		t.Fatal(err)
	}
	ids, err := a.Store.Webhooks.UndispatchedEvents(ctx, time.Now().Add(time.Minute), 10)
	if err != nil || len(ids) != 1 {
		t.Fatalf("undispatched events %v, %v; want the one order.paid", ids, err)
	}
	if err := a.Webhooks.Fanout(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	d, err := a.Store.Webhooks.GetDelivery(ctx, webhook.DeliveryID(ids[0], ep.ID))
	if err != nil {
		t.Fatalf("the fan-out made no delivery to the fixture endpoint: %v", err)
	}
	// Only a delivery that is no longer pending can be redelivered.
	failed := time.Now().UTC()
	d.Status, d.FailedAt, d.RecheckAt, d.Attempts = webhook.DeliveryFailed, &failed, nil, d.MaxAttempts
	if err := a.Store.Webhooks.SaveDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	e.Vars["DELIVERY_ID"] = d.ID
	// A replay of the endpoint (webhooks-get-replay.json reads it; webhooks-replay.json starts another).
	since := time.Now().Add(-time.Hour)
	rp, err := a.Webhooks.StartReplay(ctx, webhook.ReplayRequest{OrganizerID: tenant.OrganizerID, Environment: tenant.Environment,
		EndpointID: ep.ID, Since: since, IdempotencyKey: "fixture-replay"})
	if err != nil {
		t.Fatal(err)
	}
	e.Vars["ENDPOINT_ID"], e.Vars["REPLAY_ID"], e.Vars["REPLAY_SINCE"] = ep.ID, rp.ID, strconv.FormatInt(since.Unix(), 10)
	// A request of the fixture's key in the request log (webhooks-request-log.json reads it).
	logged := auth.RequestRecord{RequestID: "req_fixturelogged0000000000", OrganizerID: tenant.OrganizerID, Environment: tenant.Environment,
		KeyID: e.keyID, Method: "POST", Path: "/v1/orders", Status: 201, CreatedAt: time.Now().UTC()}
	if err := a.Store.RequestLog().PutRequest(ctx, logged); err != nil {
		t.Fatal(err)
	}
	e.Vars["LOGGED_REQUEST_ID"] = logged.RequestID
}

func seats(n int) []ticketing.Seat {
	var out []ticketing.Seat
	for i := 1; i <= n; i++ {
		row := "A"
		num := i
		out = append(out, ticketing.Seat{ID: fmt.Sprintf("seat_l%d", i), Label: fmt.Sprintf("A-%d", i), Row: &row, Number: &num, X: float64(i), Y: 1})
	}
	return out
}

// RunAPIEvents feeds every events/<prefix>*.json to the Lambda handler h and
// checks the status each expects, that the body is JSON (the HTML API
// reference and its script excepted) and the request id; the dashboard's
// pages are HTML under their Content-Security-Policy.
func RunAPIEvents(t *testing.T, h func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), prefix string, vars map[string]string) {
	t.Helper()
	for _, sample := range testenv.LoadAPIEvents(t, prefix, vars) {
		t.Run(sample.Name, func(t *testing.T) {
			res, err := h(context.Background(), sample.Event)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != sample.Status {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, sample.Status, res.Body)
			}
			if strings.HasPrefix(sample.Event.RawPath, "/v1/dashboard") {
				// The organizer dashboard's pages: HTML under its CSP, or a redirect.
				if ct := res.Headers["Content-Type"]; res.StatusCode != http.StatusSeeOther && !strings.HasPrefix(ct, "text/html") {
					t.Errorf("Content-Type %q, want an HTML page", ct)
				}
				if res.Headers["Content-Security-Policy"] == "" {
					t.Errorf("no Content-Security-Policy: %v", res.Headers)
				}
				return
			}
			if ct := res.Headers["Content-Type"]; strings.HasPrefix(sample.Event.RawPath, "/v1/docs") && res.StatusCode == 200 {
				// The API reference page and its script.
				if !strings.HasPrefix(ct, "text/html") && !strings.HasPrefix(ct, "text/javascript") {
					t.Fatalf("Content-Type %q, want the HTML page or its script", ct)
				}
			} else if strings.HasPrefix(sample.Event.RawPath, "/v1/transfers/") && strings.HasSuffix(sample.Event.RawPath, "/accept") ||
				strings.HasPrefix(sample.Event.RawQueryString, "pk=") {
				// A transfer's accept page or the hosted queue page, under its Content-Security-Policy.
				if !strings.HasPrefix(ct, "text/html") || res.Headers["Content-Security-Policy"] == "" {
					t.Fatalf("Content-Type %q, CSP %q: want the HTML page", ct, res.Headers["Content-Security-Policy"])
				}
			} else if strings.HasPrefix(sample.Event.RawPath, "/v1/payment-notifications/") && res.StatusCode == 200 {
				if res.Body != "OK" { // what the bank waits for
					t.Fatalf("body %q, want OK", res.Body)
				}
			} else if !json.Valid([]byte(res.Body)) {
				t.Fatalf("body is not JSON: %.500s", res.Body)
			}
			if !strings.HasSuffix(sample.Event.RawPath, "/health") && res.Headers["Tix-Request-Id"] == "" {
				t.Errorf("no Tix-Request-Id: %v", res.Headers)
			}
		})
	}
}

// EnableEmail turns email on in the app as a deployed stack with a sender
// has it (TIX_MAIL_SENDER smtp or ses), with a sender that accepts every
// message and sends nothing: the table calls of the email path (jobs, the
// secret keys' distinct-IP records) then show in Record.
func (e *Env) EnableEmail() {
	app.EnableEmail(e.App, nullSender{}, emailrender.TextRenderer{})
}

type nullSender struct{}

func (nullSender) Send(context.Context, emailsend.Message) (string, error) { return "null", nil }
