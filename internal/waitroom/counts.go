package waitroom

import (
	"context"
	"sync"
	"time"
)

// The join counters as one process sees them: buckets whose counts are
// final (their end and Settings.Settle passed before the read) are kept for
// good, the others re-read after Settings.CacheTTL. Each refresh reads only
// the buckets not final yet, each bucket once per shard.

// counts is one event's snapshot.
type counts struct {
	opensAt time.Time
	// final[b] is bucket b's count, final; prefix[b] the sum of buckets 1..b.
	final  []int
	prefix []int
	live   map[int]int // buckets read but not final
	readAt time.Time
}

type countCache struct {
	mu sync.Mutex
	m  map[string]*counts
}

// position is q's place (1 = first) and whether it is final: before the
// opening a draw among everyone who joined before it (the share of the
// draw's range below q's, times their number); after it, every join of q's
// bucket and the ones before it (joins of one bucket share the last place
// of their bucket, so nobody who joined later goes first).
func (c *counts) position(q *queueClaims) (int, bool) {
	pre, preFinal := c.bucket(0)
	if q.Bucket == 0 {
		return 1 + int(uint64(q.Draw)*uint64(pre)>>32), preFinal
	}
	if q.Bucket < len(c.final) {
		return pre + c.prefix[q.Bucket], true
	}
	n := pre
	if len(c.prefix) > 0 {
		n += c.prefix[len(c.prefix)-1]
	}
	for b := len(c.final); b <= q.Bucket; b++ {
		n += c.live[b]
	}
	return max(n, 1), false
}

func (c *counts) bucket(b int) (int, bool) {
	if b < len(c.final) {
		return c.final[b], true
	}
	return c.live[b], false
}

// snapshot returns p's counts as of at most Settings.CacheTTL ago.
func (s *Service) snapshot(ctx context.Context, p *Protection, now time.Time) (*counts, error) {
	s.counts.mu.Lock()
	defer s.counts.mu.Unlock() // one refresh at a time per process: the others wait for it
	c := s.counts.m[p.EventID]
	if c == nil || !c.opensAt.Equal(p.OpensAt) {
		c = &counts{opensAt: p.OpensAt}
	} else if now.Sub(c.readAt) < s.Settings.CacheTTL && !now.Before(c.readAt) {
		return c, nil
	}
	upto := s.bucketOf(p, now)
	got, err := s.Store.JoinCounts(ctx, p.EventID, s.Settings.Shards, len(c.final), upto)
	if err != nil {
		return nil, err
	}
	next := &counts{opensAt: c.opensAt, final: c.final, prefix: c.prefix, live: map[int]int{}, readAt: now}
	for b := len(c.final); b <= upto; b++ {
		if now.Before(s.finalAt(p, b)) {
			next.live[b] = got[b]
			continue
		}
		next.final = append(next.final, got[b])
		sum := 0
		if b > 0 {
			sum = next.prefix[b-1] + got[b]
		}
		next.prefix = append(next.prefix, sum)
	}
	if s.counts.m == nil || len(s.counts.m) > 1000 {
		s.counts.m = map[string]*counts{}
	}
	s.counts.m[p.EventID] = next
	return next, nil
}
