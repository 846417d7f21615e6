package ticketing

import (
	"encoding/json"
	"time"
)

// OrderStatus is an order's state (contract section 3).
type OrderStatus string

// Order statuses. paid and refunded are terminal for idempotency.
const (
	OrderPending   OrderStatus = "pending"
	OrderPaid      OrderStatus = "paid"
	OrderCancelled OrderStatus = "cancelled"
	OrderRefunded  OrderStatus = "refunded"
)

// OrderTypeTicket is the only order type the API creates.
const OrderTypeTicket = "ticket"

// FeeVersion identifies the fee rules a price was computed with. The buyer pays
// exactly the catalog price (contract section 1, rule 6): the fee is 0 for the buyer.
const FeeVersion = 1

// Limits of the sales path (contract section 8 leaves them to us; docs/guide.md and
// the OpenAPI document them).
const (
	MaxUnitsPerOrder = 10 // quantity, seats or the sum of standing quantities
	MaxSeatsPerHold  = 10
	MaxReleaseIDs    = 100
	MaxRefundReason  = 500
)

// Buyer is the guest who pays; personal data, shown only to secret keys holding
// orders:read, never in webhooks.
type Buyer struct {
	Email string  `json:"email"`
	Name  *string `json:"name"`
	Phone *string `json:"phone"`
}

// SeatRef describes a seat on an order line and on its ticket.
type SeatRef struct {
	SeatID   string  `json:"seat_id"`
	Label    string  `json:"label"`
	ZoneName string  `json:"zone_name"`
	Row      *string `json:"row"`
	Number   *int    `json:"number"`
	// Block is the seat's stock partition, copied from its hold (HoldSeat.Block).
	Block int `json:"block,omitempty"`
}

// OrderLine is one priced line: a quantity of a tier, or one seat.
type OrderLine struct {
	TierID        string   `json:"tier_id"`
	TierName      string   `json:"tier_name"`
	UnitPrice     int64    `json:"unit_price"`
	Quantity      int      `json:"quantity"`
	Seated        bool     `json:"seated,omitempty"`
	Seat          *SeatRef `json:"seat,omitempty"`
	ReservationID string   `json:"reservation_id,omitempty"`
	HoldID        string   `json:"hold_id,omitempty"`
	// Shards records what a tier line took from which stock shard, so that
	// giving it back returns it there (see Takes).
	Shards []ShardTake `json:"shards,omitempty"`
}

// AppliedPromo is a promo code as applied to an order.
type AppliedPromo struct {
	Code     string    `json:"code"`
	Type     PromoType `json:"type"`
	Value    int64     `json:"value"`
	Discount int64     `json:"discount"`
	Limited  bool      `json:"limited,omitempty"` // has max_uses: a counter was taken
	// Shard is the shard of the code's counter the use was taken from
	// (PromoShardCaps), where giving the order's stock back returns it.
	Shard int `json:"shard,omitempty"`
}

// Ticket is one issued unit of a paid order.
type Ticket struct {
	Number string   `json:"number"`
	Status string   `json:"status"` // issued | used | transferred | refunded
	Seat   *SeatRef `json:"seat,omitempty"`
}

// Ticket statuses.
const (
	TicketIssued   = "issued"
	TicketRefunded = "refunded"
)

// RefundStatus is a refund's state.
type RefundStatus string

// Refund statuses.
const (
	RefundPending   RefundStatus = "pending"
	RefundCompleted RefundStatus = "completed"
)

// Refund is the full refund of a paid order.
type Refund struct {
	ID          string       `json:"id"`
	Status      RefundStatus `json:"status"`
	Amount      int64        `json:"amount"`
	Currency    string       `json:"currency"`
	Reason      *string      `json:"reason"`
	CreatedAt   time.Time    `json:"created_at"`
	CompletedAt *time.Time   `json:"completed_at"`
	SettleAt    *time.Time   `json:"settle_at,omitempty"` // when the provider settles on its own
	// CheckAt is when reconciliation next asks a live acquirer how the refund
	// is going, in case its notification is lost.
	CheckAt *time.Time `json:"check_at,omitempty"`
}

// LatePayment is money that reached a cancelled order: the payment was
// confirmed after the order expired or was cancelled. It is never kept
// without tickets: the order is reinstated as paid when its stock can still
// be taken, or the money goes back.
type LatePayment struct {
	PaymentID string `json:"payment_id"`
	// Outcome: reinstated (the order is paid after all), refund_pending (the
	// money is on its way back), refunded (it is back with the buyer).
	Outcome      string     `json:"outcome"`
	DetectedAt   time.Time  `json:"detected_at"`
	CancelledAt  *time.Time `json:"cancelled_at,omitempty"` // when the order had been cancelled
	CancelReason string     `json:"cancel_reason,omitempty"`
	RefundedAt   *time.Time `json:"refunded_at,omitempty"`
	CheckAt      *time.Time `json:"check_at,omitempty"` // next reconciliation of the refund
}

// OutsideRefund is a refund made at the acquirer, not through tix. A full
// one refunds the order (its Refund is completed with it); a partial one
// leaves the order paid with its tickets, flagged for the operator, and its
// owner is alerted: which tickets the money was for only they know.
type OutsideRefund struct {
	Kind       string    `json:"kind"` // full | partial
	PaymentID  string    `json:"payment_id"`
	DetectedAt time.Time `json:"detected_at"`
}

// Outside refund kinds.
const (
	OutsideRefundFull    = "full"
	OutsideRefundPartial = "partial"
)

// Late payment outcomes.
const (
	LateReinstated    = "reinstated"
	LateRefundPending = "refund_pending"
	LateRefunded      = "refunded"
)

// Order is a ticket order and everything that happens to it.
type Order struct {
	ID             string        `json:"id"`
	OrganizerID    string        `json:"organizer_id"`
	Environment    Environment   `json:"environment"`
	Type           string        `json:"type"`
	Status         OrderStatus   `json:"status"`
	EventID        string        `json:"event_id"`
	EventTitle     string        `json:"event_title"`
	OccurrenceID   string        `json:"occurrence_id,omitempty"` // "" for a single event
	Lines          []OrderLine   `json:"lines"`
	Quantity       int           `json:"quantity"`
	Currency       string        `json:"currency"`
	BasePrice      int64         `json:"base_price"` // sum of catalog prices
	Discount       int64         `json:"discount"`
	ServiceFee     int64         `json:"service_fee"`
	TotalPrice     int64         `json:"total_price"`
	Promo          *AppliedPromo `json:"promo,omitempty"`
	Buyer          Buyer         `json:"buyer"`
	ReturnURL      *string       `json:"return_url,omitempty"`
	KeyID          string        `json:"key_id"`
	IdempotencyKey string        `json:"idempotency_key"`
	Payment        *Payment      `json:"payment,omitempty"`
	CreatedAt      time.Time     `json:"created_at"`
	ExpiresAt      time.Time     `json:"expires_at"`
	PaidAt         *time.Time    `json:"paid_at"`
	CancelledAt    *time.Time    `json:"cancelled_at,omitempty"`
	CancelReason   string        `json:"cancel_reason,omitempty"` // expired | payment_cancelled | requested
	TicketNumber   string        `json:"ticket_number,omitempty"`
	Tickets        []Ticket      `json:"tickets,omitempty"`
	Refund         *Refund       `json:"refund,omitempty"`
	LatePayment    *LatePayment  `json:"late_payment,omitempty"`
	// OutsideRefund is money of the order returned at the acquirer without
	// tix (the organizer refunded in the bank's own portal).
	OutsideRefund *OutsideRefund `json:"outside_refund,omitempty"`
	// PaymentCheckAt is when reconciliation asks the live acquirer, once more,
	// whether a cancelled order's payment went through after all.
	PaymentCheckAt *time.Time `json:"payment_check_at,omitempty"`
	// ClientCap is set on a publishable key's order: the per-client, per-event
	// counter its units were taken from until it is paid, cancelled or expires.
	ClientCap *ClientCap `json:"client_cap,omitempty"`
	// TransferredFrom is set on a transferred-in order: its one ticket was
	// re-issued from another order's (docs/transfers.md); it carries no money.
	TransferredFrom *TransferIn `json:"transferred_from,omitempty"`
	// Version is the stored revision; every write is conditional on it.
	Version int64 `json:"-"`
}

// ClientCap bounds what one client (network) of a publishable key may keep
// unpaid for one event: at most MaxOrders pending orders, and at most MaxUnits
// units in its pending orders and live seat holds together. Both are counted
// in one counter item per client and event: an order's units are taken in its
// creation transaction (conditional on the limits) and given back in the
// transaction that pays, cancels or expires it; a hold's seats are taken in
// the hold's transaction, given back seat by seat as they are released,
// moved to the order that uses them (Holds: counted once), and the rest given
// back once the hold has expired (ClientLimits.ReleaseOverdueHolds).
type ClientCap struct {
	Key       string `json:"key"` // organizer#environment#client network#event
	MaxOrders int    `json:"max_orders"`
	MaxUnits  int    `json:"max_units"`
	// Holds (orders): the seats of each hold of this counter the order uses,
	// which move from the hold's count to the order's.
	Holds map[string]int `json:"holds,omitempty"`
}

// NewUnits is how many units an order adds to its client's count: its
// quantity less the held seats it uses from the same count.
func (c *ClientCap) NewUnits(quantity int) int {
	for _, n := range c.Holds {
		quantity -= n
	}
	return quantity
}

// IsPaid is the contract's is_paid: true only while the order is paid. A
// refunded order's money went back to the buyer, so it is not paid any more
// (integrators fulfil on is_paid).
func (o *Order) IsPaid() bool { return o.Status == OrderPaid }

// Overdue reports whether a pending order has outlived its payment window.
func (o *Order) Overdue(now time.Time) bool {
	return o.Status == OrderPending && !now.Before(o.ExpiresAt)
}

// FirstTierID is the contract's ticket_tier_id: the first line's tier.
func (o *Order) FirstTierID() string {
	if len(o.Lines) == 0 {
		return ""
	}
	return o.Lines[0].TierID
}

// OccurrenceTierID is the contract's occurrence_tier_id: the first tier within
// the order's occurrence, for series and recurring events only.
func (o *Order) OccurrenceTierID() string {
	if o.OccurrenceID == "" || len(o.Lines) == 0 {
		return ""
	}
	return o.OccurrenceID + ":" + o.Lines[0].TierID
}

// TicketQR is the order-level QR payload the door scans to admit the whole order.
func (o *Order) TicketQR() string {
	b, _ := json.Marshal(struct {
		V            int    `json:"v"`
		OrderID      string `json:"order_id"`
		TicketNumber string `json:"ticket_number"`
		EventID      string `json:"event_id"`
		OccurrenceID string `json:"occurrence_id,omitempty"`
		Quantity     int    `json:"quantity"`
		Livemode     bool   `json:"livemode"`
	}{1, o.ID, o.TicketNumber, o.EventID, o.OccurrenceID, o.Quantity, o.Environment == EnvLive})
	return string(b)
}
