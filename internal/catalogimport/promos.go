package catalogimport

import (
	"fmt"

	"tix/internal/ticketing"
)

// promos builds the event's promo codes. Tier refs become the tiers' ids.
func (b *catalogBuilder) promos(path string, in *ImportEvent, e *ticketing.Event) {
	if len(in.PromoCodes) > MaxPromoCodesPerEvent {
		b.add(path+".promo_codes", "at most %d promo codes", MaxPromoCodesPerEvent)
	}
	tierRefs := map[string]bool{}
	for _, t := range in.Tiers {
		tierRefs[t.Ref] = true
	}
	codes := map[string]int{} // normalised code -> index
	for i, pc := range in.PromoCodes {
		p := fmt.Sprintf("%s.promo_codes[%d]", path, i)
		out := ticketing.Promo{Code: ticketing.NormalizePromoCode(pc.Code), Type: ticketing.PromoType(pc.Type)}
		switch {
		case pc.Code == "":
			b.add(p+".code", "required")
		case !promoCodePattern.MatchString(pc.Code):
			b.add(p+".code", "must be 3-32 characters of A-Z, a-z, 0-9, '-' or '_'")
		default:
			if j, dup := codes[out.Code]; dup {
				if first := in.PromoCodes[j].Code; first != pc.Code {
					b.add(p+".code", "duplicate code %q (also promo_codes[%d] as %q; codes are case-insensitive)", pc.Code, j, first)
				} else {
					b.add(p+".code", "duplicate code %q (also promo_codes[%d])", pc.Code, j)
				}
			} else {
				codes[out.Code] = i
			}
		}
		switch out.Type {
		case "":
			b.add(p+".type", "required: percent or fixed")
		case ticketing.PromoPercent, ticketing.PromoFixed:
		default:
			b.add(p+".type", "must be percent or fixed")
		}
		switch {
		case pc.Value == nil:
			b.add(p+".value", "required (a whole percent for a percent code, kopecks for a fixed code)")
		case out.Type == ticketing.PromoPercent && (*pc.Value < 1 || *pc.Value > 100):
			b.add(p+".value", "must be between 1 and 100 for a percent code")
		case out.Type == ticketing.PromoFixed && *pc.Value < 1:
			b.add(p+".value", "must be >= 1 (kopecks) for a fixed code")
		default:
			out.Value = *pc.Value
		}
		out.StartsAt = b.time(p+".starts_at", pc.StartsAt, false)
		out.EndsAt = b.time(p+".ends_at", pc.EndsAt, false)
		b.window(p, out.StartsAt, out.EndsAt, "starts_at", "ends_at")
		if pc.MaxUses != nil {
			if *pc.MaxUses < 1 {
				b.add(p+".max_uses", "must be >= 1 (omit it for unlimited uses)")
			} else {
				out.MaxUses = *pc.MaxUses
			}
		}
		seen := map[string]int{}
		for k, ref := range pc.Tiers {
			tp := fmt.Sprintf("%s.tiers[%d]", p, k)
			if j, dup := seen[ref]; dup {
				b.add(tp, "duplicate tier %q (also tiers[%d])", ref, j)
				continue
			}
			seen[ref] = k
			if !tierRefs[ref] || ref == "" {
				b.add(tp, "no tier with ref %q in this event's tiers", ref)
				continue
			}
			out.TierIDs = append(out.TierIDs, CatalogTierID(b.org, in.Ref, ref))
		}
		e.Promos = append(e.Promos, out)
	}
}
