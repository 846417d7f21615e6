package ticketing

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"tix/internal/clock"
	"tix/internal/ticketcode"
)

// Check-in results (POST /v1/check-ins, docs/door.md).
const (
	ResultAdmitted        = "admitted"
	ResultAlreadyAdmitted = "already_admitted"
	ResultRefunded        = "refunded"
	ResultCancelled       = "cancelled"
	ResultWrongEvent      = "wrong_event"
	ResultInvalid         = "invalid"
)

// TicketUsed is the status of an admitted ticket.
const TicketUsed = "used"

// CheckIn is one admission of one ticket at a gate.
type CheckIn struct {
	ID             string    `json:"id"`
	TicketNumber   string    `json:"ticket_number"`
	OrderID        string    `json:"order_id,omitempty"`
	EventID        string    `json:"event_id,omitempty"`
	OccurrenceID   string    `json:"occurrence_id,omitempty"`
	Gate           string    `json:"gate"`
	At             time.Time `json:"at"`
	KeyID          string    `json:"key_id"`
	IdempotencyKey string    `json:"idempotency_key,omitempty"`
}

// TicketState is what a ticket's number item says at the door.
type TicketState struct {
	Found        bool
	Number       string
	OrderID      string
	OrderNumber  string // a ticket's order-level number ("" when not kept)
	OrganizerID  string
	EventID      string
	OccurrenceID string
	Seat         *SeatRef
	Tickets      []string // an order-level number: the order's ticket numbers
	CheckIn      *CheckIn // the ticket's admission, when it was admitted
	RefundID     string   // the refund that locked it
	TransferID   string   // its pending transfer
	// TransferredTo is the number the ticket was re-issued as (transferred).
	TransferredTo string
	Admitted      bool // this write admitted it
}

// Scan is one scan at a door.
type Scan struct {
	Code           string // the scanned text (a signed code) or a typed ticket number
	Gate           string
	EventID        string   // the door's event ("" : any the key may admit)
	OccurrenceID   string   // the door's occurrence ("" : any)
	Events         []string // the key's events (empty: every event)
	KeyID          string
	IdempotencyKey string
}

// ScanResult is the answer to a scan: for an order's code, Tickets has each
// ticket's own answer and Result is admitted when any was admitted now.
type ScanResult struct {
	Result       string
	TicketNumber string
	Seat         *SeatRef
	CheckIn      *CheckIn // the admission made now, or the first one (already_admitted)
	Tickets      []ScanResult
	Superseded   *CheckIn // an uploaded scan: the later admission it displaced
}

// CheckIns admits tickets at the door: a scan is verified in memory against
// the organizer's cached public keys, then written as ONE conditional write
// on the ticket's item (no read), so two gates scanning one ticket at once
// give exactly one admitted.
type CheckIns struct {
	Store   TicketStore
	Keys    *TicketKeys
	Catalog SalesCatalog // cancelled events and occurrences (cached, statusTTL)
	Clock   clock.Clock
	// Webhooks, when set, announces admissions to the endpoints that
	// subscribe to ticket.checked_in (checkin_events.go).
	Webhooks CheckInWebhooks

	mu       sync.Mutex
	statuses map[string]cachedStatus
}

type cachedStatus struct {
	cancelled map[string]bool // occurrence id ("" the event) -> cancelled
	until     time.Time
}

// statusTTL is how long an event's cancellation status is read from memory.
const statusTTL = 30 * time.Second

// Limits of a scan's input.
const (
	MaxCodeLength = 2048
	MaxGateLength = 64
)

// Scan admits what sc.Code names (contract: POST /v1/check-ins).
func (s *CheckIns) Scan(ctx context.Context, t Tenant, sc Scan) (*ScanResult, error) {
	sc.Code, sc.Gate = strings.TrimSpace(sc.Code), strings.TrimSpace(sc.Gate)
	switch {
	case sc.Code == "":
		return nil, Invalid("code", "code is required: the scanned text of a ticket's QR, or a ticket number such as TIX-7KQ2MX")
	case len(sc.Code) > MaxCodeLength:
		return nil, Invalid("code", "code is longer than %d characters; send the QR's text as scanned", MaxCodeLength)
	case sc.Gate == "" || len(sc.Gate) > MaxGateLength || strings.ContainsFunc(sc.Gate, isControl):
		return nil, Invalid("gate", "gate is required: the name of the door or scanner, 1 to %d printable characters", MaxGateLength)
	}
	if strings.HasPrefix(sc.Code, "{") {
		return s.scanCode(ctx, t, sc)
	}
	return s.scanNumber(ctx, t, sc)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// scanCode verifies a signed code in memory, then admits what it names.
func (s *CheckIns) scanCode(ctx context.Context, t Tenant, sc Scan) (*ScanResult, error) {
	c, err := s.verify(ctx, t, sc.Code)
	if errors.Is(err, ticketcode.ErrInvalid) {
		return &ScanResult{Result: ResultInvalid}, nil
	}
	if err != nil {
		return nil, err
	}
	if !sc.wants(c.EventID, c.OccurrenceID) {
		return &ScanResult{Result: ResultWrongEvent, TicketNumber: c.TicketNumber}, nil
	}
	cancelled, err := s.cancelled(ctx, t, c.EventID, c.OccurrenceID)
	if err != nil {
		return nil, err
	}
	if cancelled {
		return &ScanResult{Result: ResultCancelled, TicketNumber: c.TicketNumber}, nil
	}
	if c.Kind() == ticketcode.KindOrder {
		return s.admitOrder(ctx, t, sc, c.TicketNumber, c.Tickets, TicketState{OrderID: c.OrderID, EventID: c.EventID, OccurrenceID: c.OccurrenceID})
	}
	st, err := s.Store.Admit(ctx, t, s.checkIn(sc, c.TicketNumber), sc.events())
	if err != nil {
		return nil, err
	}
	if st.Found && st.OrderID != c.OrderID {
		return &ScanResult{Result: ResultInvalid}, nil // never: the signature names the order
	}
	res := s.classify(sc, t, st)
	if st.Admitted {
		s.announce(ctx, t, st, res.CheckIn)
	}
	return res, nil
}

// verify checks a code against the tenant's keys: the cached set, then,
// for a kid it lacks (a rotation since), the stored one.
func (s *CheckIns) verify(ctx context.Context, t Tenant, code string) (ticketcode.Claims, error) {
	_, kid, _, err := ticketcode.Parse(code)
	if err != nil {
		return ticketcode.Claims{}, err
	}
	ks, err := s.Keys.KeySet(ctx, t)
	if err != nil {
		return ticketcode.Claims{}, err
	}
	if !slices.ContainsFunc(ks.Keys, func(k ticketcode.Key) bool { return k.Kid == kid }) {
		if ks, err = s.Keys.Refresh(ctx, t); err != nil {
			return ticketcode.Claims{}, err
		}
	}
	c, err := ticketcode.Verify(code, *ks, s.Clock.Now())
	if err != nil {
		return ticketcode.Claims{}, err
	}
	if c.Live != (t.Environment == EnvLive) {
		return ticketcode.Claims{}, ticketcode.ErrInvalid
	}
	return c, nil
}

// scanNumber admits a typed number: a ticket's in one conditional write;
// an order-level number's write is refused and returns its tickets.
func (s *CheckIns) scanNumber(ctx context.Context, t Tenant, sc Scan) (*ScanResult, error) {
	number := strings.ToUpper(sc.Code)
	if !validTicketNumber(number) {
		return &ScanResult{Result: ResultInvalid}, nil
	}
	st, err := s.Store.Admit(ctx, t, s.checkIn(sc, number), sc.events())
	if err != nil {
		return nil, err
	}
	if st.Found && st.OrganizerID == t.OrganizerID && st.Tickets != nil {
		if !sc.wants(st.EventID, st.OccurrenceID) {
			return &ScanResult{Result: ResultWrongEvent, TicketNumber: number}, nil
		}
		return s.admitOrder(ctx, t, sc, number, st.Tickets, st)
	}
	res := s.classify(sc, t, st)
	if res.Result != ResultAdmitted || !st.Admitted {
		return res, nil
	}
	// A typed number's event is known only now: a cancelled one is undone.
	cancelled, err := s.cancelled(ctx, t, st.EventID, st.OccurrenceID)
	if err != nil {
		return nil, err
	}
	if !cancelled {
		s.announce(ctx, t, st, res.CheckIn)
		return res, nil
	}
	if _, err := s.Store.UndoCheckIn(ctx, t, number, res.CheckIn.ID); err != nil {
		return nil, err
	}
	return &ScanResult{Result: ResultCancelled, TicketNumber: number, Seat: st.Seat}, nil
}

// validTicketNumber: TIX- and six characters of the ticket alphabet.
func validTicketNumber(n string) bool {
	rest, ok := strings.CutPrefix(n, "TIX-")
	return ok && len(rest) == 6 && !strings.ContainsFunc(rest, func(r rune) bool { return !strings.ContainsRune(ticketAlphabet, r) })
}

// admitOrder admits every ticket of an order that can be: those in one
// transaction (all or none), again without the ones a condition refused
// (admitted or refunded before), so that two gates scanning one order's code
// at once cannot each admit a part: one admits the rest, the other none.
func (s *CheckIns) admitOrder(ctx context.Context, t Tenant, sc Scan, number string, tickets []string, order TicketState) (*ScanResult, error) {
	if len(tickets) == 0 {
		return &ScanResult{Result: ResultInvalid, TicketNumber: number}, nil
	}
	res := &ScanResult{TicketNumber: number, Tickets: make([]ScanResult, len(tickets))}
	pending := make([]CheckIn, len(tickets))
	at := make([]int, len(tickets)) // pending[i] answers res.Tickets[at[i]]
	for i, n := range tickets {
		pending[i], at[i] = s.checkIn(sc, n), i
	}
	for attempt := 0; len(pending) > 0 && attempt < 8; attempt++ {
		ok, refused, err := s.Store.AdmitAll(ctx, t, pending, sc.events())
		if err != nil {
			return nil, err
		}
		if ok {
			for i := range pending {
				res.Tickets[at[i]] = ScanResult{Result: ResultAdmitted, TicketNumber: pending[i].TicketNumber, CheckIn: &pending[i]}
				s.announce(ctx, t, order, &pending[i])
			}
			pending = nil
			break
		}
		var keep []CheckIn
		var keepAt []int
		for i, ci := range pending {
			if !slices.Contains(refused, i) {
				keep, keepAt = append(keep, ci), append(keepAt, at[i])
				continue
			}
			st, err := s.Store.Admit(ctx, t, ci, sc.events()) // refused: this write fails too, and says why
			if err != nil {
				return nil, err
			}
			res.Tickets[at[i]] = *s.classify(sc, t, st)
		}
		pending, at = keep, keepAt
	}
	for i, ci := range pending { // raced eight times: ticket by ticket
		st, err := s.Store.Admit(ctx, t, ci, sc.events())
		if err != nil {
			return nil, err
		}
		res.Tickets[at[i]] = *s.classify(sc, t, st)
		if st.Admitted {
			s.announce(ctx, t, st, res.Tickets[at[i]].CheckIn)
		}
	}
	res.Result = res.Tickets[0].Result
	for _, one := range res.Tickets {
		if one.Result == ResultAdmitted {
			res.Result = ResultAdmitted
		}
	}
	return res, nil
}

// classify tells the door what a conditional write did or found.
func (s *CheckIns) classify(sc Scan, t Tenant, st TicketState) *ScanResult {
	res := &ScanResult{TicketNumber: st.Number, Seat: st.Seat}
	switch {
	case !st.Found || st.OrganizerID != t.OrganizerID || st.Tickets != nil:
		return &ScanResult{Result: ResultInvalid}
	case st.Admitted:
		res.Result, res.CheckIn = ResultAdmitted, st.CheckIn
	case !sc.wants(st.EventID, st.OccurrenceID):
		res.Result = ResultWrongEvent
	case st.TransferredTo != "":
		res.Result = ResultTransferred
	case st.RefundID != "":
		res.Result = ResultRefunded
	case st.CheckIn != nil && sc.IdempotencyKey != "" && st.CheckIn.IdempotencyKey == sc.IdempotencyKey && st.CheckIn.KeyID == sc.KeyID:
		res.Result, res.CheckIn = ResultAdmitted, st.CheckIn // a retry of the scan that admitted it
	case st.CheckIn != nil:
		res.Result, res.CheckIn = ResultAlreadyAdmitted, st.CheckIn
	default:
		res.Result = ResultInvalid // a ticket issued before the door kept its event
	}
	return res
}

// checkIn is the admission a scan writes for one ticket number.
func (s *CheckIns) checkIn(sc Scan, number string) CheckIn {
	return CheckIn{ID: newCheckInID(number), TicketNumber: number, Gate: sc.Gate, At: s.Clock.Now().UTC(),
		KeyID: sc.KeyID, IdempotencyKey: sc.IdempotencyKey, EventID: sc.EventID, OccurrenceID: sc.OccurrenceID}
}

// newCheckInID names the ticket it admits, so undoing it finds the ticket
// without an index: chk_<number's six characters>_<random>.
func newCheckInID(number string) string {
	return "chk_" + strings.TrimPrefix(number, "TIX-") + "_" + randomString(ticketAlphabet, 10)
}

// checkInTicket is the ticket number a check-in id names ("" when malformed).
func checkInTicket(id string) string {
	rest, ok := strings.CutPrefix(id, "chk_")
	six, _, ok2 := strings.Cut(rest, "_")
	if !ok || !ok2 || !validTicketNumber("TIX-"+six) {
		return ""
	}
	return "TIX-" + six
}

// events is what a write may admit: the door's event, else the key's events.
func (sc Scan) events() []string {
	if sc.EventID != "" {
		return []string{sc.EventID}
	}
	return sc.Events
}

// wants reports whether the door admits tickets of event and occurrence.
func (sc Scan) wants(event, occurrence string) bool {
	if len(sc.Events) > 0 && !slices.Contains(sc.Events, event) {
		return false
	}
	if sc.EventID != "" && event != sc.EventID {
		return false
	}
	return sc.OccurrenceID == "" || occurrence == sc.OccurrenceID
}

// cancelled reports whether the event, or the occurrence, is cancelled,
// from a cache kept statusTTL.
func (s *CheckIns) cancelled(ctx context.Context, t Tenant, eventID, occurrenceID string) (bool, error) {
	if s.Catalog == nil {
		return false, nil
	}
	key := t.OrganizerID + "\x00" + string(t.Environment) + "\x00" + eventID
	now := time.Now()
	s.mu.Lock()
	c, ok := s.statuses[key]
	s.mu.Unlock()
	if !ok || !now.Before(c.until) {
		e, err := s.Catalog.GetEvent(ctx, t.OrganizerID, eventID, t.Environment)
		if isNotFound(err) {
			return true, nil // the event is gone from the catalog
		}
		if err != nil {
			return false, err
		}
		c = cachedStatus{cancelled: map[string]bool{"": e.Status == EventCancelled}, until: now.Add(statusTTL)}
		for _, o := range e.Occurrences {
			c.cancelled[o.ID] = o.Status == OccurrenceCancelled
		}
		s.mu.Lock()
		if s.statuses == nil || len(s.statuses) >= maxCachedEvents {
			s.statuses = map[string]cachedStatus{}
		}
		s.statuses[key] = c
		s.mu.Unlock()
	}
	return c.cancelled[""] || (occurrenceID != "" && c.cancelled[occurrenceID]), nil
}

// Undo removes a check-in (DELETE /v1/check-ins/{id}): the ticket can be
// admitted again.
func (s *CheckIns) Undo(ctx context.Context, t Tenant, id string) (*CheckIn, error) {
	number := checkInTicket(id)
	if number == "" {
		return nil, NotFound("check-in")
	}
	ci, err := s.Store.UndoCheckIn(ctx, t, number, id)
	if isNotFound(err) {
		return nil, NotFound("check-in")
	}
	return ci, err
}

// CheckInStats are an event's door counts (GET /v1/events/{id}/check-in-stats).
type CheckInStats struct {
	EventID      string
	OccurrenceID string
	Sold         int // issued and not refunded (nor being refunded)
	Refunded     int
	Admitted     int
	Gates        map[string]int // admitted per gate
}

// Stats counts the door of one of the tenant's events; a key bound to
// events sees only theirs (another is not found, as another organizer's).
func (s *CheckIns) Stats(ctx context.Context, t Tenant, eventID, occurrenceID string, keyEvents []string) (*CheckInStats, error) {
	if err := s.ownEvent(ctx, t, eventID, occurrenceID, keyEvents); err != nil {
		return nil, err
	}
	return s.Store.CheckInStats(ctx, t, eventID, occurrenceID)
}
