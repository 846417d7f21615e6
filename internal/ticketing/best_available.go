package ticketing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// BestAvailable is POST /seat-holds's best_available: the buyer names a
// seated tier and how many seats, and the hold takes the best free ones.
type BestAvailable struct {
	TierID   *string `json:"tier_id"`
	Quantity *int    `json:"quantity"`
}

// Best-available ranking (docs/guide.md, Best available): a seat of the
// tier ranks by its zone (sort_order, then map order), then its row (the
// order the map lists the zone's rows in, the first nearest the stage),
// then how far it is from the middle of its row. A candidate is a run of
// quantity free seats next to each other in one row (neighbours in the
// row's order, by seat number); the best candidates are those whose zone
// and row rank first, then whose middle is nearest the row's middle. When no
// row has that many free seats together, the candidate is the best free
// seats one by one.
const (
	// bestPool is how many disjoint candidates, best first, the first
	// attempt chooses among at random, so that buyers pressing the button at
	// once do not all ask for the same seats: times the requests for the
	// same occurrence this process serves at the moment (one on Lambda);
	// each attempt that loses a seat to another buyer doubles it.
	bestPool = 8
	// bestAttempts bounds the holds one request tries.
	bestAttempts = 8
	// bestViewTTL is how long a process picks from the seat states it read:
	// every hold it makes or loses marks its seats in them meanwhile, and
	// the seat's conditional write decides. A seat given back elsewhere is
	// offered again within bestViewTTL.
	bestViewTTL = time.Second
)

// validateBestAvailable checks best_available (exclusive with seat_ids).
func validateBestAvailable(req HoldRequest) error {
	b := req.BestAvailable
	if req.SeatIDs != nil {
		return Invalid("best_available", "give either seat_ids or best_available, not both")
	}
	if b.TierID == nil || *b.TierID == "" {
		return Invalid("best_available.tier_id", "best_available.tier_id is required: the seated tier to hold seats of")
	}
	if b.Quantity == nil || *b.Quantity < 1 || *b.Quantity > MaxSeatsPerHold {
		return Invalid("best_available.quantity", "best_available.quantity must be from 1 to %d", MaxSeatsPerHold)
	}
	return nil
}

// bestRow is one row of a tier's seats in ranking order.
type bestRow struct {
	rank  int
	seats []string // in the row's order
}

// bestRows lists the rows of tier's seats, best first.
func bestRows(e *Event, tierID string) []bestRow {
	if e.Seating == nil {
		return nil
	}
	zones := make([]*Zone, 0, len(e.Seating.Zones))
	for i := range e.Seating.Zones {
		zones = append(zones, &e.Seating.Zones[i])
	}
	slices.SortStableFunc(zones, func(a, b *Zone) int { return cmp.Compare(a.SortOrder, b.SortOrder) })
	var rows []bestRow
	for _, z := range zones {
		byRow := map[string]int{}
		var zrows [][]*Seat
		for i := range z.Seats {
			s := &z.Seats[i]
			if t := cmp.Or(s.TierID, z.PrimaryTierID); t != tierID {
				continue
			}
			r := ""
			if s.Row != nil {
				r = *s.Row
			}
			k, ok := byRow[r]
			if !ok {
				k = len(zrows)
				byRow[r] = k
				zrows = append(zrows, nil)
			}
			zrows[k] = append(zrows[k], s)
		}
		for _, seats := range zrows {
			slices.SortStableFunc(seats, func(a, b *Seat) int { return cmp.Compare(seatNumber(a), seatNumber(b)) })
			row := bestRow{rank: len(rows), seats: make([]string, len(seats))}
			for i, s := range seats {
				row.seats[i] = s.ID
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func seatNumber(s *Seat) int {
	if s.Number == nil {
		return 0
	}
	return *s.Number
}

// bestCandidates returns up to pool disjoint candidates of qty seats, best
// first, among the seats taken does not report taken.
func bestCandidates(rows []bestRow, taken func(string) bool, qty, pool int) [][]string {
	var out [][]string
	for _, row := range rows {
		out = append(out, rowCandidates(row, taken, qty, pool-len(out))...)
		if len(out) >= pool {
			return out
		}
	}
	if len(out) > 0 {
		return out
	}
	var one []string // no row has qty together: the best free seats one by one
	for _, row := range rows {
		for _, i := range byCentre(len(row.seats)) {
			if id := row.seats[i]; !taken(id) {
				if one = append(one, id); len(one) == qty {
					return [][]string{one}
				}
			}
		}
	}
	return nil
}

// rowCandidates picks up to n disjoint runs of qty free seats of a row,
// those whose middle is nearest the row's middle first.
func rowCandidates(row bestRow, taken func(string) bool, qty, n int) [][]string {
	type run struct{ start, dist int }
	var runs []run
	free := 0
	for i, id := range row.seats {
		if taken(id) {
			free = 0
			continue
		}
		if free++; free >= qty {
			start := i - qty + 1
			runs = append(runs, run{start, abs(2*start + qty - len(row.seats))})
		}
	}
	slices.SortStableFunc(runs, func(a, b run) int { return cmp.Compare(a.dist, b.dist) })
	used := make([]bool, len(row.seats))
	var out [][]string
	for _, r := range runs {
		if len(out) >= n {
			break
		}
		if slices.Contains(used[r.start:r.start+qty], true) {
			continue
		}
		for i := r.start; i < r.start+qty; i++ {
			used[i] = true
		}
		out = append(out, slices.Clone(row.seats[r.start:r.start+qty]))
	}
	return out
}

// byCentre lists the positions of a row of n seats, middle first.
func byCentre(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(abs(2*a+1-n), abs(2*b+1-n)) })
	return idx
}

func abs(x int) int { return max(x, -x) }

// seatViews are the seat states each occurrence's best-available holds
// pick from in this process (bestViewTTL), with the seats it has held or
// lost since marked taken.
type seatViews struct {
	mu      sync.Mutex
	views   map[string]*seatView
	loading map[string]*sync.Mutex
	busy    map[string]int // requests picking per key
}

// enter counts a request picking seats of key until leave; it returns how
// many do now, itself included.
func (v *seatViews) enter(key string) (int, func()) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.busy == nil {
		v.busy = map[string]int{}
	}
	v.busy[key]++
	return v.busy[key], func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		if v.busy[key]--; v.busy[key] <= 0 {
			delete(v.busy, key)
		}
	}
}

type seatView struct {
	taken map[string]time.Time // seat -> taken until
	at    time.Time
}

func (v *seatViews) get(key string) *seatView {
	v.mu.Lock()
	defer v.mu.Unlock()
	if sv, ok := v.views[key]; ok && time.Since(sv.at) < bestViewTTL {
		return sv
	}
	return nil
}

// load reads the seat states of key unless a fresh view exists: one read
// at a time per key, the requests waiting meanwhile pick from it.
func (v *seatViews) load(key string, read func() (*Stock, error), occ string, now time.Time) error {
	v.mu.Lock()
	if v.loading == nil || len(v.loading) >= 1024 {
		v.loading = map[string]*sync.Mutex{}
	}
	l := v.loading[key]
	if l == nil {
		l = &sync.Mutex{}
		v.loading[key] = l
	}
	v.mu.Unlock()
	l.Lock()
	defer l.Unlock()
	if v.get(key) != nil {
		return nil
	}
	st, err := read()
	if err != nil {
		return err
	}
	v.put(key, st, occ, now)
	return nil
}

func (v *seatViews) put(key string, st *Stock, occ string, now time.Time) {
	sv := &seatView{taken: map[string]time.Time{}, at: time.Now()}
	for k, s := range st.Seats {
		if k.Occurrence == occ && s.Taken(now) {
			sv.taken[k.ID] = s.Until
			if s.Status == SeatSold {
				sv.taken[k.ID] = now.Add(24 * time.Hour)
			}
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.views == nil || len(v.views) >= 1024 {
		v.views = map[string]*seatView{}
	}
	v.views[key] = sv
}

// mark records seats as taken until then in the view of key.
func (v *seatViews) mark(key string, seats []string, until time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if sv, ok := v.views[key]; ok {
		for _, id := range seats {
			sv.taken[id] = until
		}
	}
}

func (sv *seatView) takenSeats() map[string]time.Time {
	if sv == nil {
		return nil
	}
	return sv.taken
}

// taken reports, for picking, whether a seat of the view of key is taken at now.
func (v *seatViews) taken(key string, now time.Time) func(string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	snapshot := map[string]bool{}
	for id, until := range v.views[key].takenSeats() {
		if now.Before(until) {
			snapshot[id] = true
		}
	}
	return func(id string) bool { return snapshot[id] }
}

// holdBestAvailable picks the best free seats of the tier and holds them:
// one transaction per attempt; a seat another buyer took meanwhile is
// marked taken and the next attempt picks among twice as many candidates.
func (s *Holds) holdBestAvailable(ctx context.Context, h *Hold, e *Event, b *BestAvailable, idem *Idempotency, ipState *HoldIPState, now time.Time) error {
	t, ok := e.Tier(*b.TierID)
	if !ok || !t.Seated {
		err := NotFound("seated tier " + *b.TierID + " of this event")
		err.Param = "best_available.tier_id"
		return err
	}
	if !e.TierOnSale(t, occOrEmpty(h.OccurrenceID), now) {
		return &Error{Code: CodeSalesClosed, Param: "best_available.tier_id", Message: fmt.Sprintf("tier %q is not on sale now", t.Name)}
	}
	key := e.ID + "#" + string(h.Environment) + "#" + h.OccurrenceID
	rows := bestRows(e, t.ID)
	busy, leave := s.seatViews.enter(key)
	defer leave()
	for attempt := range bestAttempts {
		err := s.seatViews.load(key, func() (*Stock, error) {
			return s.Catalog.StockOf(ctx, e, h.Environment, occOrEmpty(h.OccurrenceID))
		}, h.OccurrenceID, now)
		if err != nil {
			return err
		}
		cands := bestCandidates(rows, s.seatViews.taken(key, now), *b.Quantity, busy*bestPool<<attempt)
		if len(cands) == 0 {
			break
		}
		pick := cands[rand.IntN(len(cands))]
		h.Seats, h.TotalBasePrice = nil, 0
		if err := h.addSeats(e, pick, now); err != nil {
			return err
		}
		err = s.writeHold(ctx, h, idem, ipState, now)
		var se *StockError
		switch {
		case err == nil:
			s.seatViews.mark(key, pick, h.ExpiresAt)
			return nil
		case errors.As(err, &se):
			s.seatViews.mark(key, pick[se.Index:se.Index+1], now.Add(bestViewTTL))
		case errors.Is(err, ErrContended):
			s.seatViews.mark(key, pick, now.Add(bestViewTTL))
		default:
			return err
		}
	}
	return &Error{Code: CodeSeatConflict, Param: "best_available.quantity",
		Message: fmt.Sprintf("fewer than %d seats of tier %q are free now; ask for fewer or choose seats on the map", *b.Quantity, t.Name)}
}
