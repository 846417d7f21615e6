package ticketing_test

import (
	"testing"
	"time"

	"tix/internal/ticketing"
)

var salesNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func hoursFromNow(h int) *time.Time { t := salesNow.Add(time.Duration(h) * time.Hour); return &t }

func event(startIn, lengthH int) *ticketing.Event {
	return &ticketing.Event{Status: ticketing.EventPublished, StartsAt: *hoursFromNow(startIn), EndsAt: *hoursFromNow(startIn + lengthH)}
}

func TestSalesWindow_Rules(t *testing.T) {
	cases := []struct {
		name string
		ev   func() *ticketing.Event
		open bool
	}{
		{"published, no window, before start: open", func() *ticketing.Event { return event(24, 2) }, true},
		{"draft: closed", func() *ticketing.Event { e := event(24, 2); e.Status = ticketing.EventDraft; return e }, false},
		{"cancelled: closed", func() *ticketing.Event { e := event(24, 2); e.Status = ticketing.EventCancelled; return e }, false},
		{"not started yet: closed", func() *ticketing.Event { e := event(24, 2); e.SalesStartAt = hoursFromNow(1); return e }, false},
		{"start is inclusive", func() *ticketing.Event { e := event(24, 2); e.SalesStartAt = hoursFromNow(0); return e }, true},
		{"default close at event start", func() *ticketing.Event { return event(0, 2) }, false},
		{"explicit close after start: door sales open", func() *ticketing.Event { e := event(-1, 3); e.SalesEndAt = hoursFromNow(1); return e }, true},
		{"explicit close never after the event ends", func() *ticketing.Event { e := event(-3, 2); e.SalesEndAt = hoursFromNow(5); return e }, false},
		{"explicit close passed", func() *ticketing.Event { e := event(24, 2); e.SalesEndAt = hoursFromNow(-1); return e }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.ev().IsSalesOpen("", salesNow); got != c.open {
				t.Fatalf("is_sales_open %v, want %v", got, c.open)
			}
		})
	}
}

func TestTierOnSale_IntersectsTheTierWindowWithTheEvent(t *testing.T) {
	e := event(24, 2)
	e.Status = ticketing.EventDraft // is_on_sale says nothing about the event's status
	cases := []struct {
		name       string
		start, end *time.Time
		want       bool
	}{
		{"inherits the event window", nil, nil, true},
		{"own window open", hoursFromNow(-1), hoursFromNow(1), true},
		{"own window not started", hoursFromNow(1), nil, false},
		{"own window over", nil, hoursFromNow(-1), false},
		{"own window past the event start is cut at the start", hoursFromNow(-1), hoursFromNow(48), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tier := &ticketing.Tier{SalesStartAt: c.start, SalesEndAt: c.end}
			if got := e.TierOnSale(tier, "", salesNow); got != c.want {
				t.Fatalf("is_on_sale %v, want %v", got, c.want)
			}
		})
	}
	late := event(1, 2)
	if late.TierOnSale(&ticketing.Tier{SalesStartAt: hoursFromNow(2)}, "", salesNow.Add(90*time.Minute)) {
		t.Error("a tier window opening after the event started must not be on sale")
	}
}

func TestSeries_OccurrenceWindows(t *testing.T) {
	e := event(-1, 200)
	e.Kind = ticketing.KindRecurring
	e.Occurrences = []ticketing.Occurrence{
		{ID: "o1", StartsAt: *hoursFromNow(-1), EndsAt: *hoursFromNow(1), Status: ticketing.OccurrenceScheduled},
		{ID: "o2", StartsAt: *hoursFromNow(48), EndsAt: *hoursFromNow(50), Status: ticketing.OccurrenceScheduled},
		{ID: "o3", StartsAt: *hoursFromNow(96), EndsAt: *hoursFromNow(98), Status: ticketing.OccurrenceCancelled},
	}
	if e.IsSalesOpen("o1", salesNow) || !e.IsSalesOpen("o2", salesNow) || e.IsSalesOpen("o3", salesNow) || !e.IsSalesOpen("", salesNow) {
		t.Fatal("started o1 closed, future o2 open, cancelled o3 closed, series open through o2")
	}
	if n := e.NextOccurrence(salesNow); n == nil || n.ID != "o2" {
		t.Fatalf("next occurrence %v, want o2", n)
	}
}

func TestClientNetwork_IPv4AsIsIPv6Per64(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.10":          "192.0.2.10",
		"::ffff:192.0.2.10":   "192.0.2.10",
		"2001:db8:1:2::10":    "2001:db8:1:2::/64",
		"2001:db8:1:2:aaaa::": "2001:db8:1:2::/64",
		"2001:db8:1:3::10":    "2001:db8:1:3::/64",
		"not an ip":           "not an ip",
	} {
		if got := ticketing.ClientNetwork(in); got != want {
			t.Errorf("ClientNetwork(%q) = %q, want %q", in, got, want)
		}
	}
}
