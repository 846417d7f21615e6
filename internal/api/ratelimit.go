package api

import (
	"context"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"tix/internal/auth"
	"tix/internal/ticketing"
)

// Budgets are counted in fixed windows (Limits.Window) on counter items of
// their own, never on the key's item:
//
//   - a secret key's budget, and a publishable key's ceiling (all its clients
//     together), on shards: Limits.shardsFor(limit) items per window, shard i taking
//     its share of the limit (they add up to the limit exactly); a request
//     counts on a shard drawn at random and moves on to the next when that
//     one is spent, trying at most maxProbes shards not yet known spent;
//   - a publishable key's budget per client network (IPv4 address, IPv6 /64)
//     on one item per client and window.
//
// Each count is one conditional write, so no window's items ever admit more
// than the limit, however many instances run. A process remembers the items
// it found spent until their window ends (spentCounters) and refuses on them
// without a call, so a flood beyond a budget costs at most one write per
// process and spent item per window.
//
// Tolerance: a window's items never admit more than the budget, whatever the
// number of instances (the conditions are exact). On one item (every budget
// up to ShardRate requests a second: the secret keys' defaults, every
// client's) a request is refused only when the budget is spent. On N shards a request can be refused
// while another shard still has room, when the maxProbes shards it tried were
// spent; each such refusal teaches its process maxProbes spent shards, so it
// happens at most ceil(N/maxProbes) times per process and window. Windows
// follow each instance's clock (a window's items take requests for as long
// as the instances' clocks differ), and a budget changed by the operator
// applies in each process within the key cache's lifetime.

// DefaultShardRate is the most counted requests a second one shard takes
// while its budget is spent at full speed, far below a partition's 1,000
// write units a second; maxShards bounds the items of one budget's window;
// maxProbes bounds the shards one request tries.
const (
	DefaultShardRate = 200
	maxShards        = 512
	maxProbes        = 4
)

// shardsFor is how many counter items a budget of limit requests per window
// is spread over.
func (l Limits) shardsFor(limit int) int {
	rate := l.ShardRate
	if rate <= 0 {
		rate = DefaultShardRate
	}
	n := int(math.Ceil(float64(limit) / l.Window.Seconds() / float64(rate)))
	return max(1, min(n, maxShards, limit))
}

// MaxClientWritesPerSecond bounds a publishable key's order and hold
// creations from one client network, whatever its budget says: each
// creation is a transaction on the client's pending-order counter (one
// item per client and event) and its payment, cancellation or release
// another, and one item stays mostly free of DynamoDB's transaction
// conflicts up to about 50 transactions a second (docs/measurements.md,
// The on-sale model).
const MaxClientWritesPerSecond = 25

// clientWriteCap is MaxClientWritesPerSecond over a window (at least 1).
func clientWriteCap(window time.Duration) int {
	return max(1, int(MaxClientWritesPerSecond*window.Seconds()))
}

// limitsFor returns the budgets of a key for a bucket: the key's own (a
// secret key's budget, a publishable key's ceiling) and, for a publishable
// key, each client network's. The key's rate_limits override the defaults.
func (s *Server) limitsFor(k *auth.Key, bucket string) (perKey, perClient int) {
	l, rl := s.Limits, auth.RateLimits{}
	if k.RateLimits != nil {
		rl = *k.RateLimits
	}
	pick := func(set, def int) int {
		if set > 0 {
			return set
		}
		return def
	}
	read := bucket != bucketWrite
	switch {
	case k.Type == auth.Publishable && read:
		return pick(rl.Reads, l.PKReadsPerWindow), pick(rl.IPReads, l.IPReadsPerWindow)
	case k.Type == auth.Publishable:
		return pick(rl.Writes, l.PKWritesPerWindow), min(pick(rl.IPWrites, l.IPWritesPerWindow), clientWriteCap(l.Window))
	case read:
		return pick(rl.Reads, l.ReadsPerWindow), 0
	default:
		return pick(rl.Writes, l.WritesPerWindow), 0
	}
}

// admit counts a request that passed every check of its key on the budget
// charged first: a secret key's budget, or a publishable key's budget for the
// request's client network. A publishable key's ceiling (all of its clients
// together) is left to chargeCeiling, once the request is valid, so that
// neither a client over its own budget nor junk spends anything of it. whose
// names the budget for the 429 message.
func (s *Server) admit(ctx context.Context, k *auth.Key, bucket, network string, now time.Time) (b auth.Budget, whose string, err error) {
	base, reset := s.counterBase(k.ID, bucket, now)
	perKey, perClient := s.limitsFor(k, bucket)
	if k.Type != auth.Publishable {
		b, err = s.charge(ctx, base, true, perKey, reset, now)
		return b, "for this key", err
	}
	b, err = s.charge(ctx, base+"#ip#"+network, false, perClient, reset, now)
	return b, "from this client (IP address, or IPv6 /64) for this key", err
}

// counterBase names the counters of owner's bucket in the window of now,
// and returns when that window ends.
func (s *Server) counterBase(owner, bucket string, now time.Time) (string, time.Time) {
	w := s.Limits.Window.Milliseconds()
	win := now.UnixMilli() / w
	return owner + "#" + bucket + "#" + strconv.FormatInt(win, 10), time.UnixMilli((win + 1) * w).UTC()
}

// chargeCeiling counts a publishable key's request on the key's ceiling, once
// per request and only once the request is valid: the router calls it before
// a handler that validates nothing more, and a handler that validates a body
// through ticketing.Caller.Admit (see route.validates). A secret key's
// request, or one already charged, costs nothing. The budget headers show the
// tighter of the client's budget and the ceiling. When the ceiling refuses,
// the owner is alerted (CeilingAlerts: once per key and UTC day).
func (s *Server) chargeCeiling(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r.Context())
	if c == nil || c.ceiling == nil || c.ceiling.charged {
		return nil
	}
	c.ceiling.charged = true
	now := s.Clock.Now()
	base, reset := s.counterBase(c.key.ID, c.ceiling.bucket, now)
	perKey, _ := s.limitsFor(c.key, c.ceiling.bucket)
	kb, err := s.charge(r.Context(), base, true, perKey, reset, now)
	if err != nil {
		return err
	}
	if kb.Admitted && kb.Remaining >= c.budget.Remaining {
		return nil
	}
	setBudgetHeaders(w, kb, now)
	if kb.Admitted {
		c.budget = kb
		return nil
	}
	if s.CeilingAlerts != nil {
		s.CeilingAlerts.CeilingHit(r.Context(), c.key.OrganizerID, c.key.ID, c.ceiling.bucket, perKey, now)
	}
	return rateLimited(kb, s.Limits.Window, "for this key (all of its clients together)", now)
}

// rateLimited is the 429 of a spent budget b.
func rateLimited(b auth.Budget, window time.Duration, whose string, now time.Time) error {
	return &ticketing.Error{Code: ticketing.CodeRateLimited, RetryAfter: b.Reset.Sub(now),
		Message: "Rate limit of " + strconv.Itoa(b.Limit) + " requests per " + window.String() + " " + whose + " exceeded; retry after the number of seconds in Retry-After"}
}

// admitPollToken counts a request that carries a poll token instead of a key
// on its client network's poll budget (Limits.PollReadsPerWindow), before the
// token is checked: nobody reads order statuses, or tries tokens, faster than
// that from one network.
func (s *Server) admitPollToken(w http.ResponseWriter, r *http.Request) error {
	now := s.Clock.Now()
	base, reset := s.counterBase("poll", bucketRead, now)
	b, err := s.charge(r.Context(), base+"#ip#"+ticketing.ClientNetwork(clientIP(r)), false, s.Limits.PollReadsPerWindow, reset, now)
	if err != nil {
		return err
	}
	setBudgetHeaders(w, b, now)
	if !b.Admitted {
		return rateLimited(b, s.Limits.Window, "of order status reads with poll tokens from this client (IP address, or IPv6 /64)", now)
	}
	return nil
}

// charge counts one request on the budget counter in the window ending at
// reset: limit requests on one item, or over shardsFor(limit) items
// counter#s<i> when sharded. Remaining is exact on one item, and estimated
// from the shard the request counted on (its share left, times the shards)
// on several.
func (s *Server) charge(ctx context.Context, counter string, sharded bool, limit int, reset, now time.Time) (auth.Budget, error) {
	b := auth.Budget{Limit: limit, Reset: reset}
	shards := 1
	if sharded {
		shards = s.Limits.shardsFor(limit)
	}
	start, probes := rand.IntN(shards), 0
	for i := 0; i < shards && probes < maxProbes; i++ {
		sh := (start + i) % shards
		name := counter
		if sharded {
			name += "#s" + strconv.Itoa(sh)
		}
		share := limit / shards
		if sh < limit%shards {
			share++
		}
		// Spent at this share: a budget raised mid-window counts on it again.
		spent := name + "/" + strconv.Itoa(share)
		if s.spent.has(spent, now) {
			continue
		}
		probes++
		used, ok, err := s.Keys.CountRequest(ctx, name, share, reset)
		if err != nil {
			return b, err
		}
		if ok {
			b.Admitted = true
			b.Remaining = min(max(share-used, 0)*shards, limit)
			return b, nil
		}
		s.spent.mark(spent, reset, now)
	}
	return b, nil
}

// spentCounters are the counter items this process found spent, until their
// window ends. At most spentSize are kept; when full, ended windows go first,
// then arbitrary ones (a forgotten item costs one more refused write).
type spentCounters struct {
	mu    sync.Mutex
	until map[string]time.Time
}

const spentSize = 10000

func (c *spentCounters) has(name string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.until[name]
	return ok && now.Before(t)
}

func (c *spentCounters) mark(name string, until, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.until == nil {
		c.until = map[string]time.Time{}
	}
	if len(c.until) >= spentSize {
		for n, t := range c.until {
			if !now.Before(t) {
				delete(c.until, n)
			}
		}
		for n := range c.until {
			if len(c.until) < spentSize {
				break
			}
			delete(c.until, n)
		}
	}
	c.until[name] = until
}
