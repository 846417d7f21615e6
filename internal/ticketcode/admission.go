package ticketcode

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// AdmissionDomain starts the signed bytes of an admission list's page, so a
// page's signature never verifies as a ticket code and the reverse.
const AdmissionDomain = "tix.admission-list.v1"

// Admission states of a ticket on the list (docs/door.md).
const (
	StateValid    = "valid"
	StateAdmitted = "admitted"
	StateRefunded = "refunded"
	// StateTransferred: given to someone else (docs/transfers.md); its
	// code no longer admits.
	StateTransferred = "transferred"
)

// AdmissionPage is one page of GET /v1/events/{id}/admission-list as the
// wire carries it: every member a device needs to decide with no network,
// and the signature of the organizer's current ticket key over its signed
// bytes (AdmissionBytes).
type AdmissionPage struct {
	Object       string           `json:"object"`
	EventID      string           `json:"event_id"`
	OccurrenceID *string          `json:"occurrence_id"`
	Livemode     bool             `json:"livemode"`
	GeneratedAt  string           `json:"generated_at"`
	Data         []AdmissionEntry `json:"data"`
	HasMore      bool             `json:"has_more"`
	NextCursor   *string          `json:"next_cursor"`
	Kid          string           `json:"kid"`
	Sig          string           `json:"sig"`
}

// AdmissionEntry is one ticket of the list.
type AdmissionEntry struct {
	TicketNumber      string            `json:"ticket_number"`
	OrderID           string            `json:"order_id"`
	OrderTicketNumber *string           `json:"order_ticket_number"`
	OccurrenceID      *string           `json:"occurrence_id"`
	Seat              *Seat             `json:"seat"`
	State             string            `json:"state"`
	CheckIn           *AdmissionCheckIn `json:"check_in"`
}

// Seat is a ticket's seat on the wire, as GET /orders/{id}/tickets, a
// check-in's answer and the admission list show it; on the list only
// SeatCode is signed.
type Seat struct {
	Label    string  `json:"label"`
	ZoneName string  `json:"zone_name"`
	Row      *string `json:"row"`
	Number   *int    `json:"number"`
	SeatCode *string `json:"seat_code"`
}

// AdmissionCheckIn is a ticket's first admission.
type AdmissionCheckIn struct {
	ID           string `json:"id"`
	TicketNumber string `json:"ticket_number"`
	Gate         string `json:"gate"`
	At           string `json:"at"`
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// AdmissionBytes are the exact bytes a page's signature covers: the domain,
// kid, environment, event, occurrence asked for, generated_at, has_more and
// the number of entries, each on its own line, then one line per entry of
// nine fields joined by TAB (ticket_number, order_id, order_ticket_number,
// occurrence_id, seat_code, state, check-in id, at and gate; absent: empty).
// Lines are joined by "\n", no trailing newline; no field may hold a
// control character.
func AdmissionBytes(p *AdmissionPage) ([]byte, error) {
	env := "test"
	if p.Livemode {
		env = "live"
	}
	lines := []string{AdmissionDomain, p.Kid, env, p.EventID, deref(p.OccurrenceID), p.GeneratedAt,
		strconv.FormatBool(p.HasMore), strconv.Itoa(len(p.Data))}
	fields := append([]string(nil), lines...)
	for _, e := range p.Data {
		f := []string{e.TicketNumber, e.OrderID, deref(e.OrderTicketNumber), deref(e.OccurrenceID), "", e.State, "", "", ""}
		if e.Seat != nil {
			f[4] = deref(e.Seat.SeatCode)
		}
		if e.CheckIn != nil {
			f[6], f[7], f[8] = e.CheckIn.ID, e.CheckIn.At, e.CheckIn.Gate
		}
		fields = append(fields, f...)
		lines = append(lines, strings.Join(f, "\t"))
	}
	for _, f := range fields {
		if strings.ContainsFunc(f, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, fmt.Errorf("admission list: a field holds a control character: %q", f)
		}
	}
	if p.Kid == "" || p.EventID == "" {
		return nil, errors.New("admission list: no kid or event")
	}
	return []byte(strings.Join(lines, "\n")), nil
}

// SignAdmissionPage sets p's kid and signature by key.
func SignAdmissionPage(p *AdmissionPage, kid string, key ed25519.PrivateKey) error {
	p.Kid = kid
	msg, err := AdmissionBytes(p)
	if err != nil {
		return err
	}
	p.Sig = base64.RawURLEncoding.EncodeToString(ed25519.Sign(key, msg))
	return nil
}

// VerifyAdmissionPage checks a page a device holds against the organizer's
// public keys at now: signed by a key of the set that still verifies.
func VerifyAdmissionPage(p *AdmissionPage, keys KeySet, now time.Time) error {
	sig, err := base64.RawURLEncoding.Strict().DecodeString(p.Sig)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return ErrInvalid
	}
	pub, ok := keys.Verifier(p.Kid, now)
	if !ok {
		return ErrInvalid
	}
	msg, err := AdmissionBytes(p)
	if err != nil || !ed25519.Verify(pub, msg, sig) {
		return ErrInvalid
	}
	return nil
}
