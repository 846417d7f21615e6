// Package app wires configuration, clients and the HTTP server once, for every
// Lambda main and for the local runner, so that they differ only in their main.
package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	"tix/internal/api"
	"tix/internal/awscfg"
	"tix/internal/clock"
	"tix/internal/config"
	"tix/internal/emailjobs"
	"tix/internal/emailsend"
	"tix/internal/logging"
	"tix/internal/queue"
	"tix/internal/secretscan"
	"tix/internal/secretscan/keylist"
	"tix/internal/store"
	"tix/internal/ticketing"
	"tix/internal/waitroom"
	"tix/internal/webhook"
)

// App is the wired service.
type App struct {
	Config config.Config
	Store  *store.Store
	Queue  *queue.Client
	Timers *queue.Timers
	Sales  *ticketing.Sales
	// Webhooks fans order events out and delivers them (docs/ARCHITECTURE.md, Webhooks).
	Webhooks *webhook.Service
	Server   *api.Server
	// Payments finds each organizer's SBP provider (live: its T-Bank terminal).
	Payments *Payments
	// Email writes the buyers' and owners' email jobs when the configuration
	// names a sender (TIX_MAIL_SENDER smtp or ses), and sends them once
	// EnableEmail gave it the sender (the deliver function); with
	// TIX_MAIL_SENDER=none it is nil and no email job is written.
	Email *emailjobs.Service
	// Leaks applies secret scanning reports (POST /v1/secret-scanning/github).
	Leaks *secretscan.Service
	// TicketKeys signs the tickets' codes; CheckIns admits them at the door (docs/door.md).
	TicketKeys *ticketing.TicketKeys
	CheckIns   *ticketing.CheckIns
	// Transfers moves tickets between holders (docs/transfers.md).
	Transfers *ticketing.Transfers
	// Waitroom is the on-sales' waiting room (docs/waiting-room.md).
	Waitroom *waitroom.Service
}

// Logger installs the structured logger the configuration asks for.
func Logger(cfg config.Config) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewJSONHandler(os.Stderr, opts)
	if cfg.LogFormat == "text" {
		h = slog.NewTextHandler(os.Stderr, opts)
	}
	l := slog.New(logging.NewHandler(h)) // records logged with a request's context carry its id
	slog.SetDefault(l)
	return l
}

// New wires what every function shares from the configuration: the store,
// the queues, the sales, webhook and payment services, the HTTP server and,
// unless TIX_MAIL_SENDER=none, the email jobs, written but not sent (the
// deliver function adds the sender: internal/app/sending).
func New(ctx context.Context, cfg config.Config, c clock.Clock) (*App, error) {
	if c == nil {
		c = clock.System{}
	}
	st, err := store.Open(ctx, store.Options{
		Table: cfg.Table, Region: cfg.Region, Endpoint: cfg.DynamoDBEndpoint,
		CursorSecret: []byte(cfg.CursorSecret), Clock: c,
	})
	if err != nil {
		return nil, err
	}
	q, err := queue.Open(ctx, cfg.Region, cfg.SQSEndpoint, cfg.QueuePrefix)
	if err != nil {
		return nil, err
	}
	timers := queue.NewTimers(q, c.Now)
	wh, err := NewWebhooks(cfg, st.Webhooks, queue.NewDeliveries(q), c)
	if err != nil {
		return nil, err
	}
	wh.Replays = st.WebhookReplays()
	srv := NewServer(cfg, st, c)
	// What this process sells, cancels or refunds drops its cached views.
	sales := NewSales(cfg, srv.Catalog.Cache.Watch(st.Sales()), timers, c)
	sales.Deps.Events = wh
	pays := NewPayments(cfg, st.Payments, wh.Box, c)
	sales.Deps.Payments = pays.Provider
	srv.Sales, srv.Webhooks = sales, wh
	notes := pays.Notifications()
	srv.PaymentNotification = func(ctx context.Context, body []byte) error {
		u, err := notes.Parse(ctx, body)
		if err != nil {
			return err
		}
		return sales.Payments.PaymentNotified(ctx, u)
	}
	a := &App{Config: cfg, Store: st, Queue: q, Timers: timers, Sales: sales, Webhooks: wh, Server: srv, Payments: pays}
	a.Waitroom = NewWaitroom(cfg, st, c)
	srv.EnableWaitingRoom(a.Waitroom, api.QueueLookups{Holds: st.Holds, Tiers: st.Catalog})
	// A refund locks the order's tickets against the door in every function
	// that can refund, whether or not it wires the rest of the door.
	sales.Orders.Door = st.Tickets()

	if cfg.Mail.Sender != "none" {
		// Jobs are written here; only the deliver function sends them
		// (internal/app/sending gives it the sender and the renderer).
		EnableEmail(a, nil, nil)
	}
	return a, nil
}

// EnableSecretScanning serves POST /v1/secret-scanning/github: reports
// verified under the key list of TIX_SECRET_SCANNING_KEYS_URL, owners alerted
// through the email jobs when email is on. Only the webhooks function (and
// the local runner) call it, so the other functions do not link it.
func EnableSecretScanning(a *App) {
	a.Leaks = &secretscan.Service{Keys: a.Store.Keys, Clock: a.Webhooks.Clock,
		Publisher: &keylist.List{URL: a.Config.SecretScanning.KeysURL, TTL: a.Config.SecretScanning.KeysTTL, Now: a.Webhooks.Clock.Now}}
	if a.Email != nil {
		a.Leaks.Alerts = a.Email
	}
	a.Server.SecretScanning = a.Leaks
}

// EnableDoor wires the door (docs/door.md): the organizers' ticket signing
// keys (sealed with the webhook keyring), the signed codes of GET
// /orders/{id}/tickets and of the ticket emails, and check-ins. The functions
// that sign or admit tickets call it (orders, checkins, deliver through
// internal/app/sending, the local runner), so the others do not link it: the
// catalog function's bootstrap has no room for it.
func EnableDoor(a *App) {
	c := a.Sales.Deps.Clock
	a.TicketKeys = &ticketing.TicketKeys{Store: a.Store.TicketKeys(), Box: a.Webhooks.Box, Clock: c, Overlap: a.Config.TicketKeyOverlap}
	a.CheckIns = &ticketing.CheckIns{Store: a.Store.Tickets(), Keys: a.TicketKeys, Catalog: a.Store.Catalog, Clock: c}
	a.CheckIns.Webhooks = a.Webhooks // ticket.checked_in for the endpoints that subscribe to it
	a.Server.EnableDoor(a.TicketKeys, a.CheckIns)
	if a.Email != nil {
		a.Email.Codes = a.TicketKeys
	}
	a.Transfers = &ticketing.Transfers{Store: a.Store.Transfers(), Door: a.Store.Tickets(), Orders: a.Sales.Orders,
		AcceptURL: TransferAcceptURL(a.Config.Payments.PublicURL)}
	if a.Email != nil {
		a.Transfers.Offers = a.Email
	}
	a.Server.EnableTransfers(a.Transfers)
}

// TransferAcceptURL is the link a transfer's recipient accepts it from:
// <TIX_PUBLIC_URL>/v1/transfers/<id>/accept?token=<secret> (nil without a
// public URL: transfers are then refused, the link would lead nowhere).
func TransferAcceptURL(publicURL string) func(id, token string) string {
	if publicURL == "" {
		return nil
	}
	return func(id, token string) string {
		return publicURL + "/v1/transfers/" + url.PathEscape(id) + "/accept?token=" + url.QueryEscape(token)
	}
}

// NewWaitroom builds the waiting room of the configuration; its tokens are
// signed with a key derived from TIX_CURSOR_SECRET.
func NewWaitroom(cfg config.Config, st *store.Store, c clock.Clock) *waitroom.Service {
	w := cfg.Waitroom
	s := waitroom.New(st.WaitingRoom(), c, waitroom.Settings{Secret: []byte(cfg.CursorSecret), Difficulty: w.Difficulty, Rate: w.Rate,
		ChallengeTTL: w.ChallengeTTL, AdmissionTTL: w.AdmissionTTL})
	s.Events = st.Catalog
	return s
}

// NewWebhooks builds the webhook service of the configuration.
func NewWebhooks(cfg config.Config, st webhook.Store, q webhook.Queue, c clock.Clock) (*webhook.Service, error) {
	box, err := webhook.NewAESBoxKeys(cfg.Webhooks.Keyring)
	if err != nil {
		return nil, fmt.Errorf("TIX_WEBHOOK_KEYRING: %w", err)
	}
	if c == nil {
		c = clock.System{}
	}
	return &webhook.Service{
		Store: st, Queue: q, Box: box, Clock: c,
		Sender:   webhook.NewSender(webhook.SenderOptions{Timeout: cfg.Webhooks.Timeout}),
		Settings: WebhookSettings(cfg),
	}, nil
}

// AllowLoopbackWebhooks lets s's test endpoints be on loopback (a receiver on
// the developer's machine): saved with http://127.0.0.1:... and reached. Only
// the local stack calls it (the local runner, tixctl against DynamoDB Local,
// the local load scripts) and tests; Lambda functions never do, since there
// loopback is the Lambda runtime API.
func AllowLoopbackWebhooks(s *webhook.Service, cfg config.Config) {
	s.Sender = webhook.NewSender(webhook.SenderOptions{Timeout: cfg.Webhooks.Timeout, AllowLoopback: true})
}

// WebhookSettings are the webhook schedule, health rules and limits of the configuration.
func WebhookSettings(cfg config.Config) webhook.Settings {
	s := webhook.DefaultSettings
	w := cfg.Webhooks
	s.Schedule, s.DomainRate, s.GlobalRate = w.Schedule, w.DomainRate, w.GlobalRate
	s.DisableFailures, s.DisableWindow, s.DisableFailuresNew, s.SilentAfter = w.DisableFailures, w.DisableWindow, w.DisableFailuresNew, w.SilentAfter
	s.RotationOverlap, s.RedeliverDelay, s.SweepGrace = w.SecretOverlap, w.RedeliverDelay, w.SweepGrace
	return s
}

// ErrNoLiveProvider: a sales service built without the organizers' terminals
// (NewSales alone) has no live provider; live orders answer 502.
var ErrNoLiveProvider = errors.New("the live SBP acquirer is not configured")

// NewSales builds the sales service. Test orders use the test SBP provider;
// New sets the live one (Payments.Provider).
func NewSales(cfg config.Config, st ticketing.SalesStores, timers ticketing.Scheduler, c clock.Clock) *ticketing.Sales {
	if c == nil {
		c = clock.System{}
	}
	return ticketing.NewSales(st, &ticketing.SalesDeps{
		Timers: timers, Clock: c,
		Payments:   NewPayments(cfg, nil, nil, c).Provider,
		Settings:   SalesSettings(cfg),
		EventCache: ticketing.NewEventCache(ticketing.DefaultEventCacheTTL),
	})
}

// SalesSettings are the sales durations and limits of the configuration.
func SalesSettings(cfg config.Config) ticketing.SalesSettings {
	s := ticketing.DefaultSalesSettings
	s.HoldTTL, s.TestOrderTTL, s.LiveOrderTTL = cfg.HoldTTL, cfg.TestOrderTTL, cfg.LiveOrderTTL
	s.HoldExtendStep, s.HoldMaxLifetime = cfg.HoldExtendStep, cfg.HoldMaxLifetime
	s.TokenSecret = []byte(cfg.CursorSecret)
	s.HoldIPRate, s.HoldIPMaxActive, s.HoldIPWindow = cfg.HoldIPRate, cfg.HoldIPMaxActive, time.Minute
	s.OrderIPMaxPending, s.OrderIPMaxUnits = cfg.OrderIPPending, cfg.OrderIPUnits
	s.PreviewIPRate, s.PreviewIPWindow = cfg.PreviewIPRate, time.Minute
	s.PaymentCheckGrace, s.RefundCheckEvery = cfg.Payments.CheckGrace, cfg.Payments.RefundCheck
	s.SweepGrace = cfg.Webhooks.SweepGrace
	return s
}

// NewServer builds the HTTP server over a store (the Sales services are set by New).
func NewServer(cfg config.Config, st *store.Store, c clock.Clock) *api.Server {
	if c == nil {
		c = clock.System{}
	}
	return &api.Server{
		Keys: st.Keys, Health: st, Clock: c, PublicURL: cfg.Payments.PublicURL,
		Catalog: &ticketing.Catalog{Store: st.Catalog, Clock: c, Cache: ticketing.NewReadCache(c, cfg.CatalogCacheTTL), Maps: &ticketing.SeatingMaps{}},
		Limits: api.Limits{
			ReadsPerWindow: cfg.ReadsPerWindow, WritesPerWindow: cfg.WritesPerWindow,
			IPReadsPerWindow: cfg.IPReads, IPWritesPerWindow: cfg.IPWrites, PKReadsPerWindow: cfg.PKReads, PKWritesPerWindow: cfg.PKWrites,
			PollReadsPerWindow: cfg.PollReads,
			Window:             cfg.RateWindow, MaxBodyBytes: cfg.MaxBodyBytes,
			KeyCacheTTL: cfg.KeyCacheTTL, KeyMissTTL: cfg.KeyMissTTL, HealthCacheTTL: cfg.HealthCacheTTL,
		},
		Edge:       api.Edge{Secret: cfg.Edge.Secret, Only: cfg.Edge.Only},
		RequestLog: st.RequestLog(),
	}
}

// HandleDeliveryMessage runs one deliveries-queue message: a webhook fan-out
// or attempt, or an email job (kind "email").
func (a *App) HandleDeliveryMessage(ctx context.Context, body []byte) error {
	if emailjobs.IsSESNotification(body) {
		// SES's bounces and complaints, through the configuration set's SNS
		// topic into this queue: the addresses are never written to again.
		n, err := emailjobs.ApplySESNotification(ctx, a.Store.Emails, body)
		if n > 0 {
			slog.InfoContext(ctx, "addresses suppressed", "count", n)
		}
		return err
	}
	var m emailjobs.Message
	if json.Unmarshal(body, &m) == nil && m.Kind == emailjobs.KindEmail {
		if m.JobID == "" || a.Email == nil {
			return fmt.Errorf("%w: %s", webhook.ErrMalformedMessage, body)
		}
		if a.Email.Sender == nil {
			return ErrNoSender
		}
		return a.Email.Handle(ctx, m)
	}
	return a.Webhooks.HandleMessage(ctx, body)
}

// ErrNoSender: an email job's message reached a process wired without the
// sender (app.New alone; the deliver function wires internal/app/sending).
var ErrNoSender = errors.New("this process writes email jobs but sends none: the deliver function (internal/app/sending) sends them")

// EnableEmail turns email on: the email pipeline follows the outbox (the
// webhook fan-out writes the buyers' jobs in each event's dispatch), disabled
// endpoints alert their owners, GET /orders/{id} shows the jobs, and the
// deliveries queue carries their messages, sent through sender as r renders
// them. sender and r are nil in a process that only writes jobs.
func EnableEmail(a *App, sender emailsend.Sender, r emailjobs.Renderer) *emailjobs.Service {
	settings := emailjobs.DefaultSettings
	if n := a.Config.Mail.RecipientDailyCap; n > 0 {
		settings.RecipientDailyCap = n
	}
	a.Email = &emailjobs.Service{Store: a.Store.Emails, Orders: a.Store.Orders, Events: a.Store.Catalog, Queue: queue.NewDeliveries(a.Queue), Sender: sender, Renderer: r,
		Clock: a.Webhooks.Clock, Settings: settings}
	a.Webhooks.Subscribers = []webhook.Subscriber{a.Email}
	a.Webhooks.Alerts = a.Email
	a.Sales.Deps.Alerts = a.Email
	a.Server.Email = a.Email
	a.Server.KeyIPs = &emailjobs.IPWatch{Store: a.Store.Keys, Mail: a.Email}
	a.Server.CeilingAlerts = &emailjobs.CeilingWatch{Mail: a.Email}
	if a.Leaks != nil {
		a.Leaks.Alerts = a.Email
	}
	return a.Email
}

// Sweep finds the work whose message was lost: timers overdue by
// TIX_SWEEP_GRACE (pending orders past their expiry, refunds past their
// settlement), webhook fan-outs and attempts overdue by the same grace, email
// jobs. What it logs as lost work was overdue past the grace, so not the
// queues' own work racing it. EventBridge runs it every minute on AWS; the
// local runner on a ticker.
func (a *App) Sweep(ctx context.Context) error {
	timers, oerr := a.Sales.Orders.SweepDue(ctx, sweepBatch)
	rep, werr := a.Webhooks.Sweep(ctx)
	var emails int
	var eerr error
	if a.Email != nil {
		emails, eerr = a.Email.Sweep(ctx)
	}
	if timers > 0 || rep.Events > 0 || rep.Deliveries > 0 || emails > 0 {
		slog.InfoContext(ctx, "sweep did lost work", "timers", timers, "events", rep.Events, "deliveries", rep.Deliveries, "emails", emails)
	}
	return errors.Join(oerr, werr, eerr)
}

// sweepBatch bounds the timers one sweep handles (the rest wait a minute).
const sweepBatch = 500

// HandleTimerMessage runs one timers-queue message: a timer that is not due yet
// is sent on (another hop), a due one is done.
func (a *App) HandleTimerMessage(ctx context.Context, body []byte) error {
	return queue.HandleTimer(ctx, body, a.Sales.Deps.Clock.Now(), a.Timers, a.Sales.Orders.HandleTimer)
}

// FromEnv is what the HTTP API and timers functions do first: Start(New).
func FromEnv() *App { return Start(New) }

// Start reads the secrets whose ARN the stack passes from Secrets Manager,
// reads and validates the configuration from the environment, installs the
// logger and wires the service with build (New, or internal/app/sending.New
// for the deliver function). It exits with the reason when a secret or the
// configuration is invalid.
func Start(build func(context.Context, config.Config, clock.Clock) (*App, error)) *App {
	getenv, err := awscfg.SecretsFromEnv(context.Background(), os.Getenv)
	if err != nil {
		slog.Error("secrets", "error", err)
		os.Exit(1)
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		slog.Error("configuration", "error", err)
		os.Exit(1)
	}
	Logger(cfg)
	a, err := build(context.Background(), cfg, nil)
	if err != nil {
		slog.Error("start", "error", err)
		os.Exit(1)
	}
	return a
}
