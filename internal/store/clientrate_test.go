package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"tix/internal/testenv"
)

// Parallel requests of one client never pass its budget; the next window is fresh.
func TestAdmitClientRate_ConcurrentRequestsNeverExceedTheBudget(t *testing.T) {
	st := testenv.Store(t, nil)
	ctx := context.Background()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	const limit, workers = 7, 20
	for _, at := range []time.Time{now, now.Add(time.Minute)} {
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, reset, err := st.Limits.AdmitClientRate(ctx, "promo#org_x#test#192.0.2.1", limit, time.Minute, at)
				if err != nil {
					t.Error(err)
					return
				}
				if !reset.After(at) || reset.Sub(at) > time.Minute {
					t.Errorf("reset %v for %v", reset, at)
				}
				if ok {
					admitted.Add(1)
				}
			}()
		}
		wg.Wait()
		if admitted.Load() != limit {
			t.Fatalf("window %v: %d admitted, want exactly %d", at, admitted.Load(), limit)
		}
	}
	if ok, _, err := st.Limits.AdmitClientRate(ctx, "promo#org_x#test#192.0.2.2", limit, time.Minute, now); err != nil || !ok {
		t.Fatalf("another client: %v %v", ok, err)
	}
}
