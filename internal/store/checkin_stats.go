package store

import (
	"context"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

// ticketEventShards spreads an event's tickets over index partitions: they
// are indexed when sold, at up to the on-sale's rate (docs/door.md; at
// 5,000 orders/s each shard takes about half a partition's writes,
// docs/measurements.md). A ticket's shard is a hash of its number modulo
// the count, so a ticket indexed when there were 16 shards is in the same
// shard or 16 above it: readers read all 32, and see every ticket.
const ticketEventShards = 32

// ticketEventPK is the GSI3 partition of an event's tickets (one shard).
func ticketEventPK(env, event string, shard uint32) string {
	return "TKTEV#" + env + "#" + event + "#" + strconv.FormatUint(uint64(shard), 10)
}

// CheckInStats counts an event's tickets (of one occurrence, when given):
// sold, refunded, admitted and admitted per gate, reading every ticket of the
// event on GSI3 (its shards in parallel).
func (s *Tickets) CheckInStats(ctx context.Context, t ticketing.Tenant, eventID, occurrenceID string) (*ticketing.CheckInStats, error) {
	out := &ticketing.CheckInStats{EventID: eventID, OccurrenceID: occurrenceID, Gates: map[string]int{}}
	var mu sync.Mutex
	var firstErr error
	count := func(it map[string]types.AttributeValue) bool {
		st, err := ticketState(sAttr(it, "GSI3SK"), it)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			if firstErr == nil {
				firstErr = err
			}
		case st.OrganizerID != t.OrganizerID || (occurrenceID != "" && st.OccurrenceID != occurrenceID):
		case st.TransferredTo != "": // counted as its transferred-in ticket
		case st.RefundID != "":
			out.Refunded++
		default:
			out.Sold++
			if st.CheckIn != nil {
				out.Admitted++
				out.Gates[st.CheckIn.Gate]++
			}
		}
		return false // counted, not kept
	}
	_, err := s.shardQuery(ctx, "CheckInStats", "GSI3", ticketEventShards, func(i int) string {
		return ticketEventPK(string(t.Environment), eventID, uint32(i))
	}, ">=", "TIX-", 1<<30, count) // every ticket: count keeps none
	if err != nil {
		return nil, err
	}
	return out, firstErr
}
