package ticketing

import (
	"context"
	"errors"
	"time"
)

// Errors the store ports return when a condition fails; the services turn
// them into contract errors. Storage-specific failures never leak further.
// ErrNotFound and ErrStateChanged are the one vocabulary of every port
// (ticketing's, webhook's and email's).
var (
	// ErrNotFound: no such item. A not_found *Error (NotFound) is ErrNotFound
	// too, so errors.Is(err, ErrNotFound) holds whichever a port returns.
	ErrNotFound = errors.New("not found")
	// ErrStateChanged: the item is no longer in the state or version the
	// write expected (for an order: someone else paid, cancelled, expired or
	// refunded it first); the caller re-reads or gives up.
	ErrStateChanged = errors.New("state changed concurrently")
	// ErrIdempotencyTaken: the Idempotency-Key record exists (see the returned record).
	ErrIdempotencyTaken = errors.New("idempotency key already bound")
	// ErrLeaseLost: another invocation claimed the idempotency lease first.
	ErrLeaseLost = errors.New("idempotency lease lost")
	// ErrTicketNumberTaken: a generated ticket number exists in the environment.
	ErrTicketNumberTaken = errors.New("ticket number taken")
	// ErrPromoExhausted: the promo code reached max_uses.
	ErrPromoExhausted = errors.New("promo code exhausted")
	// ErrIPRace: the per-IP hold record changed between read and write.
	ErrIPRace = errors.New("per-IP hold record changed")
	// ErrClientCap: the client already has the most pending orders or units a
	// publishable key allows for the event.
	ErrClientCap = errors.New("client's pending orders at their cap")
	// ErrOrderExists: an order with this id exists already.
	ErrOrderExists = errors.New("order exists")
	// ErrContended: a write kept being cancelled because other transactions
	// held its items (DynamoDB's TransactionConflict) through all its retries.
	ErrContended = errors.New("items busy with other transactions")
)

// IdempotencyTakenError is ErrIdempotencyTaken with the record that holds
// the key (nil when the store did not return it: read it).
type IdempotencyTakenError struct{ Existing *Idempotency }

func (e *IdempotencyTakenError) Error() string { return ErrIdempotencyTaken.Error() }

// Is makes errors.Is(err, ErrIdempotencyTaken) hold.
func (e *IdempotencyTakenError) Is(target error) bool { return target == ErrIdempotencyTaken }

// StockError says which line of an order (or seat of a hold) could not be taken.
type StockError struct {
	Index int  // line index (orders) or seat index (holds)
	Seat  bool // a seat (else a tier counter)
	// KeyFree: CreateOrderWithKey found the Idempotency-Key without a record
	// in the same attempt that found the stock short.
	KeyFree bool
}

func (e *StockError) Error() string { return "stock not available" }

// HoldIPState is the per-client-IP record of publishable-key seat holds.
type HoldIPState struct {
	Holds   map[string]time.Time // hold id -> expiry
	Version int64
}

// HoldIPUpdate adds a hold to the per-IP record in the hold's transaction,
// conditional on Version, and drops expired entries.
type HoldIPUpdate struct {
	Key     string
	Version int64
	Add     string
	Until   time.Time
	Remove  []string
}

// The sales path's storage ports, one role each, so that a fake (or a new
// adapter) implements what a part of the domain needs and no more. Every
// conditional write is a single conditional request or one transaction, and a
// missing item is a not_found *Error, never a nil result.

// SalesCatalog is the catalog and stock reads of the sales path.
type SalesCatalog interface {
	GetEvent(ctx context.Context, organizerID, eventID string, env Environment) (*Event, error)
	GetEventWithSeating(ctx context.Context, organizerID, eventID string, env Environment) (*Event, error)
	// TierEvent finds the organizer and event of a tier id (not_found when unknown).
	TierEvent(ctx context.Context, tierID string) (organizerID, eventID string, err error)
	// GetStock reads the taken seats and tier counters of an event (one occurrence when given).
	GetStock(ctx context.Context, eventID string, env Environment, occurrenceID string) (*Stock, error)
	// StockOf is GetStock of an event at hand (cheaper: it knows the tiers' shards).
	StockOf(ctx context.Context, e *Event, env Environment, occurrenceID string) (*Stock, error)
	// PromoUses is how many orders hold promo code p of event e in env, over
	// the shards of its counter (PromoShardCaps). For a code of several
	// shards a store may answer from levels it read within the last 2 s, or
	// 0 when it has none: the order's transaction never lets the code pass
	// its limit, and refuses a used-up code with the same answer.
	PromoUses(ctx context.Context, e *Event, env Environment, p *Promo) (int, error)
}

// IdempotencyStore keeps the Idempotency-Key records of orders (a hold's
// record is written by HoldStore.CreateHold, in the hold's transaction).
type IdempotencyStore interface {
	// GetIdempotency reads a record (strongly consistent; not_found when absent).
	GetIdempotency(ctx context.Context, t Tenant, scope, key string) (*Idempotency, error)
	// BeginIdempotency creates rec and returns it unless a record exists: then
	// it returns ErrIdempotencyTaken and the existing record.
	BeginIdempotency(ctx context.Context, rec *Idempotency, now time.Time) (*Idempotency, error)
	// ClaimIdempotency takes the lease over from oldLease (conditional:
	// ErrLeaseLost when another holder took it first).
	ClaimIdempotency(ctx context.Context, rec *Idempotency, oldLease string) error
	// ReleaseIdempotency forgets a record that never got its order (conditional on the lease).
	ReleaseIdempotency(ctx context.Context, rec *Idempotency) error
}

// ClientLimits are the per-client budgets and records of publishable keys.
type ClientLimits interface {
	// AdmitHoldIP counts a hold request against the client's fixed window and
	// returns its per-IP hold record.
	AdmitHoldIP(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (state HoldIPState, admitted bool, reset time.Time, err error)
	// GetHoldIP reads the per-IP hold record (empty when there is none).
	GetHoldIP(ctx context.Context, key string) (HoldIPState, error)
	// ForgetHoldIP drops a released or used hold from its IP's record.
	ForgetHoldIP(ctx context.Context, key, holdID string) error
	// AdmitClientRate counts a request against the fixed-window budget under key
	// (limit per window, shared by every instance); false when it is spent.
	AdmitClientRate(ctx context.Context, key string, limit int, window time.Duration, now time.Time) (admitted bool, reset time.Time, err error)
	// ClientCapOverdue lists the orders counted in a client's pending-order
	// counter (ClientCap.Key) whose expiry is at or before now.
	ClientCapOverdue(ctx context.Context, key string, now time.Time) ([]string, error)
	// ReleaseOverdueHolds gives back to a client's counter (ClientCap.Key)
	// the seats still counted for each of its holds whose expiry is at or
	// before now, each hold once (conditional); it returns how many holds.
	ReleaseOverdueHolds(ctx context.Context, key string, now time.Time) (int, error)
}

// HoldStore keeps seat holds and the seats they hold.
type HoldStore interface {
	// CreateHold takes every seat (free, or held/reserved past its expiry) and
	// writes the hold, its idempotency record (optional; one whose LeaseUntil
	// has passed is replaced) and the per-IP update (optional, conditional on
	// its Version) and, for h.ClientCap, the seats taken on the client's
	// counter (conditional on its MaxUnits) in one transaction. A taken seat
	// is a *StockError, a live idempotency record ErrIdempotencyTaken, a moved
	// per-IP record ErrIPRace, a full client counter ErrClientCap.
	CreateHold(ctx context.Context, h *Hold, idem *Idempotency, ip *HoldIPUpdate, now time.Time) error
	GetHold(ctx context.Context, id string) (*Hold, error) // not_found when absent
	// ReleaseSeat frees one held seat if it is still held by this reservation
	// and live, and then gives it back to h.ClientCap's counter (when the
	// hold is still counted there; should that write be lost, the seat stays
	// counted until ReleaseOverdueHolds, never the other way round).
	ReleaseSeat(ctx context.Context, h *Hold, s HoldSeat, now time.Time) (bool, error)
	// ExtendHold moves the expiry of h and of the given seats of h to until,
	// in one transaction: each seat conditional on being held by its reservation and
	// live at now (a *StockError with its index in seats otherwise), the hold
	// conditional on its expiry not being later than until and, for
	// h.ClientCap, its count on the client's counter still being there
	// (ErrStateChanged otherwise). The hold's per-IP record follows after it.
	// An until at or before now expires them now (a test helper): then the
	// hold's expiry may go back.
	ExtendHold(ctx context.Context, h *Hold, seats []HoldSeat, until, now time.Time) error
}

// OrderStore keeps orders and moves them between states. Every change is
// conditional on the order's Version and expected status (ErrStateChanged
// otherwise), and the ones that end a state write its outbox event and move
// its stock in the same transaction.
type OrderStore interface {
	// CreateOrder writes a new pending order and takes its stock in one
	// transaction: tier counters, seats, the promo counter, the client's pending
	// counter (o.ClientCap: ErrClientCap when at its limits; the seats of
	// ClientCap.Holds move from their hold's count). A seat line with a
	// reservation takes the seat only while that reservation holds it, live
	// (not released, used or expired); one without, only a free seat. A line
	// without stock is a *StockError. ConfirmOrder and CancelOrder give the
	// client's counter back in their transaction.
	CreateOrder(ctx context.Context, o *Order, e *Event, now time.Time) error
	// CreateOrderWithKey is CreateOrder that also writes idem, the order's
	// Idempotency-Key record, in the same transaction, when the key has no
	// record: otherwise nothing is written and the error is an
	// *IdempotencyTakenError (its Existing the record, when the store has it).
	CreateOrderWithKey(ctx context.Context, o *Order, e *Event, idem *Idempotency, now time.Time) error
	// SetPayment stores the provider's payment on a pending order.
	SetPayment(ctx context.Context, o *Order) error
	GetOrder(ctx context.Context, id string) (*Order, error) // not_found when absent
	// ConfirmOrder moves a pending order (not overdue, unless overdueOK: the
	// acquirer confirmed the money) to paid: seats sold, ticket numbers
	// reserved, the outbox event written, in one transaction.
	ConfirmOrder(ctx context.Context, o *Order, ev *OrderEvent, now time.Time, overdueOK bool) error
	// CancelOrder moves a pending order to cancelled (overdueOnly: only when its
	// expiry has passed) and gives its stock back, with the outbox event and
	// the marker of o's CheckTimer when it has one.
	CancelOrder(ctx context.Context, o *Order, ev *OrderEvent, now time.Time, overdueOnly bool) error
	// ReinstateOrder moves a cancelled order whose payment arrived late to
	// paid, taking its stock again (tier counters within capacity, seats only
	// if free or still reserved by o itself, whatever reservation its lines
	// name; a *StockError otherwise) straight to sold, with its ticket
	// numbers, the outbox event, and the markers in done deleted, in one
	// transaction.
	ReinstateOrder(ctx context.Context, o *Order, e *Event, ev *OrderEvent, now time.Time, done []Timer) error
	// SaveOrder rewrites an order still in status expect (and at o's Version)
	// with the markers in put written and those in done deleted (a marker in
	// both is written), in one transaction: reconciliation's bookkeeping,
	// never a change of status (o.Status other than expect is refused).
	SaveOrder(ctx context.Context, o *Order, expect OrderStatus, put, done []Timer) error
	// StartRefund records a pending refund on a paid order without one, with
	// the marker of its SettleTimer when it has one, in one transaction.
	StartRefund(ctx context.Context, o *Order) error
	// CompleteRefund moves a paid order with a pending refund to refunded and
	// gives its stock back, with the outbox event; its SettleTimer's marker goes.
	CompleteRefund(ctx context.Context, o *Order, ev *OrderEvent) error
	ListOrders(ctx context.Context, q OrderQuery) (*OrderPage, error)
}

// DueTimerStore finds timer-driven work that is owed.
type DueTimerStore interface {
	// DueTimers returns up to limit timers due at or before now that are still
	// owed: their marker is written with the change that starts the wait
	// (CreateOrder: ExpiryTimer; StartRefund: SettleTimer) and deleted with the
	// one that ends it (ConfirmOrder, CancelOrder; CompleteRefund).
	DueTimers(ctx context.Context, now time.Time, limit int) ([]Timer, error)
}

// EventPublisher hands a committed outbox event on to webhook delivery. It
// cannot fail the order change, which has happened: a lost publication is
// found by the webhook sweep.
type EventPublisher interface {
	Publish(ctx context.Context, eventID string)
}

// ErrTicketAdmitted: a ticket of the order was admitted at the door, so the
// order cannot be refunded (contract section 4, rule 7).
var ErrTicketAdmitted = errors.New("a ticket of the order was admitted")

// TicketStore keeps each issued ticket's door state on the item that
// reserves its number (written by ConfirmOrder and ReinstateOrder with the
// ticket's event, occurrence and seat): its check-in and its refund lock.
// A check-in and a refund exclude each other on that one item, so a ticket
// is never both admitted and refunded.
type TicketStore interface {
	// Admit writes ci on the ticket numbered ci.TicketNumber in t's
	// environment in ONE conditional write: only when the ticket is t's, of
	// one of events (any when empty; ci.OccurrenceID too when not ""), not
	// admitted, not locked for a refund, and not an order-level number. It
	// returns the ticket's state as the write left or found it (Admitted
	// when this write admitted it; Found false when there is no such ticket).
	Admit(ctx context.Context, t Tenant, ci CheckIn, events []string) (TicketState, error)
	// AdmitAll admits every check-in of cis in one transaction, all or
	// none. When it admits none, refused are the indexes of the check-ins
	// whose condition failed (none: another transaction raced it).
	AdmitAll(ctx context.Context, t Tenant, cis []CheckIn, events []string) (admitted bool, refused []int, err error)
	// UndoCheckIn removes the check-in checkInID from the ticket number, if
	// it is still there and t's; ErrNotFound otherwise.
	UndoCheckIn(ctx context.Context, t Tenant, number, checkInID string) (*CheckIn, error)
	// CheckIns reads the check-ins of the numbers (absent: not admitted).
	CheckIns(ctx context.Context, env Environment, numbers []string) (map[string]CheckIn, error)
	// DoorStates reads the door state of the numbers: check-in, refund
	// lock, pending transfer, transferred (absent: no such ticket).
	DoorStates(ctx context.Context, env Environment, numbers []string) (map[string]TicketState, error)
	// LockForRefund marks every ticket of o as being refunded by refundID,
	// all or none, unless one was admitted, has a transfer pending or was
	// transferred (ErrTicketAdmitted). Locking again for the same refund
	// succeeds.
	LockForRefund(ctx context.Context, o *Order, refundID string) error
	// UnlockRefund removes refundID's locks (the provider refused the refund).
	UnlockRefund(ctx context.Context, o *Order, refundID string) error
	// CheckInStats counts the event's tickets (of one occurrence when not
	// ""): sold and not refunded, refunded, admitted, admitted per gate.
	CheckInStats(ctx context.Context, t Tenant, eventID, occurrenceID string) (*CheckInStats, error)
	// TicketState reads the door state of the ticket number in env
	// (strongly consistent; Found false when there is none).
	TicketState(ctx context.Context, env Environment, number string) (TicketState, error)
	// ReplaceCheckIn makes ci the ticket's admission instead of prev, only
	// if prev (by id) is still its admission and the ticket is t's, of one of
	// events, and not locked for a refund; prev is recorded as superseded in
	// the same transaction. ErrStateChanged when the condition fails.
	ReplaceCheckIn(ctx context.Context, t Tenant, ci, prev CheckIn, events []string) error
	// RecordScan records an uploaded scan once per client scan id: when the
	// id was recorded before it writes nothing and returns that record and
	// true.
	RecordScan(ctx context.Context, t Tenant, r ScanRecord) (ScanRecord, bool, error)
	// AdmissionTickets reads a page of up to limit tickets of t's event (of
	// one occurrence when not "") from the event's index, after cursor (""
	// from the start); next is "" on the last page. A cursor of another
	// query is an invalid_request on param cursor.
	AdmissionTickets(ctx context.Context, t Tenant, eventID, occurrenceID string, limit int, cursor string) (page []TicketState, next string, err error)
	// PutCheckInEvent writes a ticket.checked_in outbox event unless one
	// with its id is there (then it succeeds and writes nothing).
	PutCheckInEvent(ctx context.Context, ev *OrderEvent) error
}
