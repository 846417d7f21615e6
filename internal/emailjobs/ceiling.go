package emailjobs

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// CeilingWatch alerts the owner of a publishable key whose ceiling (all of its
// clients together) refused a request: at most once per key and UTC day,
// whatever the bucket and however many instances see it. The de-dupe is the
// alert job's name (key and day), written put-if-absent by Raise; a process
// also remembers the keys it raised for today, so a sustained flood costs no
// write per request.
type CeilingWatch struct {
	Mail *Service

	mu     sync.Mutex
	raised map[string]bool // day|key
}

// CeilingHit implements api.Server's CeilingAlerts. Failures are logged: the
// request is refused with 429 whatever happens here.
func (w *CeilingWatch) CeilingHit(ctx context.Context, org, keyID, bucket string, limit int, now time.Time) {
	day := now.UTC().Format("2006-01-02")
	mark := day + "|" + keyID
	w.mu.Lock()
	if w.raised == nil || len(w.raised) >= maxRemembered {
		w.raised = map[string]bool{}
	}
	known := w.raised[mark]
	w.raised[mark] = true
	w.mu.Unlock()
	if known {
		return
	}
	a := Alert{Cause: CauseKeyCeiling, At: now.UTC(), KeyID: keyID, Limit: limit, Bucket: bucket, Day: day}
	if _, err := w.Mail.Raise(ctx, org, CauseKeyCeiling+"."+safe(keyID)+"."+day, a); err != nil {
		w.mu.Lock()
		delete(w.raised, mark)
		w.mu.Unlock()
		slog.WarnContext(ctx, "owner alert not written", "organizer_id", org, "cause", a.Cause, "error", err)
	}
}
