package ticketing_test

import (
	"testing"
	"time"

	"tix/internal/ticketing"
)

// Today starts at midnight in the organizer's zone, whatever its offset
// (Kathmandu is UTC+5:45: still a whole number of tally quarters).
func TestDayStart_InTheOrganizersZone(t *testing.T) {
	now := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	for zone, want := range map[string]string{
		"UTC": "2026-11-26T00:00:00Z", "Asia/Kathmandu": "2026-11-25T18:15:00Z", "America/New_York": "2026-11-25T05:00:00Z",
	} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		got := ticketing.DayStart(now, loc)
		if got.Format(time.RFC3339) != want || !got.Equal(got.Truncate(ticketing.TallyQuarter)) {
			t.Errorf("%s: %s, want %s on a quarter", zone, got.Format(time.RFC3339), want)
		}
	}
}

// The chart's series has every minute of the window, zero where nothing happened.
func TestTallySeries_EveryMinute(t *testing.T) {
	now := time.Date(2026, 11, 26, 3, 10, 30, 0, time.UTC)
	tl := ticketing.NewTally()
	tl.Minutes[now.Truncate(time.Minute)] = ticketing.MinuteCount{Created: 3, Paid: 1}
	s := tl.Series(now.Add(-time.Hour), now)
	if len(s) != 61 || s[60].Created != 3 || s[60].Paid != 1 || s[0].Created != 0 || !s[0].At.Equal(now.Add(-time.Hour).Truncate(time.Minute)) {
		t.Errorf("series of %d minutes: first %+v, last %+v", len(s), s[0], s[len(s)-1])
	}
}
