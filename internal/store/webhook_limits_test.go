package store_test

import (
	"context"
	"sync"
	"testing"
	"time"
)

// 20 requests at once through an outbound window of 5: exactly 5 go.
func TestWebhookTakeOutbound(t *testing.T) {
	t.Parallel()
	ws, clk := hookStore(t)
	ctx := context.Background()
	now := clk.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	var errs []error
	for range 20 {
		wg.Go(func() {
			ok, err := ws.TakeOutbound(ctx, "example.com", 5, now)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			if ok {
				taken++
			}
		})
	}
	wg.Wait()
	if taken != 5 || len(errs) > 0 {
		t.Fatalf("%d taken (errors %v), want 5", taken, errs)
	}
	if ok, err := ws.TakeOutbound(ctx, "other.example", 5, now); !ok || err != nil {
		t.Fatalf("another key: %v %v", ok, err)
	}
	if ok, err := ws.TakeOutbound(ctx, "example.com", 5, now.Add(time.Second)); !ok || err != nil {
		t.Fatalf("next window: %v %v", ok, err)
	}
}
