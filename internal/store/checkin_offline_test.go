package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"tix/internal/ticketcode"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

// offlineRace is two devices' offline batches and online scans of the same
// tickets, all at once.
type offlineRace struct {
	s       *doorStack
	o       *ticketing.Order
	codes   map[string]string
	batches [2][]ticketing.OfflineScan
	mu      sync.Mutex
	online  []*ticketing.ScanResult
}

// newOfflineRace: every ticket is scanned offline three times by device 0
// (at -10, -6 and -2 minutes: two duplicates) and twice by device 1 (at -8
// and -4 minutes), and six times online now, from four gates.
func newOfflineRace(t *testing.T, s *doorStack) *offlineRace {
	o, _, codes := s.paid(t, "offline-race", 4)
	r := &offlineRace{s: s, o: o, codes: codes}
	now := s.in.Clock.Now()
	for _, tk := range o.Tickets {
		for dev, mins := range [][]int{{10, 6, 2}, {8, 4}} {
			for _, m := range mins {
				r.batches[dev] = append(r.batches[dev], ticketing.OfflineScan{ClientScanID: fmt.Sprintf("dev%d:%s:%d", dev, tk.Number, m),
					Code: codes[tk.Number], ScannedAt: now.Add(-time.Duration(m) * time.Minute)})
			}
		}
	}
	return r
}

func (r *offlineRace) upload(ctx context.Context, dev int) ([]ticketing.ScanResult, error) {
	return r.s.in.Batch(ctx, r.s.tenant, ticketing.ScanBatch{Gate: fmt.Sprintf("device-%d", dev), KeyID: "key_door", Scans: r.batches[dev]})
}

// run uploads both batches while online scans of every ticket race them.
func (r *offlineRace) run(t *testing.T) {
	ctx := context.Background()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for dev := range 2 {
		wg.Go(func() {
			<-start
			if _, err := r.upload(ctx, dev); err != nil {
				t.Errorf("upload of device %d: %v", dev, err)
			}
		})
	}
	for i := range 6 * len(r.o.Tickets) {
		wg.Go(func() {
			<-start
			res, err := r.s.in.Scan(ctx, r.s.tenant, ticketing.Scan{Code: r.codes[r.o.Tickets[i%len(r.o.Tickets)].Number],
				Gate: []string{"north", "south", "east", "west"}[i%4], KeyID: "key_door"})
			if err != nil {
				t.Errorf("online scan: %v", err)
				return
			}
			r.mu.Lock()
			r.online = append(r.online, res)
			r.mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
}

// On DynamoDB Local: two offline batches with duplicates and online scans
// racing them keep every scan (each uploaded one recorded, each online
// admission that lost recorded as superseded), the first scan of each
// ticket wins, and uploading both batches again changes nothing.
func TestOfflineBatch_RacingOnlineScansKeepEveryScanAndTheFirstWins(t *testing.T) {
	t.Parallel()
	s := newDoorStack(t)
	ctx := context.Background()
	r := newOfflineRace(t, s)
	r.run(t)
	first := map[string]ticketing.CheckIn{}
	for _, tk := range r.o.Tickets {
		st, err := s.st.Tickets().TicketState(ctx, s.tenant.Environment, tk.Number)
		if err != nil {
			t.Fatal(err)
		}
		want := r.s.in.Clock.Now().Add(-10 * time.Minute)
		if st.CheckIn == nil || !st.CheckIn.At.Equal(want) || st.CheckIn.Gate != "device-0" {
			t.Fatalf("ticket %s admission %+v, want device 0's scan at %s", tk.Number, st.CheckIn, want)
		}
		first[tk.Number] = *st.CheckIn
	}
	for dev := range 2 {
		for _, sc := range r.batches[dev] {
			if ok, err := s.st.ScanLogged(ctx, s.tenant, sc.ClientScanID); err != nil || !ok {
				t.Errorf("uploaded scan %s not recorded (%v)", sc.ClientScanID, err)
			}
		}
	}
	admittedOnline := 0
	for _, res := range r.online {
		switch res.Result {
		case ticketing.ResultAdmitted:
			admittedOnline++
			if ok, err := s.st.SupersededLogged(ctx, s.tenant, res.CheckIn.ID); err != nil || !ok {
				t.Errorf("online admission %s lost: not the admission and not recorded as superseded (%v)", res.CheckIn.ID, err)
			}
		case ticketing.ResultAlreadyAdmitted:
		default:
			t.Errorf("online scan: %+v", res)
		}
	}
	t.Logf("%d online scans admitted a ticket before an earlier offline scan replaced them", admittedOnline)
	// Uploading both batches again: each ticket's first scan answers
	// admitted, every other duplicate of it, and nothing changes.
	for dev := range 2 {
		res, err := r.upload(ctx, dev)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range res {
			sc := r.batches[dev][i]
			n := first[ticketNumberOf(t, r.codes, sc.Code)]
			want := ticketing.ResultDuplicate
			if dev == 0 && sc.ScannedAt.Equal(n.At) {
				want = ticketing.ResultAdmitted
			}
			if a.Result != want || a.CheckIn == nil || a.CheckIn.ID != n.ID || a.Superseded != nil {
				t.Errorf("re-upload of %s: %+v, want %s of %s", sc.ClientScanID, a, want, n.ID)
			}
		}
	}
	for number, ci := range first {
		st, err := s.st.Tickets().TicketState(ctx, s.tenant.Environment, number)
		if err != nil || st.CheckIn == nil || *st.CheckIn != ci {
			t.Errorf("re-upload changed %s's admission to %+v (%v)", number, st.CheckIn, err)
		}
	}
}

func ticketNumberOf(t *testing.T, codes map[string]string, code string) string {
	for n, c := range codes {
		if c == code {
			return n
		}
	}
	t.Fatalf("no ticket has code %s", code)
	return ""
}

// The admission list reads the event's index page by page on DynamoDB
// Local: every ticket once, each page signed, states as stored.
func TestAdmissionList_PagesTheEventIndexSigned(t *testing.T) {
	t.Parallel()
	s := newDoorStack(t)
	ctx := context.Background()
	o, _, codes := s.paid(t, "list-a", 5)
	s.paid(t, "list-b", 4)
	admitted, err := s.in.Scan(ctx, s.tenant, ticketing.Scan{Code: codes[o.Tickets[2].Number], Gate: "north", KeyID: "key_door"})
	if err != nil || admitted.Result != ticketing.ResultAdmitted {
		t.Fatalf("scan: %+v %v", admitted, err)
	}
	ks, err := s.keys.KeySet(ctx, s.tenant)
	if err != nil {
		t.Fatal(err)
	}
	jwks := ticketcode.FromJWKS(ks.JWKSet(s.in.Clock.Now()))
	seen := map[string]ticketcode.AdmissionEntry{}
	cursor := ""
	for pages := 1; ; pages++ {
		p, err := s.in.AdmissionList(ctx, s.tenant, ticketing.AdmissionQuery{EventID: ticketingtest.EventID, Limit: 2, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if err := ticketcode.VerifyAdmissionPage(p, jwks, s.in.Clock.Now()); err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		for _, e := range p.Data {
			if _, dup := seen[e.TicketNumber]; dup {
				t.Fatalf("ticket %s on two pages", e.TicketNumber)
			}
			seen[e.TicketNumber] = e
		}
		if !p.HasMore {
			if pages != 5 {
				t.Errorf("%d pages of 2 for 9 tickets", pages)
			}
			break
		}
		cursor = *p.NextCursor
	}
	if len(seen) != 9 {
		t.Fatalf("%d tickets listed, want 9", len(seen))
	}
	e := seen[o.Tickets[2].Number]
	if e.State != ticketcode.StateAdmitted || e.CheckIn.ID != admitted.CheckIn.ID || e.OrderTicketNumber == nil || *e.OrderTicketNumber != o.TicketNumber {
		t.Errorf("admitted ticket's entry: %+v", e)
	}
	_, err = s.in.AdmissionList(ctx, s.tenant, ticketing.AdmissionQuery{EventID: ticketingtest.EventID, Cursor: cursor + "x"})
	var te *ticketing.Error
	if !errors.As(err, &te) || te.Code != ticketing.CodeInvalidRequest || te.Param != "cursor" {
		t.Errorf("an edited cursor: %v", err)
	}
}
