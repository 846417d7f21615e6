// Package tbanksim is a local simulator of T-Bank Internet Acquiring API v2
// for SBP payments: the same endpoints, answer envelopes, error codes, token
// checks and payment state machine as the bank, signed notifications retried
// until the receiver answers OK, commands to pay, reject or expire a payment,
// and switches that inject the faults a live acquirer shows (duplicate,
// out-of-order, delayed and lost notifications, CONFIRMED after the deadline,
// 5xx and timeouts on Init, unknown root fields in notifications).
//
// Switching from the simulator to the bank changes only the base URL and the
// terminal's credentials: the client in package tbank cannot tell them apart.
package tbanksim

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"tix/internal/payment/tbank"
)

// Options configures a simulator. Zero values take the defaults noted.
type Options struct {
	// Now is the simulator's clock (time.Now).
	Now func() time.Time
	// NotifyRetry is the pause between delivery attempts of a notification
	// the receiver did not acknowledge (1s).
	NotifyRetry time.Duration
	// RefundAfter is how long an SBP refund stays ASYNC_REFUNDING (2s).
	RefundAfter time.Duration
	// HoldFor is how long the out-of-order fault holds a notification back
	// when no newer one overtakes it (1s).
	HoldFor time.Duration
	// DefaultDue is a payment's lifetime without RedirectDueDate (24h).
	DefaultDue time.Duration
	// Sweep is how often unpaid payments past their deadline are expired,
	// with their DEADLINE_EXPIRED notification, untouched by any call (1s).
	Sweep time.Duration
	// HTTP sends notifications (a client with a 5s timeout).
	HTTP *http.Client
	// Log receives one record per notification attempt (discarded).
	Log *slog.Logger
}

// Faults are the switches of the faults a live acquirer shows. They apply to
// what happens after they are set.
type Faults struct {
	// Duplicate delivers every notification twice.
	Duplicate bool `json:"duplicate"`
	// OutOfOrder holds each notification back until the payment's next one
	// has been delivered (or HoldFor passes), so a stale state arrives last.
	OutOfOrder bool `json:"out_of_order"`
	// DelayMS delays every notification's first attempt.
	DelayMS int64 `json:"delay_ms"`
	// Lose drops notifications: they stay undelivered until Resend.
	Lose bool `json:"lose"`
	// ExtraField adds a root field tix has never seen to notifications,
	// covered by the Token as the bank's new fields are.
	ExtraField bool `json:"extra_field"`
	// ConfirmAfterDeadline lets a pay command confirm a payment whose
	// RedirectDueDate has passed: money that arrives late.
	ConfirmAfterDeadline bool `json:"confirm_after_deadline"`
	// InitFailures answers the next N Init calls with HTTP 503, creating nothing.
	InitFailures int `json:"init_failures"`
	// InitTimeouts makes the next N Init calls create the payment and then
	// answer only after InitHangMS: the caller times out not knowing.
	InitTimeouts int   `json:"init_timeouts"`
	InitHangMS   int64 `json:"init_hang_ms"`
}

// Payment is the simulator's record of one payment session.
type Payment struct {
	ID              string    `json:"payment_id"`
	TerminalKey     string    `json:"terminal_key"`
	OrderID         string    `json:"order_id"`
	Amount          int64     `json:"amount"`
	Refunded        int64     `json:"refunded"`
	Status          string    `json:"status"`
	Due             time.Time `json:"due"`
	NotificationURL string    `json:"notification_url,omitempty"`
	QR              string    `json:"qr,omitempty"`
	SbpPaymentID    string    `json:"sbp_payment_id"`
	Receipt         bool      `json:"receipt"`
}

// Server is the simulator: an http.Handler serving /v2/* like the bank and
// /sim/* for commands. Close stops its notification senders.
type Server struct {
	opts Options
	mux  *http.ServeMux

	mu        sync.Mutex
	terminals map[string]string // TerminalKey → Password
	payments  map[string]*Payment
	orders    map[string][]string // TerminalKey + "\x00" + OrderId → payment ids
	nextID    int64
	faults    Faults
	outbox    *outbox

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns a simulator with no terminals.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NotifyRetry <= 0 {
		opts.NotifyRetry = time.Second
	}
	if opts.RefundAfter <= 0 {
		opts.RefundAfter = 2 * time.Second
	}
	if opts.HoldFor <= 0 {
		opts.HoldFor = time.Second
	}
	if opts.DefaultDue <= 0 {
		opts.DefaultDue = 24 * time.Hour
	}
	if opts.Sweep <= 0 {
		opts.Sweep = time.Second
	}
	if opts.HTTP == nil {
		opts.HTTP = &http.Client{Timeout: 5 * time.Second}
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		opts: opts, terminals: map[string]string{}, payments: map[string]*Payment{},
		orders: map[string][]string{}, nextID: 7_000_000_000, ctx: ctx, cancel: cancel,
	}
	s.outbox = newOutbox(s)
	s.routes()
	s.wg.Add(1)
	go s.sweep()
	return s
}

// sweep expires unpaid payments past their deadline, as the bank does on its own.
func (s *Server) sweep() {
	defer s.wg.Done()
	tick := time.NewTicker(s.opts.Sweep)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-s.ctx.Done():
			return
		}
		s.mu.Lock()
		for _, p := range s.payments {
			s.expireIfDue(p)
		}
		s.mu.Unlock()
	}
}

// Close stops delivering notifications and waits for the senders to end.
func (s *Server) Close() {
	s.cancel()
	s.wg.Wait()
}

// ServeHTTP serves the bank's API and the simulator's commands.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// AddTerminal registers a terminal. SbpPayTest works, as at the bank, only
// for keys ending in DEMO.
func (s *Server) AddTerminal(key, password string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.terminals[key] = password
}

// SetFaults replaces the fault switches.
func (s *Server) SetFaults(f Faults) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = f
}

// Faults returns the current fault switches.
func (s *Server) Faults() Faults {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faults
}

// Payments returns the payments of an order, oldest first.
func (s *Server) Payments(orderID string) []Payment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Payment
	for _, p := range s.payments {
		if p.OrderID == orderID {
			out = append(out, *p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// newPayment records a NEW payment; s.mu is held.
func (s *Server) newPayment(terminal string, r tbank.InitRequest, due time.Time) *Payment {
	s.nextID++
	p := &Payment{
		ID: strconv.FormatInt(s.nextID, 10), TerminalKey: terminal, OrderID: r.OrderId,
		Amount: r.Amount, Status: tbank.StatusNew, Due: due, NotificationURL: r.NotificationURL,
		SbpPaymentID: sbpID(s.nextID), Receipt: r.Receipt != nil,
	}
	s.payments[p.ID] = p
	k := terminal + "\x00" + r.OrderId
	s.orders[k] = append(s.orders[k], p.ID)
	return p
}

// expireIfDue moves an unpaid payment past its deadline to DEADLINE_EXPIRED;
// s.mu is held.
func (s *Server) expireIfDue(p *Payment) {
	if (p.Status == tbank.StatusNew || p.Status == tbank.StatusFormShowed) && s.opts.Now().After(p.Due) {
		s.setStatus(p, tbank.StatusDeadlineExpired)
	}
}

// setStatus changes a payment's status and queues the notification the bank
// sends for it; s.mu is held.
func (s *Server) setStatus(p *Payment, status string) {
	p.Status = status
	switch status {
	case tbank.StatusConfirmed, tbank.StatusRejected, tbank.StatusDeadlineExpired,
		tbank.StatusCanceled, tbank.StatusRefunded, tbank.StatusPartialRefunded:
		s.outbox.queue(p, s.faults)
	}
}

// errf is a refusal with the bank's generic code.
func errf(format string, args ...any) *tbank.Error {
	return &tbank.Error{Code: tbank.CodeInvalidParams, Message: "Неверные параметры.", Details: fmt.Sprintf(format, args...)}
}
