// Package inmem is an in-memory implementation of the ticketing sales ports:
// small, mutex-guarded and honouring the same conditions as the DynamoDB store
// (stock never negative, one hold per seat, idempotency records claimed once,
// order state changes only from their expected state and version). It passes
// the same conformance suite (ticketingtest) and lets domain tests run without
// a database. It is test support, not a production adapter.
package inmem

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"tix/internal/ticketcode"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// Store is one store type per sales port over one shared state (a plain
// struct of them, as store.Store is over one table).
type Store struct {
	Catalog     *Catalog
	Idempotency *Idempotency
	Limits      *Limits
	Holds       *Holds
	Orders      *Orders
	Due         *Due
	Outbox      *Outbox
	Strays      *Strays
	Tickets     *Tickets
	TicketKeys  *TicketKeys
}

// The store types, one per port, each over the shared state.
type (
	Catalog     struct{ *state }
	Idempotency struct{ *state }
	Limits      struct{ *state }
	Holds       struct{ *state }
	Orders      struct{ *state }
	Due         struct{ *state }
	Outbox      struct{ *state }
	Strays      struct{ *state }
)

// state holds every sales item in maps under one mutex; each method is one
// atomic step, as each DynamoDB request or transaction is.
type state struct {
	mu         sync.Mutex
	events     map[string]storedEvent
	tiers      map[string]tierRef
	idem       map[string]ticketing.Idempotency
	holdIPs    map[string]*holdIPRecord
	clientRate map[string]int
	clientCaps map[string]*capRecord
	holds      map[string]ticketing.Hold
	seats      map[seatKey]seatRecord
	sold       map[tierKey]map[int]int // units sold per stock shard
	promoUses  map[tierKey]int         // ID is the promo code
	orders     map[string]storedOrder
	tickets    map[string]string // environment#number -> order id
	outbox     map[string]ticketing.OrderEvent
	due        map[string]ticketing.Timer
	strays     map[string]ticketing.StrayPayment
	door       map[string]ticketDoor           // environment#number -> check-in and refund lock
	scans      map[string]ticketing.ScanRecord // environment#org#client scan id -> uploaded scan
	superseded map[string]ticketing.CheckIn    // environment#org#check-in id -> admission an earlier scan displaced
	ticketKeys map[ticketing.Tenant]ticketcode.KeySet
	transfers  map[string]ticketing.Transfer
}

// New returns an empty store.
func New() *Store {
	s := &state{
		events: map[string]storedEvent{}, tiers: map[string]tierRef{}, idem: map[string]ticketing.Idempotency{},
		holdIPs: map[string]*holdIPRecord{}, clientRate: map[string]int{}, clientCaps: map[string]*capRecord{},
		holds: map[string]ticketing.Hold{}, seats: map[seatKey]seatRecord{}, sold: map[tierKey]map[int]int{},
		promoUses: map[tierKey]int{}, orders: map[string]storedOrder{}, tickets: map[string]string{},
		outbox: map[string]ticketing.OrderEvent{}, due: map[string]ticketing.Timer{},
		door: map[string]ticketDoor{}, scans: map[string]ticketing.ScanRecord{}, superseded: map[string]ticketing.CheckIn{}, ticketKeys: map[ticketing.Tenant]ticketcode.KeySet{},
		transfers: map[string]ticketing.Transfer{},
	}
	return &Store{Catalog: &Catalog{s}, Idempotency: &Idempotency{s}, Limits: &Limits{s}, Holds: &Holds{s},
		Orders: &Orders{s}, Due: &Due{s}, Outbox: &Outbox{s}, Strays: &Strays{s}, Tickets: &Tickets{s}, TicketKeys: &TicketKeys{s}}
}

// Sales is the storage roles of the sales services.
func (s *Store) Sales() ticketing.SalesStores {
	return ticketing.SalesStores{Catalog: s.Catalog, Idempotency: s.Idempotency, Limits: s.Limits,
		HoldStore: s.Holds, OrderStore: s.Orders, Due: s.Due, Strays: s.Strays, Tickets: s.Tickets}
}

// Each store type implements its sales port.
var (
	_ ticketing.SalesCatalog     = (*Catalog)(nil)
	_ ticketing.IdempotencyStore = (*Idempotency)(nil)
	_ ticketing.ClientLimits     = (*Limits)(nil)
	_ ticketing.HoldStore        = (*Holds)(nil)
	_ ticketing.OrderStore       = (*Orders)(nil)
	_ ticketing.DueTimerStore    = (*Due)(nil)
	_ ticketing.StrayStore       = (*Strays)(nil)
)

type storedEvent struct {
	doc     []byte // the event without its seating map
	seating []byte // the seating map, "null" when none
}

type tierRef struct{ organizerID, eventID string }

// seatKey and tierKey address stock as the table does: event, environment,
// occurrence (ticketing.NoOccurrence for a single event) and seat or tier id.
type seatKey struct{ event, env, occ, seat string }

type tierKey struct{ event, env, occ, id string }

// seatRecord is a taken seat: the seat hold and reservation that took it (kept
// when an order reserves it), the order that reserved or bought it.
type seatRecord struct {
	tier, state string
	until       time.Time // zero once sold
	hold, resv  string
	order       string
}

// PutEvent stores an event and its seating map as given, with its tier references.
func (s *Catalog) PutEvent(_ context.Context, e *ticketing.Event) error {
	doc, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode event %s: %w", e.ID, err)
	}
	seating, err := json.Marshal(e.Seating)
	if err != nil {
		return fmt.Errorf("encode seating map of %s: %w", e.ID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.events[e.ID]; ok {
		var prev ticketing.Event
		if err := json.Unmarshal(old.doc, &prev); err == nil && prev.OrganizerID != e.OrganizerID {
			return fmt.Errorf("event %s belongs to another organizer", e.ID)
		}
	}
	s.events[e.ID] = storedEvent{doc: doc, seating: seating}
	for _, t := range e.Tiers {
		s.tiers[t.ID] = tierRef{organizerID: e.OrganizerID, eventID: e.ID}
	}
	return nil
}

// visibleEvent decodes a stored event with tenancy applied: another organizer's
// event and a draft answer exactly like a missing one.
func (s *state) visibleEvent(organizerID, eventID string, withSeating bool) (*ticketing.Event, error) {
	s.mu.Lock()
	st, ok := s.events[eventID]
	s.mu.Unlock()
	if !ok {
		return nil, ticketing.NotFound("event")
	}
	var e ticketing.Event
	if err := json.Unmarshal(st.doc, &e); err != nil {
		return nil, fmt.Errorf("decode event %s: %w", eventID, err)
	}
	if e.OrganizerID != organizerID || !e.Visible() {
		return nil, ticketing.NotFound("event")
	}
	if withSeating {
		if err := json.Unmarshal(st.seating, &e.Seating); err != nil {
			return nil, fmt.Errorf("decode seating map of %s: %w", eventID, err)
		}
	}
	return &e, nil
}

// GetEvent reads one visible event of the organizer, without its seating map.
func (s *Catalog) GetEvent(_ context.Context, organizerID, eventID string, _ ticketing.Environment) (*ticketing.Event, error) {
	return s.visibleEvent(organizerID, eventID, false)
}

// GetEventWithSeating reads one visible event of the organizer with its seating map.
func (s *Catalog) GetEventWithSeating(_ context.Context, organizerID, eventID string, _ ticketing.Environment) (*ticketing.Event, error) {
	return s.visibleEvent(organizerID, eventID, true)
}

// TierEvent finds the organizer and event of a tier.
func (s *Catalog) TierEvent(_ context.Context, tierID string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, ok := s.tiers[tierID]
	if !ok {
		return "", "", ticketing.NotFound("tier " + tierID)
	}
	return ref.organizerID, ref.eventID, nil
}

// GetStock reads the taken seats and tier counters of an event in env (one
// occurrence when occurrenceID is given).
func (s *Catalog) GetStock(_ context.Context, eventID string, env ticketing.Environment, occurrenceID string) (*ticketing.Stock, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &ticketing.Stock{Sold: map[ticketing.StockKey]int{}, Shards: map[ticketing.StockKey]map[int]int{},
		Seats: map[ticketing.StockKey]ticketing.SeatState{}}
	in := func(event, e, occ string) bool {
		return event == eventID && e == string(env) && (occurrenceID == "" || occ == occurrenceID)
	}
	for k, shards := range s.sold {
		if in(k.event, k.env, k.occ) {
			sk := ticketing.StockKey{Occurrence: k.occ, ID: k.id}
			st.Shards[sk] = map[int]int{}
			for sh, n := range shards {
				st.Sold[sk] += n
				st.Shards[sk][sh] = n
			}
		}
	}
	for k, r := range s.seats {
		if in(k.event, k.env, k.occ) {
			st.Seats[ticketing.StockKey{Occurrence: k.occ, ID: k.seat}] = ticketing.SeatState{
				TierID: r.tier, Status: r.state, Until: r.until, HoldID: r.hold}
		}
	}
	return st, nil
}

// StockOf is GetStock of an event at hand.
func (s *Catalog) StockOf(ctx context.Context, e *ticketing.Event, env ticketing.Environment, occurrenceID string) (*ticketing.Stock, error) {
	return s.GetStock(ctx, e.ID, env, occurrenceID)
}

// PromoUses is how many orders hold promo code p of the event in env (one
// counter per code: memory has no items to contend for).
func (s *Catalog) PromoUses(_ context.Context, e *ticketing.Event, env ticketing.Environment, p *ticketing.Promo) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.promoUses[tierKey{e.ID, string(env), "", p.Code}], nil
}

// GetOrderEvent reads an outbox event, as the DynamoDB store does
// (webhook.ErrNotFound when absent); nothing here dispatches events.
func (s *Outbox) GetOrderEvent(_ context.Context, id string) (*ticketing.OrderEvent, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev, ok := s.outbox[id]
	if !ok {
		return nil, false, webhook.ErrNotFound
	}
	return &ev, false, nil
}

// OrderEvents returns the outbox events written so far, oldest first.
func (s *Outbox) OrderEvents() []ticketing.OrderEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ticketing.OrderEvent, 0, len(s.outbox))
	for _, ev := range s.outbox {
		out = append(out, ev)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return strings.Compare(out[i].ID, out[j].ID) < 0
	})
	return out
}

// DueTimers returns up to limit timer markers due at or before now, oldest first.
func (s *Due) DueTimers(_ context.Context, now time.Time, limit int) ([]ticketing.Timer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ticketing.Timer
	for _, t := range s.due {
		if !t.Due.After(now) {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Due.Before(out[j].Due) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func dueKey(t ticketing.Timer) string {
	return t.Due.UTC().Format(time.RFC3339Nano) + "#" + t.OrderID + "#" + t.Kind
}
