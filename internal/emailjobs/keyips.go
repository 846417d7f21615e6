package emailjobs

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// MaxKeyIPsPerDay is how many distinct client IPs a secret key may be used
// from in one UTC day before its owner is alerted (once per key and day).
const MaxKeyIPsPerDay = 20

// KeyIPStore records the distinct IPs of a key per day without a hot item:
// one small item per (key, day, IP), written only the first time the IP is
// seen that day, and counted by a Query of the (key, day) partition.
type KeyIPStore interface {
	// SeenKeyIP writes the (key, day, ip) item unless it exists; when it
	// was new, count is the partition's items counted up to limit.
	SeenKeyIP(ctx context.Context, keyID, day, ip string, limit int) (isNew bool, count int, err error)
}

// IPWatch counts a secret key's distinct IPs per day and raises the
// key_many_ips alert when they exceed Max. A process remembers the (key,
// day, IP) it has recorded, so a busy client costs one write per process and
// day, not one per request.
type IPWatch struct {
	Store KeyIPStore
	Mail  *Service
	Max   int // MaxKeyIPsPerDay when 0

	mu   sync.Mutex
	seen map[string]bool
}

// maxRemembered bounds the process's memory of recorded IPs.
const maxRemembered = 100_000

// Seen records that keyID of org was used from ip at now. Failures are
// logged: a request never fails for it.
func (w *IPWatch) Seen(ctx context.Context, org, keyID, ip string, now time.Time) {
	day := now.UTC().Format("2006-01-02")
	mark := day + "|" + keyID + "|" + ip
	w.mu.Lock()
	if w.seen == nil || len(w.seen) >= maxRemembered {
		w.seen = map[string]bool{}
	}
	known := w.seen[mark]
	w.seen[mark] = true
	w.mu.Unlock()
	if known {
		return
	}
	limit := w.Max
	if limit <= 0 {
		limit = MaxKeyIPsPerDay
	}
	isNew, n, err := w.Store.SeenKeyIP(ctx, keyID, day, ip, limit+1)
	if err != nil {
		w.forget(mark)
		slog.WarnContext(ctx, "record a key's client IP", "key_id", keyID, "error", err)
		return
	}
	if !isNew || n <= limit {
		return
	}
	a := Alert{Cause: CauseKeyManyIPs, At: now.UTC(), KeyID: keyID, DistinctIPs: n, Limit: limit, Day: day}
	if _, err := w.Mail.Raise(ctx, org, CauseKeyManyIPs+"."+safe(keyID)+"."+day, a); err != nil {
		slog.WarnContext(ctx, "owner alert not written", "organizer_id", org, "cause", a.Cause, "error", err)
	}
}

func (w *IPWatch) forget(mark string) {
	w.mu.Lock()
	delete(w.seen, mark)
	w.mu.Unlock()
}
