package ticketing

import "hash/fnv"

// SeatBlocks is how many stock partitions the seats of an event imported
// from now on spread over. One partition takes at most 1,000 write units a
// second; a seat hold writes 2 per seat (a transaction bills each item), and
// the seat's order and payment as many again, so one seated occurrence in one
// partition sells about 500 seats' holds a second. Over 128 blocks an
// on-sale's seat writes spread evenly: a seat's block is fixed by its id
// (FNV-1a mod SeatBlocks), so the seats next to each other that
// best-available hands out first land in different partitions, and a
// re-import that moves a seat to another row or zone never moves its item.
// The blocks are the event's stock shard partitions (k < MaxStockShards), so
// every read of the event's stock already covers them.
const SeatBlocks = MaxStockShards

// SeatBlock is the stock partition of seat id: 0 (the event's own stock
// partition, where every seat of the one-partition layout lives) when the
// event has no seat blocks.
func (e *Event) SeatBlock(seatID string) int {
	if e == nil || e.SeatBlocks < 2 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(seatID))
	return int(h.Sum32() % uint32(e.SeatBlocks))
}

// seatBlockCount is how many partitions, from block 0, hold h's seats.
func (h *Hold) seatBlockCount() int {
	n := 1
	for _, s := range h.Seats {
		n = max(n, s.Block+1)
	}
	return n
}
