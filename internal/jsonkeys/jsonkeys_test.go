package jsonkeys_test

import (
	"errors"
	"testing"

	"tix/internal/jsonkeys"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, param string
	}{
		{"Unique", `{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`, ""},
		{"Empty", ``, ""},
		{"Scalar", `42`, ""},
		{"ExactDuplicate", `{"Amount":1,"Amount":2}`, "Amount"},
		{"CaseVariant", `{"PaymentId":"1","paymentid":"2"}`, "paymentid"},
		{"KelvinSignFoldsToK", `{"k":1,"\u212a":2}`, "\u212a"},
		{"Nested", `{"buyer":{"email":"a@b.c","EMAIL":"x@y.z"}}`, "buyer.EMAIL"},
		{"InArray", `{"standing_items":[{"qty":1},{"qty":1,"Qty":9}]}`, "standing_items[1].Qty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := jsonkeys.Check([]byte(c.body))
			var dup *jsonkeys.DuplicateError
			if c.param == "" {
				if err != nil {
					t.Fatalf("Check(%s) = %v, want nil", c.body, err)
				}
				return
			}
			if !errors.As(err, &dup) {
				t.Fatalf("Check(%s) = %v, want a DuplicateError", c.body, err)
			}
			if dup.Param() != c.param {
				t.Errorf("param = %q, want %q (%v)", dup.Param(), c.param, err)
			}
		})
	}
}

func TestCheck_MalformedIsAnError(t *testing.T) {
	t.Parallel()
	if err := jsonkeys.Check([]byte(`{"a":`)); err == nil {
		t.Fatal("Check accepted a truncated body")
	}
}
