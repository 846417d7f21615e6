package dashboard

import (
	"os"
	"regexp"
	"testing"

	"tix/internal/ticketing"
)

// The Orders pages' texts exist in both languages: the keys their code
// uses and the ones built from order and refund statuses.
func TestMessages_OrdersKeysExist(t *testing.T) {
	used := map[string]bool{}
	for _, f := range []string{"orders.go", "order_page.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`"(orders\.[a-z_]+)"`).FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = true
		}
	}
	for _, st := range []ticketing.OrderStatus{ticketing.OrderPending, ticketing.OrderPaid, ticketing.OrderCancelled, ticketing.OrderRefunded} {
		used["order."+string(st)] = true
	}
	for _, st := range []ticketing.RefundStatus{ticketing.RefundPending, ticketing.RefundCompleted} {
		used["refund."+string(st)] = true
	}
	if len(used) < 15 {
		t.Fatalf("found only %d keys: is the scan broken?", len(used))
	}
	for k := range used {
		if m, ok := messages[k]; !ok || m.ru == "" || m.en == "" {
			t.Errorf("message %q is missing or untranslated", k)
		}
	}
}
