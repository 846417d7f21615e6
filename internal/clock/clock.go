// Package clock injects time so that tests and the local stack can control it.
package clock

import (
	"sync"
	"time"
)

// Clock tells the current time.
type Clock interface{ Now() time.Time }

// System is the real clock, in UTC.
type System struct{}

// Now returns the current UTC time.
func (System) Now() time.Time { return time.Now().UTC() }

// Fixed is a settable clock for tests.
type Fixed struct {
	mu sync.Mutex
	t  time.Time
}

// NewFixed returns a clock stopped at t.
func NewFixed(t time.Time) *Fixed { return &Fixed{t: t.UTC()} }

// Now returns the clock's time.
func (f *Fixed) Now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }

// Set moves the clock to t.
func (f *Fixed) Set(t time.Time) { f.mu.Lock(); f.t = t.UTC(); f.mu.Unlock() }

// Advance moves the clock forward by d.
func (f *Fixed) Advance(d time.Duration) { f.mu.Lock(); f.t = f.t.Add(d); f.mu.Unlock() }

// TimestampLayout is the one format of every timestamp tix sends: RFC 3339 in
// UTC at second precision, e.g. 2026-12-31T19:00:00Z.
const TimestampLayout = "2006-01-02T15:04:05Z"

// Format renders t in TimestampLayout. API bodies, webhook envelopes and the
// order inside them all go through it, so one instant is one string everywhere.
func Format(t time.Time) string { return t.UTC().Format(TimestampLayout) }

// FormatPtr is Format for an optional time: nil stays nil.
func FormatPtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Format(*t)
	return &s
}

// Shifted is the system clock moved forward by an offset that only grows: time
// passes as usual, and a test jumps over a wait with Advance instead of
// sleeping through it.
type Shifted struct {
	mu  sync.Mutex
	off time.Duration
}

// Now returns the system time in UTC plus the offset.
func (s *Shifted) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Now().UTC().Add(s.off)
}

// Advance moves the clock forward by d.
func (s *Shifted) Advance(d time.Duration) { s.mu.Lock(); s.off += d; s.mu.Unlock() }
