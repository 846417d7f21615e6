package main

import (
	"io"
	"math"
	"testing"
)

// Best available's reads per process, hand-computed: 50,000 taken seats of
// 150 bytes over 128 blocks is 58,594 bytes a block, 15 units of 4 KB, 7.5
// RCU eventually consistent; at 0.05 s a hold, 1,000 holds/s keep 50
// processes, each reading every block once a second: 375 RCU/s a block, so
// a block partition fills at 8,000 holds/s. In one partition (the layout
// before blocks) the same read is 916 RCU: 65 holds/s.
func TestSeatReadsCeiling(t *testing.T) {
	r := SeatReads{VenueSeats: 50000, Blocks: 128, ItemBytes: 150, EventBytes: 4096, HoldLatency: 0.05}
	if c := r.Ceiling(io.Discard); math.Abs(c-8000) > 1 {
		t.Fatalf("ceiling %.1f holds/s, want 8,000", c)
	}
	r.Blocks = 1
	if c := r.Ceiling(io.Discard); math.Abs(c-3000/(0.05*916)) > 1 {
		t.Fatalf("one partition: ceiling %.1f holds/s, want 65", c)
	}
}
