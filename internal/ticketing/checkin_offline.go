package ticketing

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"tix/internal/ticketcode"
)

// Offline doors (docs/door.md#offline-doors): scans a door made with no
// network are uploaded in batches and merged so that each ticket's admission
// is its earliest scan, every later one is a duplicate, and none is lost.

// Results only an uploaded scan has.
const (
	ResultDuplicate = "duplicate" // an earlier scan admitted the ticket
	ResultConflict  = "conflict"  // the client scan id was recorded with other contents
)

// Limits of an upload.
const (
	MaxBatchScans     = 100
	MaxClientScanID   = 64
	MaxScanAhead      = 5 * time.Minute    // a scan's time ahead of the server's clock
	MaxScanAge        = 7 * 24 * time.Hour // and behind it
	maxMergeAttempts  = 8
	clientScanIDChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.:"
)

// OfflineScan is one scan a door made offline.
type OfflineScan struct {
	ClientScanID string
	Code         string
	ScannedAt    time.Time
	Gate         string // "" : the batch's gate
}

// ScanBatch is one upload of offline scans (POST /v1/check-ins/batch).
type ScanBatch struct {
	Gate         string
	EventID      string
	OccurrenceID string
	Events       []string // the key's events (empty: every event)
	KeyID        string
	Scans        []OfflineScan
}

// ScanRecord is an uploaded scan as recorded, once per client scan id.
type ScanRecord struct {
	ClientScanID string    `json:"client_scan_id"`
	Code         string    `json:"code"`
	ScannedAt    time.Time `json:"scanned_at"`
	Gate         string    `json:"gate"`
	KeyID        string    `json:"key_id"`
	RecordedAt   time.Time `json:"recorded_at"`
}

// same reports whether r records the scan sc (a re-upload of it).
func (r ScanRecord) same(sc OfflineScan) bool {
	return r.Code == sc.Code && r.ScannedAt.Equal(sc.ScannedAt) && r.Gate == sc.Gate
}

// Batch merges the uploaded scans and answers each, in the upload's order.
// The scans are merged in the order they were made, so that within a batch
// no answer is overtaken by a later merge of an earlier scan.
func (s *CheckIns) Batch(ctx context.Context, t Tenant, b ScanBatch) ([]ScanResult, error) {
	if err := s.validBatch(&b); err != nil {
		return nil, err
	}
	order := make([]int, len(b.Scans))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return b.Scans[x].ScannedAt.Compare(b.Scans[y].ScannedAt) })
	out := make([]ScanResult, len(b.Scans))
	for _, i := range order {
		res, err := s.mergeScan(ctx, t, b, b.Scans[i])
		if err != nil {
			return nil, err
		}
		out[i] = *res
	}
	return out, nil
}

// validBatch checks an upload whole before anything is written.
func (s *CheckIns) validBatch(b *ScanBatch) error {
	b.Gate = strings.TrimSpace(b.Gate)
	if !validGate(b.Gate) {
		return Invalid("gate", "gate is required: the name of the door or scanner, 1 to %d printable characters", MaxGateLength)
	}
	if len(b.Scans) == 0 || len(b.Scans) > MaxBatchScans {
		return Invalid("scans", "scans must hold 1 to %d scans; upload more in several requests", MaxBatchScans)
	}
	now, seen := s.Clock.Now(), map[string]bool{}
	for i := range b.Scans {
		sc := &b.Scans[i]
		param := fmt.Sprintf("scans[%d].", i)
		sc.Code, sc.Gate = strings.TrimSpace(sc.Code), strings.TrimSpace(sc.Gate)
		if sc.Gate == "" {
			sc.Gate = b.Gate
		}
		switch {
		case sc.ClientScanID == "" || len(sc.ClientScanID) > MaxClientScanID ||
			strings.ContainsFunc(sc.ClientScanID, func(r rune) bool { return !strings.ContainsRune(clientScanIDChars, r) }):
			return Invalid(param+"client_scan_id", "client_scan_id is required: 1 to %d of A-Z a-z 0-9 _ - . : naming the scan (a device id and a counter, or a UUID)", MaxClientScanID)
		case seen[sc.ClientScanID]:
			return Invalid(param+"client_scan_id", "client_scan_id %s appears twice in the batch; give each scan its own id", sc.ClientScanID)
		case sc.Code == "" || len(sc.Code) > MaxCodeLength:
			return Invalid(param+"code", "code is required: the scanned text (at most %d characters) or a typed ticket number", MaxCodeLength)
		case !validGate(sc.Gate):
			return Invalid(param+"gate", "gate must be 1 to %d printable characters", MaxGateLength)
		case sc.ScannedAt.IsZero() || sc.ScannedAt.After(now.Add(MaxScanAhead)) || sc.ScannedAt.Before(now.Add(-MaxScanAge)):
			return Invalid(param+"scanned_at", "scanned_at is required (RFC 3339), at most %s ahead of the server's clock and %s behind it; check the device's clock",
				MaxScanAhead, MaxScanAge)
		}
		seen[sc.ClientScanID] = true
		sc.ScannedAt = sc.ScannedAt.UTC()
	}
	return nil
}

func validGate(g string) bool {
	return g != "" && len(g) <= MaxGateLength && !strings.ContainsFunc(g, isControl)
}

// mergeScan records one uploaded scan, then merges what it names.
func (s *CheckIns) mergeScan(ctx context.Context, t Tenant, b ScanBatch, sc OfflineScan) (*ScanResult, error) {
	rec, existed, err := s.Store.RecordScan(ctx, t, ScanRecord{ClientScanID: sc.ClientScanID, Code: sc.Code, ScannedAt: sc.ScannedAt,
		Gate: sc.Gate, KeyID: b.KeyID, RecordedAt: s.Clock.Now().UTC()})
	if err != nil {
		return nil, err
	}
	if existed && !rec.same(sc) {
		return &ScanResult{Result: ResultConflict}, nil
	}
	door := Scan{Code: sc.Code, Gate: sc.Gate, EventID: b.EventID, OccurrenceID: b.OccurrenceID, Events: b.Events, KeyID: b.KeyID}
	r, res, err := s.resolve(ctx, t, door)
	if res != nil || err != nil {
		return res, err
	}
	if r.orderNumber == "" {
		return s.mergeTicket(ctx, t, door, sc, r.numbers[0], r.orderID)
	}
	return s.mergeOrder(ctx, t, door, sc, r)
}

// resolved is what a scanned code names: its ticket numbers, its order (a
// signed code's) and, for an order's code or number, the order-level number.
type resolved struct {
	numbers              []string
	orderID, orderNumber string
}

// resolve is what a scanned code names: its ticket numbers and order (a
// signed code's), or the answer when it admits nothing.
func (s *CheckIns) resolve(ctx context.Context, t Tenant, sc Scan) (resolved, *ScanResult, error) {
	if !strings.HasPrefix(sc.Code, "{") {
		number := strings.ToUpper(sc.Code)
		if !validTicketNumber(number) {
			return resolved{}, &ScanResult{Result: ResultInvalid}, nil
		}
		st, err := s.Store.TicketState(ctx, t.Environment, number)
		if err != nil || !st.Found || st.OrganizerID != t.OrganizerID || st.Tickets == nil {
			return resolved{numbers: []string{number}}, nil, err
		}
		if !sc.wants(st.EventID, st.OccurrenceID) {
			return resolved{}, &ScanResult{Result: ResultWrongEvent, TicketNumber: number}, nil
		}
		return s.orderResolved(st.Tickets, st.OrderID, number)
	}
	c, err := s.verify(ctx, t, sc.Code)
	if errors.Is(err, ticketcode.ErrInvalid) {
		return resolved{}, &ScanResult{Result: ResultInvalid}, nil
	}
	if err != nil {
		return resolved{}, nil, err
	}
	if !sc.wants(c.EventID, c.OccurrenceID) {
		return resolved{}, &ScanResult{Result: ResultWrongEvent, TicketNumber: c.TicketNumber}, nil
	}
	if c.Kind() == ticketcode.KindOrder {
		return s.orderResolved(c.Tickets, c.OrderID, c.TicketNumber)
	}
	return resolved{numbers: []string{c.TicketNumber}, orderID: c.OrderID}, nil, nil
}

func (s *CheckIns) orderResolved(tickets []string, orderID, number string) (resolved, *ScanResult, error) {
	if len(tickets) == 0 {
		return resolved{}, &ScanResult{Result: ResultInvalid, TicketNumber: number}, nil
	}
	return resolved{numbers: tickets, orderID: orderID, orderNumber: number}, nil, nil
}

// mergeOrder merges each ticket of an order's code on its own: offline, the
// first scan of each ticket wins.
func (s *CheckIns) mergeOrder(ctx context.Context, t Tenant, door Scan, sc OfflineScan, r resolved) (*ScanResult, error) {
	res := &ScanResult{TicketNumber: r.orderNumber, Tickets: make([]ScanResult, len(r.numbers))}
	for i, n := range r.numbers {
		one, err := s.mergeTicket(ctx, t, door, sc, n, r.orderID)
		if err != nil {
			return nil, err
		}
		res.Tickets[i] = *one
	}
	res.Result = res.Tickets[0].Result
	for _, one := range res.Tickets {
		if one.Result == ResultAdmitted {
			res.Result = ResultAdmitted
		}
	}
	return res, nil
}

// mergeTicket makes the scan the ticket's admission when it is the earliest:
// it reads the ticket, then writes conditionally on what it read (no
// admission, or that admission by id), and reads again when it lost a race.
func (s *CheckIns) mergeTicket(ctx context.Context, t Tenant, door Scan, sc OfflineScan, number, orderID string) (*ScanResult, error) {
	ci := CheckIn{ID: offlineCheckInID(t, sc.ClientScanID, number), TicketNumber: number, Gate: sc.Gate, At: sc.ScannedAt,
		KeyID: door.KeyID, EventID: door.EventID, OccurrenceID: door.OccurrenceID}
	for range maxMergeAttempts {
		st, err := s.Store.TicketState(ctx, t.Environment, number)
		if err != nil {
			return nil, err
		}
		if res, err := s.refuse(ctx, t, door, st, orderID); res != nil || err != nil {
			return res, err
		}
		res := &ScanResult{Result: ResultAdmitted, TicketNumber: number, Seat: st.Seat, CheckIn: &ci}
		switch prev := st.CheckIn; {
		case prev != nil && prev.ID == ci.ID: // this scan's admission (a re-upload)
			res.CheckIn = prev
			return res, nil
		case prev != nil && !ci.At.Before(prev.At):
			res.Result, res.CheckIn = ResultDuplicate, prev
			return res, nil
		case prev != nil:
			err = s.Store.ReplaceCheckIn(ctx, t, ci, *prev, door.events())
			if err == nil {
				res.Superseded = prev
				s.announce(ctx, t, st, &ci)
				return res, nil
			}
		default:
			var now TicketState
			if now, err = s.Store.Admit(ctx, t, ci, door.events()); err == nil && now.Admitted {
				s.announce(ctx, t, now, &ci)
				return res, nil
			}
		}
		if err != nil && !errors.Is(err, ErrStateChanged) {
			return nil, err
		}
	}
	return nil, Errorf(CodeConflict, "ticket %s is being scanned at many gates at once; upload the batch again", number)
}

// refuse is the answer for a ticket the scan cannot admit (nil: it can).
func (s *CheckIns) refuse(ctx context.Context, t Tenant, door Scan, st TicketState, orderID string) (*ScanResult, error) {
	res := &ScanResult{TicketNumber: st.Number, Seat: st.Seat}
	switch {
	case !st.Found || st.OrganizerID != t.OrganizerID || st.Tickets != nil || (orderID != "" && st.OrderID != orderID):
		return &ScanResult{Result: ResultInvalid}, nil
	case !door.wants(st.EventID, st.OccurrenceID):
		res.Result = ResultWrongEvent
	case st.RefundID != "":
		res.Result = ResultRefunded
	case st.TransferredTo != "":
		res.Result = ResultTransferred
	case st.EventID == "":
		res.Result = ResultInvalid // a ticket issued before the door kept its event
	default:
		cancelled, err := s.cancelled(ctx, t, st.EventID, st.OccurrenceID)
		if err != nil || !cancelled {
			return nil, err
		}
		res.Result = ResultCancelled
	}
	return res, nil
}

// offlineCheckInID is the same for every upload of one scan of one ticket,
// so a re-upload recognises its own admission: chk_<six>_<ten of a hash of
// the tenant, client scan id and ticket>.
func offlineCheckInID(t Tenant, clientScanID, number string) string {
	sum := sha256.Sum256([]byte(t.OrganizerID + "\x00" + string(t.Environment) + "\x00" + clientScanID + "\x00" + number))
	b := make([]byte, 10)
	for i := range b {
		b[i] = ticketAlphabet[int(sum[i])%len(ticketAlphabet)]
	}
	return "chk_" + strings.TrimPrefix(number, "TIX-") + "_" + string(b)
}
