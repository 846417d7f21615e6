package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"tix/internal/clock"
	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing"
	"tix/internal/waitroom"
)

var _ waitroom.Store = (*store.WaitingRoom)(nil)

type anyEvent struct{}

func (anyEvent) GetEvent(_ context.Context, org, id string, _ ticketing.Environment) (*ticketing.Event, error) {
	return &ticketing.Event{ID: id, OrganizerID: org}, nil
}

// The waiting room on DynamoDB Local: a protection belongs to its
// organizer, an answer is taken once, joins are counted per bucket across
// shards, and of parallel orders with one admission exactly one spends it.
func TestWaitingRoom_OnDynamoDBLocal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opens := time.Now().UTC().Add(time.Minute).Truncate(time.Second)
	c := clock.NewFixed(opens.Add(-10 * time.Second))
	st := testenv.Store(t, c)
	s := waitroom.New(st.WaitingRoom(), c, waitroom.Settings{Secret: []byte("s"), Shards: 16})
	tn := ticketing.Tenant{OrganizerID: "org_wr", Environment: ticketing.EnvTest}
	ev := fmt.Sprintf("evt_wr%d", time.Now().UnixNano())
	if _, err := s.Protect(ctx, anyEvent{}, tn, waitroom.ProtectRequest{EventID: ev, OpensAt: opens, Rate: 100, Difficulty: 2}); err != nil {
		t.Fatal(err)
	}
	other := ticketing.Tenant{OrganizerID: "org_other", Environment: ticketing.EnvTest}
	if _, err := s.Protect(ctx, anyEvent{}, other, waitroom.ProtectRequest{EventID: ev, OpensAt: opens}); ticketing.ErrorCode(err) != ticketing.CodeNotFound {
		t.Fatalf("another organizer protecting the event: %v", err)
	}
	ch, err := s.NewChallenge(ctx, tn, ev)
	if err != nil {
		t.Fatal(err)
	}
	nonce := waitroom.Solve(ch.Token, ch.Difficulty)
	j, err := s.Join(ctx, tn, ev, ch.Token, nonce, "192.0.2.10")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Join(ctx, tn, ev, ch.Token, nonce, "192.0.2.10"); ticketing.ErrorCode(err) != ticketing.CodeConflict {
		t.Fatalf("reused answer: %v", err)
	}
	for i := range 40 {
		ch, _ := s.NewChallenge(ctx, tn, ev)
		if _, err := s.Join(ctx, tn, ev, ch.Token, waitroom.Solve(ch.Token, ch.Difficulty), fmt.Sprintf("198.51.%d.1", i)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.WaitingRoom().JoinCounts(ctx, ev, 16, 0, 0)
	if err != nil || got[0] != 41 {
		t.Fatalf("joins before the opening: %v %v, want 41", got, err)
	}
	c.Set(opens.Add(time.Minute))
	stat, err := s.QueueStatus(ctx, tn, ev, j.Token, "192.0.2.99")
	if err != nil || stat.Admission == nil || stat.Position < 1 || stat.Position > 41 {
		t.Fatalf("status: %+v %v", stat, err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 12)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = s.Admit(ctx, tn, ev, "", stat.Admission.Token, "192.0.2.10", fmt.Sprint("idem-", i))
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if ticketing.ErrorCode(err) != ticketing.CodeAdmissionRequired {
			t.Fatal(err)
		}
	}
	if won != 1 {
		t.Fatalf("%d parallel orders spent one admission", won)
	}
	if _, err := s.Admit(ctx, tn, ev, "", stat.Admission.Token, "192.0.2.10", ""); ticketing.ErrorCode(err) != ticketing.CodeAdmissionRequired {
		t.Fatalf("spent admission: %v", err)
	}
}
