package clock

import (
	"testing"
	"time"
)

func TestShifted_RunsWithTheSystemClockAndJumpsOnAdvance(t *testing.T) {
	var c Shifted
	before := time.Now().UTC()
	if got := c.Now(); got.Before(before) || got.Location() != time.UTC {
		t.Fatalf("Now() = %v before any Advance, want the system time in UTC (at or after %v)", got, before)
	}
	c.Advance(time.Hour)
	c.Advance(time.Minute)
	got := c.Now()
	if lo, hi := before.Add(61*time.Minute), time.Now().UTC().Add(61*time.Minute); got.Before(lo) || got.After(hi) {
		t.Fatalf("Now() = %v after advancing 61 min, want within [%v, %v]", got, lo, hi)
	}
}
