package tbank_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"tix/internal/payment/tbank"
)

// The example T-Bank documents for the Token: its Init request, Receipt and
// DATA included, with password 11111111111111, gives this Token (docs/live-payments.md
// names the page).
const (
	docPassword = "11111111111111"
	docToken    = "72dd466f8ace0a37a1f740ce5fb78101712bc0665d91a8108c7c8a0ccd426db2"
	docRequest  = `{
		"TerminalKey": "MerchantTerminalKey",
		"Amount": 19200,
		"OrderId": "00000",
		"Description": "Подарочная карта на 1000 рублей",
		"DATA": {"Phone": "+71234567890", "Email": "a@test.com"},
		"Receipt": {"Email": "a@test.ru", "Phone": "+79031234567", "Taxation": "osn",
			"Items": [{"Name": "Наименование товара 1", "Price": 10000, "Quantity": 1, "Amount": 10000, "Tax": "vat10"}]}
	}`
)

func TestToken_MatchesTheBanksDocumentedExample(t *testing.T) {
	got, err := tbank.Token([]byte(docRequest), docPassword)
	if err != nil {
		t.Fatal(err)
	}
	if got != docToken {
		t.Errorf("Token = %s, want the documented %s", got, docToken)
	}
}

func TestToken_RendersScalarsAsTheBankDoes(t *testing.T) {
	// Password "p" sorts between the fields: values in key order are
	// Amount 1500, IsRejected false, OrderId "o-1", Password p, Success true.
	body := `{"Success": true, "OrderId": "o-1", "Amount": 1500, "IsRejected": false, "Token": "x", "Nothing": null, "Items": [1]}`
	got, err := tbank.Token([]byte(body), "p")
	if err != nil {
		t.Fatal(err)
	}
	if got != sha("1500falseo-1ptrue") {
		t.Errorf("Token = %s, want sha256(\"1500falseo-1ptrue\")", got)
	}
}

func TestCheckToken_CoversEveryRootScalarField(t *testing.T) {
	signed, err := tbank.SignNotification([]byte(`{"TerminalKey":"T","OrderId":"o","Success":true,"Status":"CONFIRMED","PaymentId":42,"ErrorCode":"0","Amount":100,"NewField":"from the bank","Data":{"x":"y"}}`), "pw")
	if err != nil {
		t.Fatal(err)
	}
	if err := tbank.CheckToken(signed, "pw"); err != nil {
		t.Fatalf("genuine notification with an unknown field: %v", err)
	}
	for name, tamper := range map[string][2]string{
		"unknown field changed": {`"NewField":"from the bank"`, `"NewField":"forged"`},
		"status changed":        {`"Status":"CONFIRMED"`, `"Status":"REFUNDED"`},
		"number changed":        {`"Amount":100`, `"Amount":101`},
		"boolean changed":       {`"Success":true`, `"Success":false`},
		"field added":           {`"Amount":100`, `"Amount":100,"Extra":"1"`},
	} {
		forged := strings.Replace(string(signed), tamper[0], tamper[1], 1)
		if forged == string(signed) {
			t.Fatalf("%s: pattern %s not found in %s", name, tamper[0], signed)
		}
		if err := tbank.CheckToken([]byte(forged), "pw"); !errors.Is(err, tbank.ErrBadToken) {
			t.Errorf("%s: err = %v, want ErrBadToken", name, err)
		}
	}
	if err := tbank.CheckToken(signed, "other"); !errors.Is(err, tbank.ErrBadToken) {
		t.Errorf("wrong password: err = %v, want ErrBadToken", err)
	}
	if err := tbank.CheckToken([]byte(`{"Status":"CONFIRMED"}`), "pw"); !errors.Is(err, tbank.ErrBadToken) {
		t.Errorf("no token: err = %v, want ErrBadToken", err)
	}
	// Nested objects are outside the token, as the bank documents.
	nested := strings.Replace(string(signed), `"x":"y"`, `"x":"z"`, 1)
	if err := tbank.CheckToken([]byte(nested), "pw"); err != nil {
		t.Errorf("nested object changed: err = %v, want it outside the token", err)
	}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
