package ticketing

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// OrderFinder finds orders by what a buyer quotes to the organizer: the
// email address the order was made with, or a ticket number. Each is one
// indexed read, never a scan of the organizer's orders.
type OrderFinder interface {
	// OrdersByBuyer returns up to limit of the tenant's orders whose buyer
	// email normalizes (BuyerKey) to the same key as email, newest first:
	// one query of the buyer index. An order written without its buyer key
	// (docs/aws.md) is not found.
	OrdersByBuyer(ctx context.Context, t Tenant, email string, limit int) ([]*Order, error)
	// TicketOrder is the id of the order holding a ticket number (the
	// order-level number or one ticket's) in env; not_found when none does.
	TicketOrder(ctx context.Context, env Environment, number string) (string, error)
}

// NormalizeBuyerEmail is how buyer emails compare: trimmed, lower case.
func NormalizeBuyerEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// BuyerKey is the buyer index's key of an email within one organizer's
// environment: the SHA-256 of the normalized address, so that the index
// key (which appears in metrics and logs) carries no address.
func BuyerKey(org string, env Environment, email string) string {
	sum := sha256.Sum256([]byte(NormalizeBuyerEmail(email)))
	return org + "#" + string(env) + "#" + hex.EncodeToString(sum[:])
}

// OrderSearch finds a tenant's orders by buyer email or ticket number, as of
// now (the reads apply expiry and settled refunds as GET /orders does).
type OrderSearch struct {
	Orders *Orders
	Finder OrderFinder
}

// MaxSearchEmail is the longest address a search takes (RFC 5321's path limit).
const MaxSearchEmail = 254

// ByBuyer is up to limit of the tenant's orders made with email, newest first.
func (s *OrderSearch) ByBuyer(ctx context.Context, t Tenant, email string, limit int) ([]*Order, error) {
	e := NormalizeBuyerEmail(email)
	if e == "" || len(e) > MaxSearchEmail || !strings.Contains(e, "@") {
		return nil, Invalid("email", "give the buyer's whole email address, like name@example.com")
	}
	found, err := s.Finder.OrdersByBuyer(ctx, t, e, limit)
	if err != nil {
		return nil, err
	}
	out := make([]*Order, 0, len(found))
	for _, o := range found {
		if o.OrganizerID != t.OrganizerID || o.Environment != t.Environment {
			continue // the index is scoped by tenant; a wrong one is never shown
		}
		cur, err := s.Orders.current(ctx, o)
		if err != nil {
			return nil, err
		}
		out = append(out, cur)
	}
	return out, nil
}

// ByTicket is the tenant's order holding a ticket number (TIX-XXXXXX, any
// case); another tenant's is not found, as a missing one.
func (s *OrderSearch) ByTicket(ctx context.Context, t Tenant, number string) (*Order, error) {
	n := strings.ToUpper(strings.TrimSpace(number))
	if len(n) > 64 {
		return nil, NotFound("ticket " + n[:64])
	}
	id, err := s.Finder.TicketOrder(ctx, t.Environment, n)
	if err != nil {
		return nil, err
	}
	return s.Orders.Order(ctx, t, id)
}
