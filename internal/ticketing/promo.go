package ticketing

import (
	"slices"
	"strings"
	"time"
)

// PromoType is how a promo code discounts: a percentage or a fixed amount.
type PromoType string

// Promo code types.
const (
	PromoPercent PromoType = "percent" // Value is a whole percent, 1-100
	PromoFixed   PromoType = "fixed"   // Value is kopecks off the order
)

// Promo is a promo code defined in the catalog import for one event. Its usage
// counter lives with the event's stock (per environment), not here.
type Promo struct {
	Code     string     `json:"code"` // normalised to upper case
	Type     PromoType  `json:"type"`
	Value    int64      `json:"value"`
	StartsAt *time.Time `json:"starts_at,omitempty"`
	EndsAt   *time.Time `json:"ends_at,omitempty"`
	MaxUses  int        `json:"max_uses,omitempty"` // 0 = unlimited
	TierIDs  []string   `json:"tier_ids,omitempty"` // empty = every tier
}

// NormalizePromoCode is how codes are compared: trimmed, upper case.
func NormalizePromoCode(code string) string { return strings.ToUpper(strings.TrimSpace(code)) }

// Promo returns the event's promo code, compared case-insensitively.
func (e *Event) Promo(code string) (*Promo, bool) {
	code = NormalizePromoCode(code)
	for i := range e.Promos {
		if e.Promos[i].Code == code {
			return &e.Promos[i], true
		}
	}
	return nil, false
}

// Active reports whether the code can be used at now.
func (p *Promo) Active(now time.Time) bool {
	return Window{Start: p.StartsAt, End: p.EndsAt}.Contains(now)
}

// AppliesTo reports whether the code discounts tier tierID.
func (p *Promo) AppliesTo(tierID string) bool {
	return len(p.TierIDs) == 0 || slices.Contains(p.TierIDs, tierID)
}

// Discount is the amount the code takes off eligible, an amount in kopecks:
// percent rounds down to the kopeck; a fixed amount never exceeds eligible.
func (p *Promo) Discount(eligible int64) int64 {
	var d int64
	switch p.Type {
	case PromoPercent:
		d = eligible * p.Value / 100
	case PromoFixed:
		d = p.Value
	}
	return min(max(d, 0), eligible)
}
