package ticketing

import (
	"fmt"
	"net/mail"
	"net/url"
	"strings"
)

// StandingItem is a quantity of a standing tier.
type StandingItem struct {
	TierID *string `json:"tier_id"`
	Qty    *int    `json:"qty"`
}

// OrderRequest is POST /orders and, without Buyer, ReturnURL and PaymentMethod,
// POST /orders/preview. Pointers tell "absent" from "empty".
type OrderRequest struct {
	Buyer              *BuyerInput     `json:"buyer,omitempty"`
	TierID             *string         `json:"tier_id,omitempty"`
	SeatReservationIDs *[]string       `json:"seat_reservation_ids,omitempty"`
	StandingItems      *[]StandingItem `json:"standing_items,omitempty"`
	EventID            *string         `json:"event_id,omitempty"`
	OccurrenceID       *string         `json:"occurrence_id,omitempty"`
	Quantity           *int            `json:"quantity,omitempty"`
	PromoCode          *string         `json:"promo_code,omitempty"`
	ReturnURL          *string         `json:"return_url,omitempty"`
	PaymentMethod      *string         `json:"payment_method,omitempty"`
}

// BuyerInput is the buyer as sent.
type BuyerInput struct {
	Email *string `json:"email,omitempty"`
	Name  *string `json:"name,omitempty"`
	Phone *string `json:"phone,omitempty"`
}

// validateSelection applies the 400 rules shared by preview and create.
func validateSelection(req *OrderRequest) error {
	if err := validateOneSelection(req); err != nil {
		return err
	}
	if err := validateSelectionFields(req); err != nil {
		return err
	}
	switch {
	case req.TierID != nil:
		return validateTierSelection(req)
	case req.SeatReservationIDs != nil:
		return validateReservationIDs(*req.SeatReservationIDs)
	default:
		return validateStandingItems(*req.StandingItems)
	}
}

// validateOneSelection: exactly one of tier_id, seat_reservation_ids and
// standing_items.
func validateOneSelection(req *OrderRequest) error {
	given := []string{}
	if req.TierID != nil {
		given = append(given, "tier_id")
	}
	if req.SeatReservationIDs != nil {
		given = append(given, "seat_reservation_ids")
	}
	if req.StandingItems != nil {
		given = append(given, "standing_items")
	}
	switch len(given) {
	case 0:
		return Invalid("tier_id", "exactly one selection is required: tier_id (with quantity), seat_reservation_ids or standing_items")
	case 1:
		return nil
	default:
		return Invalid(given[1], "exactly one selection is allowed, got %s", strings.Join(given, " and "))
	}
}

// validateSelectionFields checks the fields that go with any selection.
func validateSelectionFields(req *OrderRequest) error {
	if req.Quantity != nil && req.TierID == nil {
		return Invalid("quantity", "quantity goes with tier_id; seat orders count their reservations and standing items carry qty")
	}
	if req.EventID != nil && *req.EventID == "" {
		return Invalid("event_id", "event_id must not be empty")
	}
	if req.OccurrenceID != nil && *req.OccurrenceID == "" {
		return Invalid("occurrence_id", "occurrence_id must not be empty; omit it for a single event")
	}
	if req.PromoCode != nil && strings.TrimSpace(*req.PromoCode) == "" {
		return Invalid("promo_code", "promo_code must not be empty; omit it to order without a code")
	}
	return nil
}

func validateTierSelection(req *OrderRequest) error {
	if *req.TierID == "" {
		return Invalid("tier_id", "tier_id must not be empty")
	}
	if req.Quantity != nil && *req.Quantity < 1 {
		return Invalid("quantity", "quantity must be at least 1")
	}
	if req.Quantity != nil && *req.Quantity > MaxUnitsPerOrder {
		return Invalid("quantity", "at most %d tickets per order", MaxUnitsPerOrder)
	}
	return nil
}

func validateReservationIDs(ids []string) error {
	if len(ids) == 0 {
		return Invalid("seat_reservation_ids", "seat_reservation_ids must list at least one reservation")
	}
	if len(ids) > MaxUnitsPerOrder {
		return Invalid("seat_reservation_ids", "at most %d seats per order", MaxUnitsPerOrder)
	}
	seen := map[string]bool{}
	for i, id := range ids {
		p := fmt.Sprintf("seat_reservation_ids[%d]", i)
		if id == "" {
			return Invalid(p, "reservation id must not be empty")
		}
		if seen[id] {
			return Invalid(p, "reservation %s is listed twice", id)
		}
		seen[id] = true
	}
	return nil
}

func validateStandingItems(items []StandingItem) error {
	if len(items) == 0 {
		return Invalid("standing_items", "standing_items must list at least one item")
	}
	total := 0
	seen := map[string]bool{}
	for i, it := range items {
		p := fmt.Sprintf("standing_items[%d]", i)
		if it.TierID == nil || *it.TierID == "" {
			return Invalid(p+".tier_id", "tier_id is required")
		}
		if seen[*it.TierID] {
			return Invalid(p+".tier_id", "tier %s is listed twice; put the whole quantity in one item", *it.TierID)
		}
		seen[*it.TierID] = true
		if it.Qty == nil {
			return Invalid(p+".qty", "qty is required")
		}
		if *it.Qty < 1 {
			return Invalid(p+".qty", "qty must be at least 1")
		}
		total += *it.Qty
		if *it.Qty > MaxUnitsPerOrder || total > MaxUnitsPerOrder {
			return Invalid(p+".qty", "at most %d tickets per order", MaxUnitsPerOrder)
		}
	}
	return nil
}

// checkEmail refuses what is not one plain address at a domain name
// (param names the field).
func checkEmail(param, email string) error {
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 254 || !strings.Contains(email[strings.LastIndex(email, "@"):], ".") {
		return Invalid(param, "%s %q is not a valid email address", param, email)
	}
	if strings.ContainsAny(email[strings.LastIndex(email, "@"):], "[]") {
		return Invalid(param, "%s %q has an IP address for its domain: give an address at a domain name, like anna@example.com", param, email)
	}
	return nil
}

func validateCreate(req *OrderRequest) (Buyer, error) {
	var b Buyer
	if req.Buyer == nil {
		return b, Invalid("buyer", "buyer is required (at least buyer.email)")
	}
	if req.Buyer.Email == nil || strings.TrimSpace(*req.Buyer.Email) == "" {
		return b, Invalid("buyer.email", "buyer.email is required")
	}
	email := strings.TrimSpace(*req.Buyer.Email)
	if err := checkEmail("buyer.email", email); err != nil {
		return b, err
	}
	b.Email = email
	if req.Buyer.Name != nil {
		if len(*req.Buyer.Name) > 200 {
			return b, Invalid("buyer.name", "buyer.name is longer than 200 characters")
		}
		b.Name = req.Buyer.Name
	}
	if req.Buyer.Phone != nil {
		p := strings.TrimSpace(*req.Buyer.Phone)
		if len(p) > 32 || strings.Trim(p, "+0123456789 -()") != "" {
			return b, Invalid("buyer.phone", "buyer.phone must be a phone number, E.164 recommended (+79991234567)")
		}
		b.Phone = &p
	}
	if err := validateSelection(req); err != nil {
		return b, err
	}
	if req.ReturnURL != nil {
		u, err := url.Parse(*req.ReturnURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || len(*req.ReturnURL) > 2048 {
			return b, Invalid("return_url", "return_url must be an absolute https:// URL")
		}
	}
	if req.PaymentMethod != nil && *req.PaymentMethod != "sbp" {
		return b, &Error{Code: CodeUnsupported, Param: "payment_method", Message: fmt.Sprintf("payment method %q is not supported: orders are paid by SBP only (payment_method \"sbp\")", *req.PaymentMethod)}
	}
	return b, nil
}
