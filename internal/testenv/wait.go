package testenv

import (
	"testing"
	"time"
)

// pollEvery is how often WaitFor checks its condition.
const pollEvery = 20 * time.Millisecond

// WaitFor checks cond until it holds and fails the test, naming what it waited
// for, when it still does not after d. Tests await a condition with it instead
// of sleeping for a fixed time.
func WaitFor(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", d, what)
		}
		<-tick.C
	}
}
