package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tix/internal/waitroom"
)

// load is the simulated crowd against one server.
type load struct {
	base, pk string
	opens    time.Time
	sem      chan struct{} // bounds the requests in flight

	mu             sync.Mutex
	joins, reads   []time.Duration
	heldWithout    atomic.Int64 // holds that succeeded without a valid admission (must stay 0)
	heldCopied     atomic.Int64 // holds that succeeded with another network's admission (must stay 0)
	heldAdmitted   atomic.Int64 // holds with the visitor's own admission
	refusedRightly atomic.Int64
}

// visitor is one visitor's outcome: when it joined and when its admission
// was released (both from the tokens the server signed), and when it saw it.
type visitor struct {
	n                int
	joinedMS, fromMS int64
	before           bool
	seenAt           time.Time
}

// client is visitor n's browser: its own loopback network 127.a.b.0/24.
func client(n int) *http.Client {
	ip := net.IPv4(127, byte(1+n/256), byte(n%256), 1)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// slot waits for one of the requests in flight; done gives it back.
func (l *load) slot() (done func()) {
	l.sem <- struct{}{}
	return func() { <-l.sem }
}

// call sends one request and decodes a JSON answer.
func (l *load) call(c *http.Client, method, path string, body any, hdr map[string]string, out any) (int, time.Duration, error) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, l.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+l.pk)
	req.Header.Set("Origin", origin)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	start := time.Now()
	res, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	took := time.Since(start)
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(raw, out); err != nil {
			return res.StatusCode, took, err
		}
	}
	if res.StatusCode >= 500 || res.StatusCode == 429 {
		return res.StatusCode, took, fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	return res.StatusCode, took, nil
}

// visit runs n visitors: the first tenth join at once (before the
// opening), the others from the opening on; then each polls its status
// until admitted, and the first seats of them try to hold seat_<n>.
func (l *load) visit(n, seats int) ([]visitor, error) {
	out := make([]visitor, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if i >= n/10 {
				time.Sleep(time.Until(l.opens))
			}
			v, err := l.one(i, i < seats)
			if err != nil {
				errs <- fmt.Errorf("visitor %d: %w", i, err)
				return
			}
			out[i] = v
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	return out, nil
}

func (l *load) one(n int, hold bool) (visitor, error) {
	c := client(n)
	q := "/queue/" + event
	done := l.slot() // the challenge, its answer and the join in one go: the challenge lives 2 minutes
	var ch struct {
		Challenge  string `json:"challenge"`
		Difficulty int    `json:"difficulty"`
	}
	if _, _, err := l.call(c, http.MethodGet, q+"/challenge", nil, nil, &ch); err != nil {
		done()
		return visitor{}, err
	}
	var j struct {
		Token         string `json:"token"`
		BeforeOpening bool   `json:"before_opening"`
	}
	body := map[string]string{"challenge": ch.Challenge, "nonce": waitroom.Solve(ch.Challenge, ch.Difficulty)}
	status, took, err := l.call(c, http.MethodPost, q+"/join", body, nil, &j)
	done()
	if err != nil || status != http.StatusCreated {
		return visitor{}, fmt.Errorf("join: %d %v", status, err)
	}
	l.record(&l.joins, took)
	v := visitor{n: n, before: j.BeforeOpening, joinedMS: claim(j.Token, "j")}
	for {
		var st struct {
			State     string `json:"state"`
			PollAfter int    `json:"poll_after_seconds"`
			Admission *struct {
				Token string `json:"token"`
			} `json:"admission"`
		}
		done := l.slot()
		status, took, err := l.call(c, http.MethodGet, q+"/status?token="+url.QueryEscape(j.Token), nil, nil, &st)
		done()
		if err != nil || status != http.StatusOK {
			return v, fmt.Errorf("status: %d %v", status, err)
		}
		l.record(&l.reads, took)
		if st.Admission != nil {
			v.fromMS, v.seenAt = claim(st.Admission.Token, "f"), time.Now()
			if hold {
				return v, l.holds(c, n, st.Admission.Token)
			}
			return v, nil
		}
		time.Sleep(time.Duration(min(max(st.PollAfter, 1), 5)) * time.Second)
	}
}

// holds tries seat_<n> without an admission, with the admission copied to
// another network, then with the visitor's own.
func (l *load) holds(c *http.Client, n int, adm string) error {
	body := map[string]any{"event_id": event, "seat_ids": []string{fmt.Sprintf("seat_%d", n)}}
	for _, try := range []struct {
		c     *http.Client
		hdr   map[string]string
		tally *atomic.Int64
	}{{c, nil, &l.heldWithout}, {client(n + 50000), map[string]string{"Tix-Admission": adm}, &l.heldCopied}, {c, map[string]string{"Tix-Admission": adm}, &l.heldAdmitted}} {
		done := l.slot()
		status, _, err := l.call(try.c, http.MethodPost, "/seat-holds", body, try.hdr, nil)
		done()
		if err != nil {
			return err
		}
		switch {
		case status == http.StatusOK:
			try.tally.Add(1)
		case status == http.StatusForbidden && try.tally != &l.heldAdmitted:
			l.refusedRightly.Add(1)
		default:
			return fmt.Errorf("hold: %d", status)
		}
	}
	return nil
}

func (l *load) record(into *[]time.Duration, d time.Duration) {
	l.mu.Lock()
	*into = append(*into, d)
	l.mu.Unlock()
}

// claim reads a numeric claim of a token the server signed (the script
// reads what the server wrote; it checks nothing).
func claim(tok, name string) int64 {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return 0
	}
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	f, _ := m[name].(float64)
	return int64(f)
}

// report prints fairness, the holds and the latencies; an unfair admission
// or a hold without a valid admission fails the run.
func (l *load) report(vs []visitor, took time.Duration) error {
	var after []visitor
	before := 0
	for _, v := range vs {
		if v.before {
			before++
		} else {
			after = append(after, v)
		}
	}
	slices.SortFunc(after, func(a, b visitor) int { return int(a.joinedMS - b.joinedMS) })
	ahead, seenAhead := 0, 0
	var maxFrom int64
	var maxSeen time.Time
	for _, v := range after {
		if v.fromMS < maxFrom {
			ahead++
		}
		if v.seenAt.Before(maxSeen) {
			seenAhead++
		}
		maxFrom, maxSeen = max(maxFrom, v.fromMS), later(maxSeen, v.seenAt)
	}
	fmt.Printf("    %d visitors admitted in %.1fs (%d joined before the opening, %d after)\n", len(vs), took.Seconds(), before, len(after))
	fmt.Printf("    fairness: %d admitted ahead of someone who joined earlier after the opening (released order); %d saw it first only by their polling\n", ahead, seenAhead)
	fmt.Printf("    holds: %d without an admission succeeded, %d with a copied one, %d refused as they should be, %d with the visitor's own admission\n",
		l.heldWithout.Load(), l.heldCopied.Load(), l.refusedRightly.Load(), l.heldAdmitted.Load())
	fmt.Printf("    join:   p50 %s p99 %s (%d)\n", pct(l.joins, 50), pct(l.joins, 99), len(l.joins))
	fmt.Printf("    status: p50 %s p99 %s (%d)\n", pct(l.reads, 50), pct(l.reads, 99), len(l.reads))
	if ahead > 0 || l.heldWithout.Load() > 0 || l.heldCopied.Load() > 0 {
		return fmt.Errorf("unfair admissions (%d) or holds without a valid admission (%d, %d)", ahead, l.heldWithout.Load(), l.heldCopied.Load())
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)*p/100, len(s)-1)].Round(100 * time.Microsecond)
}
