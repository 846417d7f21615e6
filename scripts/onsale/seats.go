package main

import (
	"fmt"
	"io"
	"math"
)

// TargetHolds is the target for best-available seat holds of one
// seated occurrence.
const TargetHolds = 5000

// SeatReads is what best-available holds read outside their transactions,
// per process (ticketing: seatViews, seatingMaps): once a second each
// process reads the occurrence's seat states (one Query of each seat block's
// partition, eventually consistent) and its event item; the seating map
// itself once per process. The metered run is one process, so these are
// modelled from the processes a rate needs (rate x latency, as Lambda runs
// one request per instance at a time) rather than scaled per hold.
type SeatReads struct {
	VenueSeats  int     // seats of the occurrence, all taken: the largest read
	Blocks      int     // seat block partitions (ticketing.SeatBlocks)
	ItemBytes   float64 // one taken seat's item
	EventBytes  float64 // the event item (GetItem of EVT#<id> META)
	HoldLatency float64 // seconds a best-available hold takes
}

// rcu is the read units of an eventually consistent read of n bytes.
func rcu(n float64) float64 { return math.Max(1, math.Ceil(n/4096)) / 2 }

// Ceiling is the hold rate at which a seat block partition or the event's
// partition reaches a partition's 3,000 RCU/s from the processes' reads.
func (r SeatReads) Ceiling(w io.Writer) float64 {
	block := rcu(float64(r.VenueSeats) * r.ItemBytes / float64(r.Blocks))
	event := rcu(r.EventBytes)
	perHold := r.HoldLatency // processes per hold/s, each reading once a second
	c := math.Min(PartitionRCU/(perHold*block), PartitionRCU/(perHold*event))
	fmt.Fprintf(w, "==> Best-available reads: each process once a second reads the seat states of %d seats (all taken: %.1f RCU from each of %d block partitions) and the event item (%.1f RCU); at %.2f s a hold, %.0f processes per 1,000 holds/s: ceiling %s holds/s\n",
		r.VenueSeats, block, r.Blocks, event, r.HoldLatency, 1000*perHold, rate(c))
	return c
}
