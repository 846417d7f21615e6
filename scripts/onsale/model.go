package main

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DynamoDB's limits of one partition, per second.
const (
	PartitionWCU = 1000
	PartitionRCU = 3000
)

// Phase is what one kind of operation (an order, an availability read)
// consumed: units by partition over Ops operations.
type Phase struct {
	Name  string
	Ops   int
	Usage map[Partition]Units
	Spans map[Partition]Span
}

// Load is a partition's units per operation of each phase.
type Load struct {
	Partition Partition
	PerOp     map[string]Units // phase -> units per operation
}

// Spread is a shape of partition keys with one partition per operation or
// buyer (ORD#{id}, ...): as many of them as operations, each touched by one
// or a few, so their load does not grow with the rate.
type Spread struct {
	Shape string
	Keys  int
	Max   Units // the most one of its partitions took over the run
}

// idPatterns are the per-instance parts of a partition key, most specific
// first: tix ids (ord_..., evt_... of ten or more characters), ticket codes,
// hashes, IPv4 addresses, numbers (shards, time windows).
var idPatterns = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b([a-z]{2,6})_[A-Za-z0-9]{10,}`), "{$1}"},
	{regexp.MustCompile(`\b[A-Z]{2,6}-[A-Z0-9]{4,}`), "{code}"},
	{regexp.MustCompile(`[0-9a-fA-F]{16,}`), "{hash}"},
	{regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}\b`), "{ip}"},
	{regexp.MustCompile(`\d+`), "{n}"},
}

// Shape is a partition key with its per-instance parts replaced by
// placeholders: it groups partitions for the tests below and the report.
func Shape(p Partition) string {
	k := p.Key
	for _, id := range idPatterns {
		k = id.re.ReplaceAllString(k, id.with)
	}
	if p.Index != "" {
		return p.Index + ":" + k
	}
	return k
}

// Split sorts the partitions a phase used into three kinds, by shape:
//   - spread: at least a quarter as many partitions as the phase's
//     operations (one per order, ticket or buyer), each used only briefly
//     (half of them for at most a quarter of the phase; shards are used
//     throughout): their load does not grow with the rate, and none is hot;
//   - rolling: several partitions used one after another (time windows: the
//     sum of their spans at most 1.5 times the shape's span): at any moment
//     one of them takes the whole load, so the shape is one partition;
//   - fixed: every other partition (per event, tier, shard, key, organizer),
//     each its own, taking its share of every operation.
//
// Hot are the rolling and fixed ones with their units per operation.
func Split(phases []Phase) (hot []Load, spread []Spread) {
	spreadShapes := map[string]*Spread{}
	loads := map[Partition]*Load{}
	for _, ph := range phases {
		byShape := map[string][]Partition{}
		for p := range ph.Usage {
			byShape[Shape(p)] = append(byShape[Shape(p)], p)
		}
		whole := phaseSpan(ph.Spans)
		for shape, keys := range byShape {
			if windows := shardedWindows(keys, ph.Spans); windows != nil {
				for name, ks := range windows {
					p := Partition{Index: keys[0].Index, Key: name}
					if len(ks) > 1 {
						p.Key += " (rolling)"
					}
					for _, k := range ks {
						addLoad(loads, p, ph, ph.Usage[k])
					}
				}
				continue
			}
			if len(keys) > 1 && len(keys)*4 >= ph.Ops && medianSpan(keys, ph.Spans)*4 <= whole {
				sp := spreadShapes[shape]
				if sp == nil {
					sp = &Spread{Shape: shape}
					spreadShapes[shape] = sp
				}
				sp.Keys = max(sp.Keys, len(keys))
				for _, k := range keys {
					u := ph.Usage[k]
					sp.Max.R, sp.Max.W = math.Max(sp.Max.R, u.R), math.Max(sp.Max.W, u.W)
				}
				continue
			}
			group := map[Partition]Partition{} // partition -> the partition it counts as
			for _, k := range keys {
				group[k] = k
			}
			if rolling(keys, ph.Spans) {
				p := Partition{Index: keys[0].Index, Key: strings.TrimPrefix(shape, keys[0].Index+":") + " (rolling)"}
				for _, k := range keys {
					group[k] = p
				}
			}
			for _, k := range keys {
				addLoad(loads, group[k], ph, ph.Usage[k])
			}
		}
	}
	for _, sp := range spreadShapes {
		spread = append(spread, *sp)
	}
	for _, l := range loads {
		hot = append(hot, *l)
	}
	sort.Slice(spread, func(i, j int) bool { return spread[i].Shape < spread[j].Shape })
	sort.Slice(hot, func(i, j int) bool { return hot[i].Partition.String() < hot[j].Partition.String() })
	return hot, spread
}

// addLoad adds units u of phase ph to partition p's units per operation.
func addLoad(loads map[Partition]*Load, p Partition, ph Phase, u Units) {
	l := loads[p]
	if l == nil {
		l = &Load{Partition: p, PerOp: map[string]Units{}}
		loads[p] = l
	}
	x := l.PerOp[ph.Name]
	x.R += u.R / float64(ph.Ops)
	x.W += u.W / float64(ph.Ops)
	l.PerOp[ph.Name] = x
}

// number is a numeric part of a key once its other per-instance parts are
// placeholders (idPatterns' last pattern).
var number = idPatterns[len(idPatterns)-1].re

// shardedWindows recognises time windows that are also sharded (a shard of a
// one-second counter: WRL#<key>#<second>#<shard>): keys with two or more
// numbers, one of which grows with the time the keys were first used (the
// window: at most a tenth of the keys, taken in that order, go down in it).
// Grouped by their other numbers (the window replaced), the keys of each
// group were used one after another: each group is one partition, and at any
// moment the groups' current windows share the load side by side. nil when
// the keys are not so.
func shardedWindows(keys []Partition, spans map[Partition]Span) map[string][]Partition {
	partial := func(k string) string {
		for _, id := range idPatterns[:len(idPatterns)-1] {
			k = id.re.ReplaceAllString(k, id.with)
		}
		return k
	}
	fields := len(number.FindAllString(partial(keys[0].Key), -1))
	if fields < 2 || len(keys) < 3 || spans == nil {
		return nil
	}
	byTime := slices.Clone(keys)
	sort.SliceStable(byTime, func(a, b int) bool { return spans[byTime[a]].First.Before(spans[byTime[b]].First) })
	nums := make([][]int64, len(byTime))
	for i, k := range byTime {
		for _, n := range number.FindAllString(partial(k.Key), -1) {
			v, _ := strconv.ParseInt(n, 10, 64)
			nums[i] = append(nums[i], v)
		}
		if len(nums[i]) != fields {
			return nil
		}
	}
	window, fewest := -1, len(byTime)/10+1
	for p := range fields {
		down, varies := 0, false
		for i := 1; i < len(nums); i++ {
			if nums[i][p] < nums[i-1][p] {
				down++
			}
			varies = varies || nums[i][p] != nums[0][p]
		}
		if varies && down < fewest {
			window, fewest = p, down
		}
	}
	if window < 0 {
		return nil
	}
	groups := map[string][]Partition{}
	for _, k := range keys {
		i := 0
		name := number.ReplaceAllStringFunc(partial(k.Key), func(n string) string {
			i++
			if i-1 == window {
				return "{n}"
			}
			return n
		})
		groups[name] = append(groups[name], k)
	}
	if len(groups) == len(keys) {
		return nil
	}
	for _, g := range groups {
		if len(g) > 1 && !rolling(g, spans) {
			return nil
		}
	}
	return groups
}

// phaseSpan is the time from the first use of any partition to the last.
func phaseSpan(spans map[Partition]Span) time.Duration {
	var first, last time.Time
	for _, sp := range spans {
		if first.IsZero() || sp.First.Before(first) {
			first = sp.First
		}
		if sp.Last.After(last) {
			last = sp.Last
		}
	}
	return last.Sub(first)
}

// medianSpan is the median time the partitions were in use.
func medianSpan(keys []Partition, spans map[Partition]Span) time.Duration {
	d := make([]time.Duration, len(keys))
	for i, k := range keys {
		d[i] = spans[k].Last.Sub(spans[k].First)
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

// rolling: the partitions were used one after another, not side by side.
func rolling(keys []Partition, spans map[Partition]Span) bool {
	if len(keys) < 2 || spans == nil {
		return false
	}
	var sum time.Duration
	first, last := spans[keys[0]].First, spans[keys[0]].Last
	for _, k := range keys {
		sp := spans[k]
		sum += sp.Last.Sub(sp.First)
		if sp.First.Before(first) {
			first = sp.First
		}
		if sp.Last.After(last) {
			last = sp.Last
		}
	}
	return float64(sum) <= 1.5*float64(last.Sub(first))
}

// At is a partition's units per second at rates (phase -> operations/s).
func (l Load) At(rates map[string]float64) Units {
	var u Units
	for ph, r := range rates {
		u.R += l.PerOp[ph].R * r
		u.W += l.PerOp[ph].W * r
	}
	return u
}

// Ceiling is the rate of phase alone at which the first partition reaches a
// limit, and that partition (+Inf and nil when nothing of phase is hot).
func Ceiling(hot []Load, phase string) (float64, *Load) {
	best, at := math.Inf(1), (*Load)(nil)
	for i, l := range hot {
		u := l.PerOp[phase]
		for _, c := range []float64{PartitionWCU / u.W, PartitionRCU / u.R} {
			if c < best { // a zero load gives +Inf
				best, at = c, &hot[i]
			}
		}
	}
	return best, at
}

// Report prints the hot partitions at rates (phase -> operations/s)
// against the limits, the spread shapes, and the ceiling of each phase
// alone, which it returns. labels name partitions whose key holds one of
// its keys (an API key's hash: "pk_").
func Report(w io.Writer, hot []Load, spread []Spread, rates map[string]float64, phases []string, labels map[string]string) map[string]float64 {
	label := func(l *Load) string {
		if l == nil {
			return "no partition"
		}
		p := l.Partition.String()
		for part, name := range labels {
			if strings.Contains(p, part) {
				return strings.Replace(p, part, "{"+name+" key "+part[:8]+"}", 1)
			}
		}
		return p
	}
	var at []string
	for _, ph := range phases {
		at = append(at, fmt.Sprintf("%.0f %ss/s", rates[ph], ph))
	}
	fmt.Fprintf(w, "==> Hot partitions at %s (limits per partition: %d WCU/s, %d RCU/s); units per operation as WCU/RCU\n",
		strings.Join(at, ", "), PartitionWCU, PartitionRCU)
	type row struct {
		l    Load
		u    Units
		util float64
	}
	var rows []row
	for _, l := range hot {
		u := l.At(rates)
		rows = append(rows, row{l, u, math.Max(u.W/PartitionWCU, u.R/PartitionRCU)})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].util > rows[j].util })
	fmt.Fprintf(w, "    %-50s", "partition (of a shape's several, the fullest)")
	for _, ph := range phases {
		fmt.Fprintf(w, " %11s", "per "+ph)
	}
	fmt.Fprintf(w, " %8s %8s %7s\n", "WCU/s", "RCU/s", "limit")
	shards := map[string]int{} // a shape's partitions (shards at one load print once)
	for _, r := range rows {
		shards[Shape(r.l.Partition)]++
	}
	printed := map[string]bool{}
	for _, r := range rows {
		shape := Shape(r.l.Partition)
		if printed[shape] {
			continue
		}
		printed[shape] = true
		name := label(&r.l)
		if k := shards[shape]; k > 1 {
			name = fmt.Sprintf("%s (x%d: %s)", name, k, shape)
		}
		fmt.Fprintf(w, "    %-50s", trim(name, 50))
		for _, ph := range phases {
			u := r.l.PerOp[ph]
			fmt.Fprintf(w, " %11s", fmt.Sprintf("%.2f/%.2f", u.W, u.R))
		}
		flag := ""
		if r.util > 1 {
			flag = "  OVER"
		}
		fmt.Fprintf(w, " %8.0f %8.0f %6.0f%%%s\n", r.u.W, r.u.R, 100*r.util, flag)
	}
	if len(spread) > 0 {
		fmt.Fprintln(w, "==> Spread partitions (one per order, ticket or buyer: their load does not grow with the rate)")
		for _, s := range spread {
			fmt.Fprintf(w, "    %-50s %6d keys, at most %.1f WCU and %.1f RCU on one over the run\n", trim(s.Shape, 50), s.Keys, s.Max.W, s.Max.R)
		}
	}
	out := map[string]float64{}
	for _, ph := range phases {
		c, l := Ceiling(hot, ph)
		out[ph] = c
		fmt.Fprintf(w, "==> %ss alone saturate %s first at %s %ss/s\n", ph, label(l), rate(c), ph)
	}
	return out
}

func rate(v float64) string {
	if math.IsInf(v, 1) {
		return "unbounded"
	}
	return fmt.Sprintf("%.0f", math.Floor(v))
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
