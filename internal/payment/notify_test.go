package payment_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/payment"
	"tix/internal/payment/tbank"
	"tix/internal/ticketing"
)

// The notification route's terminal lookups are cached for CacheTTL, found
// and not found alike: a flood naming the same terminals reads each once per
// TTL; past it they are read again.
func TestTBankNotifications_TerminalLookupsAreCachedBothWays(t *testing.T) {
	var reads atomic.Int32
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	n := &payment.TBankNotifications{
		Account: func(_ context.Context, key string) (*ticketing.PaymentAccount, error) {
			reads.Add(1)
			if key != "KnownDEMO" {
				return nil, ticketing.NotFound("terminal")
			}
			return &ticketing.PaymentAccount{OrganizerID: "org_1", Acquirer: "tbank", TerminalKey: key}, nil
		},
		Password: func(*ticketing.PaymentAccount) (string, error) { return "pw", nil },
		CacheTTL: 5 * time.Second, Now: func() time.Time { return now },
	}
	body, err := tbank.SignNotification([]byte(`{"TerminalKey":"KnownDEMO","OrderId":"ord_1","Status":"CONFIRMED","PaymentId":1,"Amount":100}`), "pw")
	if err != nil {
		t.Fatal(err)
	}
	unknown := []byte(`{"TerminalKey":"RandomDEMO","OrderId":"ord_1","Status":"CONFIRMED","PaymentId":1,"Amount":100,"Token":"x"}`)
	ctx := context.Background()
	for range 50 {
		if u, err := n.Parse(ctx, body); err != nil || u.OrganizerID != "org_1" || u.PaymentID != "1" {
			t.Fatalf("genuine: %+v, %v", u, err)
		}
		if _, err := n.Parse(ctx, unknown); !errors.Is(err, ticketing.ErrForgedNotification) {
			t.Fatalf("unknown terminal: %v, want ErrForgedNotification", err)
		}
	}
	if got := reads.Load(); got != 2 {
		t.Errorf("%d terminal reads for 100 notifications naming 2 terminals, want 2", got)
	}
	now = now.Add(6 * time.Second)
	_, _ = n.Parse(ctx, body)
	_, _ = n.Parse(ctx, unknown)
	if got := reads.Load(); got != 4 {
		t.Errorf("%d terminal reads after the TTL, want 4 (each read again)", got)
	}
}
