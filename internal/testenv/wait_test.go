package testenv

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// fatalTB records WaitFor's failure instead of failing the test; Fatalf stops
// the calling goroutine as testing's does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}

func waitCatching(tb *fatalTB, d time.Duration, cond func() bool) {
	defer func() {
		if r := recover(); r != nil && r != tb {
			panic(r)
		}
	}()
	WaitFor(tb, d, "the condition", cond)
}

func TestWaitFor_ReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	tb := &fatalTB{TB: t}
	waitCatching(tb, 5*time.Second, func() bool { calls++; return calls == 3 })
	if tb.msg != "" || calls != 3 {
		t.Fatalf("WaitFor failed with %q after %d checks, want success on the third", tb.msg, calls)
	}
}

func TestWaitFor_FailsNamingWhatAfterTheDeadline(t *testing.T) {
	tb := &fatalTB{TB: t}
	start := time.Now()
	waitCatching(tb, 100*time.Millisecond, func() bool { return false })
	if !strings.Contains(tb.msg, "waiting for the condition") {
		t.Fatalf("failure %q, want it to name what it waited for", tb.msg)
	}
	if waited := time.Since(start); waited < 100*time.Millisecond || waited > 5*time.Second {
		t.Fatalf("gave up after %v, want about 100ms", waited)
	}
}
