package testenv

import (
	"os/exec"
	"regexp"
	"testing"
	"time"
)

// listeningURL is the line a local server prints once it accepts
// connections: "...listening on http://HOST:PORT/PATH".
var listeningURL = regexp.MustCompile(`listening on (http://\S+)`)

// StartListening runs name with args (a sample webhook receiver, with its
// port 0), waits until it prints "listening on http://...", and returns that
// URL and everything it prints; the process is killed when the test ends.
func StartListening(tb testing.TB, name string, args ...string) (string, *SyncBuffer) {
	tb.Helper()
	out := &SyncBuffer{}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var url string
	WaitFor(tb, 30*time.Second, name+" listening", func() bool {
		if m := listeningURL.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		}
		return url != ""
	})
	return url, out
}
