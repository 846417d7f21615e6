package waitroom_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"tix/internal/clock"
	"tix/internal/inmem"
	"tix/internal/ticketing"
	"tix/internal/waitroom"
)

var (
	ctx    = context.Background()
	tenant = ticketing.Tenant{OrganizerID: "org_1", Environment: ticketing.EnvTest}
	opens  = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
)

type events struct{}

func (events) GetEvent(_ context.Context, org, id string, env ticketing.Environment) (*ticketing.Event, error) {
	if org != tenant.OrganizerID || id != "evt_1" {
		return nil, ticketing.NotFound("event")
	}
	return &ticketing.Event{ID: id, OrganizerID: org, Occurrences: []ticketing.Occurrence{{ID: "occ_1"}}}, nil
}

// room is a protected on-sale opening at opens, rate 10/s, 4-bit proofs.
func room(t *testing.T) (*waitroom.Service, *inmem.WaitingRoom, *clock.Fixed) {
	t.Helper()
	st := inmem.NewWaitingRoom()
	c := clock.NewFixed(opens.Add(-time.Minute))
	s := waitroom.New(st, c, waitroom.Settings{Secret: []byte("test secret"), Shards: 8})
	if _, err := s.Protect(ctx, events{}, tenant, waitroom.ProtectRequest{EventID: "evt_1", OpensAt: opens, Rate: 10, Difficulty: 4}); err != nil {
		t.Fatal(err)
	}
	return s, st, c
}

func join(t *testing.T, s *waitroom.Service, ip string) *waitroom.Joined {
	t.Helper()
	ch, err := s.NewChallenge(ctx, tenant, "evt_1")
	if err != nil {
		t.Fatal(err)
	}
	j, err := s.Join(ctx, tenant, "evt_1", ch.Token, waitroom.Solve(ch.Token, ch.Difficulty), ip)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func code(err error) ticketing.Code { return ticketing.ErrorCode(err) }

func TestJoin_RefusesWrongExpiredAndReusedAnswers(t *testing.T) {
	s, _, c := room(t)
	ch, err := s.NewChallenge(ctx, tenant, "evt_1")
	if err != nil {
		t.Fatal(err)
	}
	nonce := waitroom.Solve(ch.Token, ch.Difficulty)
	wrong := "0"
	for n := 0; waitroom.Solved(ch.Token, wrong, ch.Difficulty); n++ {
		wrong = fmt.Sprint(n)
	}
	if _, err := s.Join(ctx, tenant, "evt_1", ch.Token, wrong, "10.0.0.1"); code(err) != ticketing.CodeInvalidRequest {
		t.Fatalf("wrong answer: %v", err)
	}
	forged := ch.Token[:len(ch.Token)-2] + "AA"
	if _, err := s.Join(ctx, tenant, "evt_1", forged, waitroom.Solve(forged, ch.Difficulty), "10.0.0.1"); code(err) != ticketing.CodeInvalidRequest {
		t.Fatalf("forged challenge: %v", err)
	}
	if _, err := s.Join(ctx, tenant, "evt_1", ch.Token, nonce, "10.0.0.1"); err != nil {
		t.Fatalf("right answer: %v", err)
	}
	if _, err := s.Join(ctx, tenant, "evt_1", ch.Token, nonce, "10.0.0.1"); code(err) != ticketing.CodeConflict {
		t.Fatalf("reused answer: %v", err)
	}
	late, _ := s.NewChallenge(ctx, tenant, "evt_1")
	c.Advance(waitroom.DefaultSettings.ChallengeTTL)
	if _, err := s.Join(ctx, tenant, "evt_1", late.Token, waitroom.Solve(late.Token, late.Difficulty), "10.0.0.1"); code(err) != ticketing.CodeInvalidRequest || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired challenge: %v", err)
	}
	if _, err := s.NewChallenge(ctx, ticketing.Tenant{OrganizerID: "org_2", Environment: ticketing.EnvTest}, "evt_1"); code(err) != ticketing.CodeNotFound {
		t.Fatalf("another organizer's queue: %v", err)
	}
}

func status(t *testing.T, s *waitroom.Service, j *waitroom.Joined, ip string) *waitroom.Status {
	t.Helper()
	st, err := s.QueueStatus(ctx, tenant, "evt_1", j.Token, ip)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Everyone who joined before the opening gets a distinct random place among
// them; after it, places follow the join time, and nobody who joined later
// is admitted before someone who joined earlier.
func TestStatus_RandomBeforeOpeningThenFirstComeFirstServed(t *testing.T) {
	s, _, c := room(t)
	var pre, post []*waitroom.Joined
	for i := range 20 {
		pre = append(pre, join(t, s, fmt.Sprintf("10.0.%d.1", i)))
	}
	c.Set(opens.Add(500 * time.Millisecond))
	if st := status(t, s, pre[0], "10.0.0.9"); st.State != waitroom.StateQueued || st.Final {
		t.Fatalf("pre-opening joiner before its counts settle: %+v", st)
	}
	for i := range 30 {
		post = append(post, join(t, s, fmt.Sprintf("10.1.%d.1", i)))
		c.Advance(100 * time.Millisecond)
	}
	c.Set(opens.Add(time.Hour / 4)) // past every release, within the admissions' validity
	seen := map[int]bool{}
	for i, j := range pre {
		st := status(t, s, j, fmt.Sprintf("10.0.%d.7", i))
		if st.Position < 1 || st.Position > len(pre) || !st.Final {
			t.Fatalf("pre-opening position %+v", st)
		}
		seen[st.Position] = true
	}
	if len(seen) < len(pre)/2 {
		t.Fatalf("pre-opening places not spread by the draw: %v", seen)
	}
	last, lastFrom := 0, time.Time{}
	for i, j := range post {
		st := status(t, s, j, fmt.Sprintf("10.1.%d.7", i))
		if st.State != waitroom.StateAdmitted || st.Position <= len(pre) || st.Position < last || st.Admission.ValidFrom.Before(lastFrom) {
			t.Fatalf("joiner %d: %+v (previous place %d from %s)", i, st, last, lastFrom)
		}
		last, lastFrom = st.Position, st.Admission.ValidFrom
	}
	if last != len(pre)+len(post) {
		t.Fatalf("last place %d, want %d", last, len(pre)+len(post))
	}
}

// The queue admits Rate places a second from the opening.
func TestStatus_AdmitsAtTheRate(t *testing.T) {
	s, _, c := room(t)
	c.Set(opens.Add(-time.Second))
	var js []*waitroom.Joined
	for i := range 50 {
		js = append(js, join(t, s, fmt.Sprintf("10.2.%d.1", i)))
	}
	c.Set(opens.Add(3 * time.Second)) // 30 places admitted at 10/s
	admitted := 0
	for i, j := range js {
		st := status(t, s, j, fmt.Sprintf("10.2.%d.1", i))
		if st.State == waitroom.StateAdmitted != (st.Position <= 30) || st.AdmittedThrough != 30 {
			t.Fatalf("at 3 s and 10/s: %+v", st)
		}
		if st.State == waitroom.StateAdmitted {
			admitted++
		} else if st.EstimatedWait <= 0 {
			t.Fatalf("queued with no wait: %+v", st)
		}
	}
	if admitted < 20 || admitted > 40 {
		t.Fatalf("admitted %d at 3 s and 10/s, want about 30", admitted)
	}
}

func admission(t *testing.T, s *waitroom.Service, c *clock.Fixed, ip string) string {
	t.Helper()
	j := join(t, s, ip)
	if next := c.Now().Add(10 * time.Second); next.After(opens.Add(time.Minute)) {
		c.Set(next)
	} else {
		c.Set(opens.Add(time.Minute))
	}
	st := status(t, s, j, ip)
	if st.Admission == nil {
		t.Fatalf("not admitted: %+v", st)
	}
	return st.Admission.Token
}

func TestAdmit_RefusesMissingForeignExpiredCopiedAndSpentAdmissions(t *testing.T) {
	s, _, c := room(t)
	adm := admission(t, s, c, "10.3.0.1")
	a, err := s.Admit(ctx, tenant, "evt_1", "occ_1", adm, "10.3.0.200", "") // same /24
	if err != nil || a == nil {
		t.Fatalf("valid admission: %v", err)
	}
	for name, tc := range map[string]struct{ token, ip string }{
		"none":            {"", "10.3.0.1"},
		"copied":          {adm, "10.4.0.1"},
		"forged":          {adm[:len(adm)-3] + "AAA", "10.3.0.1"},
		"a queue token":   {join(t, s, "10.3.0.1").Token, "10.3.0.1"},
		"garbage":         {"qa.e30.AAAA", "10.3.0.1"},
		"other occ is ok": {},
	} {
		if tc.token == "" && tc.ip == "" {
			continue
		}
		if _, err := s.Admit(ctx, tenant, "evt_1", "occ_1", tc.token, tc.ip, ""); code(err) != ticketing.CodeAdmissionRequired {
			t.Errorf("%s: %v", name, err)
		}
	}
	if a, err := s.Admit(ctx, ticketing.Tenant{OrganizerID: "org_1", Environment: ticketing.EnvLive}, "evt_1", "", "", "10.3.0.1", ""); a != nil || err != nil {
		t.Errorf("another environment's event is not protected by this protection: %v %v", a, err)
	}
	order := func(claim string) error {
		_, err := s.Admit(ctx, tenant, "evt_1", "occ_1", adm, "10.3.0.1", claim)
		return err
	}
	if err := order("idem-1"); err != nil {
		t.Fatal(err)
	}
	if err := order("idem-1"); err != nil {
		t.Fatalf("the same order's retry: %v", err)
	}
	if err := order("idem-2"); code(err) != ticketing.CodeAdmissionRequired {
		t.Fatalf("a second order: %v", err)
	}
	if _, err := s.Admit(ctx, tenant, "evt_1", "occ_1", adm, "10.3.0.1", ""); code(err) != ticketing.CodeAdmissionRequired {
		t.Fatalf("a hold with a spent admission: %v", err)
	}
	fresh := admission(t, s, c, "10.5.0.1")
	if _, err := s.Admit(ctx, tenant, "evt_1", "occ_1", fresh, "10.5.0.1", ""); err != nil {
		t.Fatalf("a fresh admission: %v", err)
	}
	c.Advance(waitroom.DefaultSettings.AdmissionTTL)
	if _, err := s.Admit(ctx, tenant, "evt_1", "occ_1", fresh, "10.5.0.1", ""); code(err) != ticketing.CodeAdmissionRequired || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired admission: %v", err)
	}
}

func TestSpend_TwoParallelOrdersOneWins(t *testing.T) {
	s, _, c := room(t)
	adm := admission(t, s, c, "10.6.0.1")
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.Admit(ctx, tenant, "evt_1", "", adm, "10.6.0.1", fmt.Sprint("order-", i))
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if code(err) != ticketing.CodeAdmissionRequired {
			t.Fatal(err)
		}
	}
	if won != 1 {
		t.Fatalf("%d orders spent one admission", won)
	}
}

// Joining writes the answer's own item and one of Shards counters; status
// writes nothing and, within the cache's life, reads nothing.
func TestJoinAndStatus_TouchNoSharedItem(t *testing.T) {
	s, st, c := room(t)
	const n = 400
	var js []*waitroom.Joined
	for i := range n {
		js = append(js, join(t, s, fmt.Sprintf("10.7.%d.1", i%250)))
	}
	c.Set(opens.Add(time.Hour / 4))
	status(t, s, js[0], "10.7.0.1") // the process reads the counters once
	for k := range st.Touched {
		st.Touched[k] = 0
	}
	for i, j := range js {
		status(t, s, j, fmt.Sprintf("10.7.%d.1", i%250))
	}
	for k, v := range st.Touched {
		if v > 0 {
			t.Fatalf("status within the cache's life touched %s %d times", k, v)
		}
	}
	st.Touched = map[string]int{}
	for i := range n {
		c.Set(opens.Add(-time.Minute))
		join(t, s, fmt.Sprintf("10.8.%d.1", i%250))
	}
	for k, v := range st.Touched {
		if strings.HasPrefix(k, "QJOIN#") && v > n/8*2 || strings.HasPrefix(k, "QANS#") && v > 1 {
			t.Fatalf("%d joins touched %s %d times", n, k, v)
		}
	}
}
