// Package ticketcode is the signed code a ticket's QR carries (docs/door.md):
// what it names, the exact bytes its Ed25519 signature covers, and how a door
// verifies one against the organizer's public keys with no network. It knows
// nothing of HTTP, storage or the order model: the reference verifier in Go
// (docs/door.md gives the one in JavaScript).
package ticketcode

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"tix/internal/jsonkeys"
)

// Version is the "v" of a signed code (v1 was the unsigned JSON payload).
const Version = 2

// Domain starts the signed bytes, so a signature made for anything else
// never verifies as a ticket code.
const Domain = "tix.ticket-code.v2"

// Kinds of code: one ticket admits one person; an order's admits every
// ticket it lists.
const (
	KindTicket = "ticket"
	KindOrder  = "order"
)

// Claims is what a code names: the ticket (or the order's tickets), order,
// event, occurrence and seat, and nothing personal.
type Claims struct {
	OrderID      string
	TicketNumber string // the ticket's number; for an order's code, the order-level number
	EventID      string
	OccurrenceID string   // "" for a single event
	SeatID       string   // "" for general admission and order codes
	Quantity     int      // 1 for a ticket; the order's quantity
	Live         bool     // live (else test) environment
	Tickets      []string // an order's code: the numbers of its tickets; nil for a ticket
}

// Kind is KindOrder when the claims list tickets, else KindTicket.
func (c Claims) Kind() string {
	if c.Tickets != nil {
		return KindOrder
	}
	return KindTicket
}

// Environment is "live" or "test".
func (c Claims) Environment() string {
	if c.Live {
		return "live"
	}
	return "test"
}

// SignedBytes are the exact bytes the signature covers: Domain and eleven
// fields, each on its own line (joined by "\n", no trailing newline):
// kind, kid, environment, order_id, ticket_number, event_id, occurrence_id,
// seat_id, quantity (decimal), tickets (joined by ","). An absent field is
// the empty string. No field may hold a control character, and no ticket
// number a comma, so the lines cannot be shifted.
func SignedBytes(c Claims, kid string) ([]byte, error) {
	fields := []string{Domain, c.Kind(), kid, c.Environment(), c.OrderID, c.TicketNumber, c.EventID,
		c.OccurrenceID, c.SeatID, strconv.Itoa(c.Quantity), strings.Join(c.Tickets, ",")}
	for _, f := range fields {
		if strings.ContainsFunc(f, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return nil, ErrInvalid
		}
	}
	for _, t := range c.Tickets {
		if t == "" || strings.Contains(t, ",") {
			return nil, ErrInvalid
		}
	}
	if c.OrderID == "" || c.TicketNumber == "" || c.EventID == "" || kid == "" || c.Quantity < 1 {
		return nil, ErrInvalid
	}
	return []byte(strings.Join(fields, "\n")), nil
}

// wire is a code's JSON: the v1 payload's members (so a scanner that read
// them still does), the seat, the order's tickets, the key id and signature.
type wire struct {
	V            int      `json:"v"`
	OrderID      string   `json:"order_id"`
	TicketNumber string   `json:"ticket_number"`
	EventID      string   `json:"event_id"`
	OccurrenceID string   `json:"occurrence_id,omitempty"`
	SeatID       string   `json:"seat_id,omitempty"`
	Quantity     int      `json:"quantity"`
	Livemode     bool     `json:"livemode"`
	Test         bool     `json:"test,omitempty"`
	Tickets      []string `json:"tickets,omitempty"`
	Kid          string   `json:"kid"`
	Sig          string   `json:"sig"`
}

// ErrInvalid: the text is not a well-formed signed code, or its signature
// does not verify under any key it may use.
var ErrInvalid = errors.New("not a valid ticket code")

// Sign returns the code of c signed by key: a JSON object, the text a QR
// carries.
func Sign(c Claims, kid string, key ed25519.PrivateKey) (string, error) {
	msg, err := SignedBytes(c, kid)
	if err != nil {
		return "", fmt.Errorf("sign ticket code: %w", err)
	}
	w := wire{V: Version, OrderID: c.OrderID, TicketNumber: c.TicketNumber, EventID: c.EventID, OccurrenceID: c.OccurrenceID,
		SeatID: c.SeatID, Quantity: c.Quantity, Livemode: c.Live, Test: !c.Live && c.Kind() == KindTicket, Tickets: c.Tickets,
		Kid: kid, Sig: base64.RawURLEncoding.EncodeToString(ed25519.Sign(key, msg))}
	b, err := json.Marshal(w)
	return string(b), err
}

// Parse reads a code without verifying it: its claims, key id and
// signature. Unknown or repeated members, and a test member that
// contradicts livemode, make it invalid.
func Parse(code string) (Claims, string, []byte, error) {
	var w wire
	dec := json.NewDecoder(strings.NewReader(code))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil || dec.More() || !strictMembers(code) {
		return Claims{}, "", nil, ErrInvalid
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(w.Sig)
	if err != nil || len(sig) != ed25519.SignatureSize || w.V != Version || (w.Test && w.Livemode) {
		return Claims{}, "", nil, ErrInvalid
	}
	c := Claims{OrderID: w.OrderID, TicketNumber: w.TicketNumber, EventID: w.EventID, OccurrenceID: w.OccurrenceID,
		SeatID: w.SeatID, Quantity: w.Quantity, Live: w.Livemode, Tickets: w.Tickets}
	return c, w.Kid, sig, nil
}

// members are the names a code may hold, spelled exactly.
var members = map[string]bool{"v": true, "order_id": true, "ticket_number": true, "event_id": true, "occurrence_id": true,
	"seat_id": true, "quantity": true, "livemode": true, "test": true, "tickets": true, "kid": true, "sig": true}

// strictMembers reports whether the code is one object whose members are
// all known, spelled exactly (encoding/json would match "SIG" to sig) and
// named once (parsers differ on which of two they keep).
func strictMembers(code string) bool {
	if jsonkeys.Check([]byte(code)) != nil {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(code), &m) != nil {
		return false
	}
	for k := range m {
		if !members[k] {
			return false
		}
	}
	return true
}

// Verify checks code against keys at now: well formed, signed by a key of
// the set that still verifies at now (KeySet.Verifier). It returns the claims.
func Verify(code string, keys KeySet, now time.Time) (Claims, error) {
	c, kid, sig, err := Parse(code)
	if err != nil {
		return Claims{}, err
	}
	pub, ok := keys.Verifier(kid, now)
	if !ok {
		return Claims{}, ErrInvalid
	}
	msg, err := SignedBytes(c, kid)
	if err != nil || !ed25519.Verify(pub, msg, sig) {
		return Claims{}, ErrInvalid
	}
	return c, nil
}
