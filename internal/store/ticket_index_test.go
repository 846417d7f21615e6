package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"tix/internal/clock"
	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// An event's tickets spread over 32 index shards (at 5,000 orders/s each
// takes about half a partition's writes), and tickets indexed when there
// were 16 shards are still counted.
func TestTicketEventIndexShards(t *testing.T) {
	seen := map[int]bool{}
	for i := range 2000 {
		seen[store.TicketEventShard(fmt.Sprintf("TIX-%08d", i))] = true
	}
	if len(seen) != 32 {
		t.Fatalf("2,000 tickets over %d index shards, want 32", len(seen))
	}
	st := testenv.Store(t, clock.NewFixed(time.Now()))
	ctx := context.Background()
	moved := 0
	for i := range 40 {
		number := fmt.Sprintf("TIX-OLD%05d", i)
		if store.TicketEventShard(number) >= 16 {
			moved++ // its former shard is not its shard now
		}
		if err := st.PutIndexedTicket(ctx, ticketing.EnvTest, ticketingtest.Org, "evt_ix", number, 16); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		if err := st.PutIndexedTicket(ctx, ticketing.EnvTest, ticketingtest.Org, "evt_ix", fmt.Sprintf("TIX-NEW%05d", i), 32); err != nil {
			t.Fatal(err)
		}
	}
	stats, err := st.Tickets().CheckInStats(ctx, ticketing.Tenant{OrganizerID: ticketingtest.Org, Environment: ticketing.EnvTest}, "evt_ix", "")
	if err != nil {
		t.Fatal(err)
	}
	if moved == 0 || stats.Sold != 50 {
		t.Fatalf("sold %d, want the 40 tickets of the 16-shard layout (%d of them in another shard now) and 10 new", stats.Sold, moved)
	}
}
