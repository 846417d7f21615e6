package store_test

import (
	"context"
	"sync"
	"testing"
	"time"
)

// takeAtOnce makes n TakeOutbound calls at once and counts the ones taken.
func takeAtOnce(ws interface {
	TakeOutbound(ctx context.Context, key string, limit int, now time.Time) (bool, error)
}, key string, limit int, now time.Time, n int) (int, []error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	var errs []error
	for range n {
		wg.Go(func() {
			ok, err := ws.TakeOutbound(context.Background(), key, limit, now)
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
	return taken, errs
}

// 20 requests at once through an outbound window of 5: exactly 5 go.
func TestWebhookTakeOutbound(t *testing.T) {
	t.Parallel()
	ws, clk := hookStore(t)
	ctx := context.Background()
	now := clk.Now()
	taken, errs := takeAtOnce(ws, "example.com", 5, now, 20)
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

// A budget split over shard items still admits no more than its limit in a
// second, and, with demand far above it, close to all of it: 200 attempts at
// once through 64 a second (8 shards of 8) take between 48 and 64; one by one,
// 100 attempts through 20 a second (3 shards: 7, 7, 6) take exactly 20.
func TestWebhookTakeOutboundSharded(t *testing.T) {
	t.Parallel()
	ws, clk := hookStore(t)
	ctx := context.Background()
	now := clk.Now()
	taken, errs := takeAtOnce(ws, "*", 64, now, 200)
	if taken > 64 || taken < 48 || len(errs) > 0 {
		t.Fatalf("%d taken of 64 a second (errors %v)", taken, errs)
	}
	taken = 0
	for range 100 {
		ok, err := ws.TakeOutbound(ctx, "host:example.com", 20, now)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			taken++
		}
	}
	if taken != 20 {
		t.Fatalf("%d taken one by one of 20 a second, want 20", taken)
	}
	if ok, err := ws.TakeOutbound(ctx, "host:example.com", 20, now.Add(time.Second)); !ok || err != nil {
		t.Fatalf("next second: %v %v", ok, err)
	}
}
