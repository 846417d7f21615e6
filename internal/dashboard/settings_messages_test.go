package dashboard

import (
	"testing"

	"tix/internal/emailjobs"
	"tix/internal/payment"
)

// The Payments and Settings pages build message keys from names: every
// taxation, VAT rate, refusal kind, field and language has its text in
// both languages.
func TestMessages_PaymentsAndSettingsKeys(t *testing.T) {
	var keys []string
	for _, x := range payment.Taxations {
		keys = append(keys, "tax."+x)
	}
	for _, x := range payment.VATRates {
		keys = append(keys, "vat."+x)
	}
	for _, k := range []string{payment.RefusedPassword, payment.RefusedTerminal, payment.RefusedOther, payment.Unreachable} {
		keys = append(keys, "pay.refused_"+k)
	}
	for _, f := range []string{"terminal_key", "password", "taxation", "vat"} {
		keys = append(keys, "pay.bad_"+f)
	}
	for _, f := range append(append([]string{}, identityFields...), "language", "contacts", "test_email") {
		keys = append(keys, "set.bad_"+f)
	}
	for _, f := range identityFields {
		keys = append(keys, "set."+f, "set."+f+"_help")
	}
	for _, l := range emailjobs.Languages {
		keys = append(keys, "lang."+l)
	}
	for _, k := range keys {
		if m, ok := messages[k]; !ok || m.ru == "" || m.en == "" {
			t.Errorf("message %q is missing or untranslated", k)
		}
	}
}
