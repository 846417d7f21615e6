package api_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"tix/internal/auth"
)

// created_after and created_before are inclusive at the precision the API
// shows (whole seconds): an order created at 12:00:05.7 reads 12:00:05Z and is
// inside both bounds given as that string.
func TestListOrders_CreatedBoundsAreInclusiveAtTheShownSecond(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)

	h.clk.Advance(5*time.Second + 700*time.Millisecond)
	o := h.mustOrder(sk, "bounds-1", gaBody("evt_concert_ga", 1))
	shown := o["created_at"].(string)
	if shown != t0.Add(5*time.Second).Format(time.RFC3339) {
		t.Fatalf("created_at %q, want whole seconds", shown)
	}
	for _, q := range []string{"created_before=", "created_after="} {
		got, _ := h.listOrders(sk, q+url.QueryEscape(shown))
		if fmt.Sprint(got) != fmt.Sprint([]string{o["id"].(string)}) {
			t.Errorf("%s%s lists %v, want the order created at that second", q, shown, got)
		}
	}
	got, _ := h.listOrders(sk, "created_before="+url.QueryEscape(t0.Add(4*time.Second).Format(time.RFC3339)))
	if len(got) != 0 {
		t.Errorf("created_before one second earlier lists %v, want none", got)
	}
}
