package ticketing

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"log/slog"
	"math/big"
	"net/netip"
	"time"

	"tix/internal/clock"
)

// Sales is the selling side of the contract: seat holds, orders, payment,
// tickets and refunds, as one service per role over shared SalesDeps (a plain
// struct of them: callers use the service they need). It knows nothing of
// HTTP or AWS.
type Sales struct {
	Deps     *SalesDeps
	Holds    *Holds       // seat holds
	Pricing  *Pricing     // prices and promo codes
	Orders   *Orders      // orders: creation, reads, lifecycle, timers, refunds
	Payments *Payments    // the acquirer's word: notifications, reconciliation, late and stray payments
	Tests    *TestHelpers // the test helpers (test environment only)
}

// SalesDeps is what every sales service shares. Changing a field changes it
// for all of them.
type SalesDeps struct {
	// Payments is the SBP provider of an organizer's environment: the test
	// provider, or the organizer's own acquiring terminal for live orders.
	Payments func(ctx context.Context, organizerID string, env Environment) (PaymentProvider, error)
	Timers   Scheduler // nil: expiry and settlement happen only on reads
	// Events is told of each outbox event once its transaction committed (nil:
	// the webhook sweep finds the event later).
	Events EventPublisher
	// Alerts tells owners of what needs them (nil: it is only logged).
	Alerts   OwnerAlerts
	Clock    clock.Clock
	Settings SalesSettings
	// EventCache keeps the events orders are priced from for a short while
	// (nil: every order reads its event).
	EventCache *EventCache
}

// SalesStores are the storage roles of the sales services (ports.go), each
// service taking the ones it uses.
type SalesStores struct {
	Catalog     SalesCatalog
	Idempotency IdempotencyStore
	Limits      ClientLimits
	HoldStore   HoldStore
	OrderStore  OrderStore
	Due         DueTimerStore
	// Strays records stray payments (see StrayPayment); nil: none are recorded.
	Strays StrayStore
	// Tickets keeps the tickets' door state: admitted tickets show used, and a
	// refund locks the tickets unless one was admitted.
	Tickets TicketStore
}

// Holds takes and releases seat holds.
type Holds struct {
	*SalesDeps
	Catalog     SalesCatalog
	Idempotency IdempotencyStore
	Limits      ClientLimits
	HoldStore   HoldStore
	orders      *Orders
	seatViews   seatViews   // best-available's picks (best_available.go)
	seatingMaps SeatingMaps // seating_cache.go
}

// Pricing prices selections and checks promo codes.
type Pricing struct {
	*SalesDeps
	Catalog   SalesCatalog
	Limits    ClientLimits
	HoldStore HoldStore
}

// Orders creates orders, reads them, and moves them through their lifecycle
// (payment, expiry, refunds, due timers).
type Orders struct {
	*SalesDeps
	Catalog     SalesCatalog
	Idempotency IdempotencyStore
	Limits      ClientLimits
	OrderStore  OrderStore
	Due         DueTimerStore
	// Door is the tickets' door state (nil: tickets are never used).
	Door     TicketStore
	pricing  *Pricing
	payments *Payments
}

// Payments applies what the acquirer says of orders' payments: notifications,
// reconciliation, late payments and stray payments.
type Payments struct {
	*SalesDeps
	Catalog    SalesCatalog
	OrderStore OrderStore
	Strays     StrayStore
	orders     *Orders
}

// NewSales wires the sales services over st and d.
func NewSales(st SalesStores, d *SalesDeps) *Sales {
	pricing := &Pricing{SalesDeps: d, Catalog: st.Catalog, Limits: st.Limits, HoldStore: st.HoldStore}
	orders := &Orders{SalesDeps: d, Catalog: st.Catalog, Idempotency: st.Idempotency, Limits: st.Limits,
		OrderStore: st.OrderStore, Due: st.Due, Door: st.Tickets, pricing: pricing}
	payments := &Payments{SalesDeps: d, Catalog: st.Catalog, OrderStore: st.OrderStore, Strays: st.Strays, orders: orders}
	orders.payments = payments
	holds := &Holds{SalesDeps: d, Catalog: st.Catalog, Idempotency: st.Idempotency, Limits: st.Limits,
		HoldStore: st.HoldStore, orders: orders}
	return &Sales{Deps: d, Holds: holds, Pricing: pricing, Orders: orders, Payments: payments,
		Tests: &TestHelpers{orders: orders, holds: holds}}
}

// SalesSettings are the durations and limits of the sales path (all configurable).
type SalesSettings struct {
	HoldTTL time.Duration // seat hold lifetime (default 15 min)
	// A hold extension adds HoldExtendStep to a hold's expiry, up to
	// HoldMaxLifetime after the hold was made (ExtendHold).
	HoldExtendStep  time.Duration
	HoldMaxLifetime time.Duration
	TestOrderTTL    time.Duration // a pending test order expires after this (default 15 min)
	LiveOrderTTL    time.Duration // a pending live order's payment window (default 15 min)
	LeaseTTL        time.Duration // an order creation's lease on its Idempotency-Key, renewed while it works (lease.go)
	TokenSecret     []byte        // derives poll tokens (never stored)
	// Publishable-key holds per client IP.
	HoldIPRate      int
	HoldIPWindow    time.Duration
	HoldIPMaxActive int
	// Publishable-key pending orders per client network and event.
	OrderIPMaxPending int
	OrderIPMaxUnits   int
	// Publishable-key price previews (and orders with a promo code) per client
	// network per PreviewIPWindow: promo codes cannot be guessed faster.
	PreviewIPRate   int
	PreviewIPWindow time.Duration
	// Live payment reconciliation: how long after a live order is cancelled
	// the acquirer is asked once more whether it was paid after all, and how
	// often a live refund's progress is asked for until it is settled.
	PaymentCheckGrace time.Duration
	RefundCheckEvery  time.Duration
	// SweepGrace is how overdue a timer is before the sweep takes its message
	// for lost and does its work (TIX_SWEEP_GRACE): until then the timers
	// queue, whose message may be about to be consumed, does it alone.
	SweepGrace time.Duration
}

// DefaultSalesSettings are the contract's figures and our documented choices.
var DefaultSalesSettings = SalesSettings{
	HoldTTL: 15 * time.Minute, TestOrderTTL: 15 * time.Minute, LiveOrderTTL: 15 * time.Minute,
	HoldExtendStep: DefaultHoldExtendStep, HoldMaxLifetime: DefaultHoldMaxLifetime,
	LeaseTTL: 5 * time.Second, HoldIPRate: 20, HoldIPWindow: time.Minute, HoldIPMaxActive: 3,
	OrderIPMaxPending: 3, OrderIPMaxUnits: 10, PreviewIPRate: 30, PreviewIPWindow: time.Minute,
	PaymentCheckGrace: 15 * time.Minute, RefundCheckEvery: 10 * time.Minute, SweepGrace: time.Minute,
}

// Caller is who makes a sales request.
type Caller struct {
	Tenant
	KeyID       string
	Publishable bool
	IP          string // the client's network (ClientNetwork of the IP API Gateway saw)
	// Admit, when set, is called once the request passed validation and
	// before any store work; its error ends the request (the API charges a
	// publishable key's ceiling there, so invalid requests spend none of it).
	Admit func(ctx context.Context) error
}

// admit runs c.Admit (see Caller).
func (c Caller) admit(ctx context.Context) error {
	if c.Admit == nil {
		return nil
	}
	return c.Admit(ctx)
}

// ClientNetwork is what per-client limits count: an IPv4 address, or the /64 of
// an IPv6 address (one subscriber usually holds a whole /64, so counting single
// IPv6 addresses would let one client pose as billions).
func ClientNetwork(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.WithZone("").Prefix(64)
	return p.String()
}

// admitPromoTry counts a publishable key's preview, or order with a promo code,
// against its client's budget (429 when spent). Secret keys are not limited here.
func (s *Pricing) admitPromoTry(ctx context.Context, c Caller) error {
	if !c.Publishable {
		return nil
	}
	now := s.now()
	ok, reset, err := s.Limits.AdmitClientRate(ctx, "promo#"+c.OrganizerID+"#"+string(c.Environment)+"#"+c.IP,
		s.Settings.PreviewIPRate, s.Settings.PreviewIPWindow, now)
	if err != nil {
		return err
	}
	if !ok {
		return &Error{Code: CodeRateLimited, RetryAfter: reset.Sub(now),
			Message: fmt.Sprintf("too many price previews from this IP address (at most %d per %s, orders with a promo code included); retry after the Retry-After delay",
				s.Settings.PreviewIPRate, s.Settings.PreviewIPWindow)}
	}
	return nil
}

func (s *SalesDeps) now() time.Time { return s.Clock.Now().UTC() }

func (s *SalesDeps) orderTTL(env Environment) time.Duration {
	if env == EnvLive {
		return s.Settings.LiveOrderTTL
	}
	return s.Settings.TestOrderTTL
}

const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newID is prefix plus n random base62 characters.
func newID(prefix string, n int) string { return prefix + randomString(idAlphabet, n) }

func randomString(alphabet string, n int) string {
	b := make([]byte, n)
	m := big.NewInt(int64(len(alphabet)))
	for i := range b {
		v, err := rand.Int(rand.Reader, m)
		if err != nil {
			panic("crypto/rand failed: " + err.Error())
		}
		b[i] = alphabet[v.Int64()]
	}
	return string(b)
}

// PollToken is the bearer-less token for polling one order. It is derived from
// the order id with a server secret, so nothing is stored (a replay returns the
// same token) and it proves nothing but the right to read that order's status.
func (s *SalesDeps) PollToken(orderID string) string {
	m := hmac.New(sha256.New, s.Settings.TokenSecret)
	m.Write([]byte("tix-poll-token-v1\x00" + orderID))
	return "pt_" + base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:24])
}

// CheckPollToken reports whether token is the poll token of orderID (constant time).
func (s *SalesDeps) CheckPollToken(orderID, token string) bool {
	return hmac.Equal([]byte(token), []byte(s.PollToken(orderID)))
}

func (s *SalesDeps) publish(ctx context.Context, ev *OrderEvent) {
	if s.Events != nil {
		s.Events.Publish(ctx, ev.ID)
	}
}

func (s *SalesDeps) schedule(ctx context.Context, kind, orderID string, due time.Time) {
	if s.Timers == nil {
		return
	}
	if err := s.Timers.Schedule(ctx, Timer{Kind: kind, OrderID: orderID, Due: due}); err != nil {
		// Not fatal: reads apply overdue expiry and settlement themselves.
		slog.WarnContext(ctx, "schedule timer", "kind", kind, "order_id", orderID, "error", err)
	}
}
