package tbanksim

import (
	"math"

	"tix/internal/payment/tbank"
)

// The values the bank accepts in a receipt.
var (
	taxations = set("osn", "usn_income", "usn_income_outcome", "envd", "esn", "patent")
	taxes     = set("none", "vat0", "vat5", "vat7", "vat10", "vat18", "vat20", "vat105", "vat107", "vat110", "vat118", "vat120", "vat22", "vat122")
	methods   = set("full_prepayment", "prepayment", "advance", "full_payment", "partial_payment", "credit", "credit_payment")
	objects   = set("commodity", "excise", "job", "service", "gambling_bet", "gambling_prize", "lottery",
		"lottery_prize", "intellectual_activity", "payment", "agent_commission", "composite", "another")
)

func set(vs ...string) map[string]bool {
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

// checkReceipt refuses a receipt the cash register could not issue: no buyer
// contact, unknown taxation, an item without name or with an unknown tax,
// payment method or object, an item whose Amount is not Price × Quantity, or
// items that do not add up to the payment's amount.
func checkReceipt(r *tbank.Receipt, amount int64) error {
	switch {
	case r.Email == "" && r.Phone == "":
		return errf("Receipt needs Email or Phone")
	case !taxations[r.Taxation]:
		return errf("Receipt.Taxation %q is unknown", r.Taxation)
	case len(r.Items) == 0:
		return errf("Receipt has no Items")
	}
	var sum int64
	for i, it := range r.Items {
		switch {
		case it.Name == "" || len([]rune(it.Name)) > 128:
			return errf("Receipt.Items[%d].Name must have 1..128 characters", i)
		case !taxes[it.Tax]:
			return errf("Receipt.Items[%d].Tax %q is unknown", i, it.Tax)
		case it.PaymentMethod != "" && !methods[it.PaymentMethod]:
			return errf("Receipt.Items[%d].PaymentMethod %q is unknown", i, it.PaymentMethod)
		case it.PaymentObject != "" && !objects[it.PaymentObject]:
			return errf("Receipt.Items[%d].PaymentObject %q is unknown", i, it.PaymentObject)
		case it.Price < 0 || it.Quantity <= 0:
			return errf("Receipt.Items[%d] needs Price >= 0 and Quantity > 0", i)
		case it.Amount != int64(math.Round(float64(it.Price)*it.Quantity)):
			return errf("Receipt.Items[%d].Amount %d is not Price %d × Quantity %v", i, it.Amount, it.Price, it.Quantity)
		}
		sum += it.Amount
	}
	if sum != amount {
		return errf("Receipt items add up to %d kopecks, the amount is %d", sum, amount)
	}
	return nil
}
