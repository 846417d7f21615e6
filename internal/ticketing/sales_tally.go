package ticketing

import "time"

// The sales tally is what the organizer dashboard shows of sales: orders
// created and paid per minute, units and revenue paid per event per
// quarter hour, revenue per tier. The store keeps it in the transactions
// that create, pay, reinstate and refund orders, spread over TallyShards
// counter items per quarter hour (docs/dashboard.md, Overview).

// TallyQuarter is the tally's time bucket: every time zone's offset is a
// multiple of it, so a day in any zone is a whole number of buckets.
const TallyQuarter = 15 * time.Minute

// TallyShards is how many counter items share one quarter hour (and one
// event's tier revenue) of an organizer and environment. Each is in the
// transactions of the orders hashed to it: at 5,000 orders/s created and
// paid, 10,000 transactions/s over 256 quarter items is about 39 a second on
// each, under the rate one item commits without conflicts (docs/measurements.md,
// The on-sale model). The readers sum every shard, so counts written under
// fewer shards still add up.
const TallyShards = 256

// MinuteCount is the orders of one minute: created (any outcome) and paid.
type MinuteCount struct {
	At      time.Time `json:"t"`
	Created int       `json:"created"`
	Paid    int       `json:"paid"`
}

// EventSales is what the paid orders of one event brought in a period:
// units (tickets) and revenue (the orders' totals, minor units).
type EventSales struct {
	Units   int
	Revenue int64
}

// Tally is the sales of a period: per minute, and per event id.
type Tally struct {
	Minutes map[time.Time]MinuteCount
	Events  map[string]EventSales
}

// NewTally is an empty tally.
func NewTally() *Tally {
	return &Tally{Minutes: map[time.Time]MinuteCount{}, Events: map[string]EventSales{}}
}

// Series lists the minutes from `from` (truncated to the minute) up to and
// including now's, oldest first, zero where nothing happened.
func (t *Tally) Series(from, now time.Time) []MinuteCount {
	var out []MinuteCount
	for m := from.UTC().Truncate(time.Minute); !m.After(now); m = m.Add(time.Minute) {
		c := t.Minutes[m]
		c.At = m
		out = append(out, c)
	}
	return out
}

// DayStart is the start of now's day in loc, as a UTC time.
func DayStart(now time.Time, loc *time.Location) time.Time {
	y, m, d := now.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, loc).UTC()
}

// TierRevenue is the ticket revenue of each tier of each event (event id
// -> tier id -> minor units): paid lines at their unit price, less the
// refunded ones.
type TierRevenue map[string]map[string]int64
