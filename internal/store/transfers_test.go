package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"tix/internal/store"
	"tix/internal/ticketcode"
	"tix/internal/ticketing"
	"tix/internal/ticketing/ticketingtest"
)

var _ ticketing.TransferStore = (*store.Transfers)(nil)

func (s *doorStack) transfers() (*ticketing.Transfers, *ticketingtest.Offers) {
	rec := &ticketingtest.Offers{}
	return &ticketing.Transfers{Store: s.st.Transfers(), Door: s.st.Tickets(), Orders: s.sales.Orders, Offers: rec,
		AcceptURL: ticketingtest.AcceptURL}, rec
}

func (s *doorStack) offer(t *testing.T, trs *ticketing.Transfers, number string) *ticketing.Transfer {
	t.Helper()
	tr, err := trs.Create(context.Background(), ticketing.Caller{Tenant: s.tenant, KeyID: "key_door"}, number,
		ticketing.TransferRequest{ToEmail: "friend@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Accepting a transfer and a gate scanning the old ticket at the same
// instant (give or take a few milliseconds, so that each may come first),
// round after round on DynamoDB Local: exactly one wins each time.
// When the accept wins the scan answers transferred (and the new ticket is
// admitted); when the scan wins the accept is 409 and nothing was issued.
func TestTransfers_AcceptRacingACheckInOfTheOldTicketExactlyOneWins(t *testing.T) {
	t.Parallel()
	s := newDoorStack(t)
	trs, rec := s.transfers()
	ctx := context.Background()
	wins := map[string]int{}
	for round := range 8 {
		o, _, codes := s.paid(t, fmt.Sprintf("accept-scan-%d", round), 1)
		old := o.Tickets[0].Number
		tr := s.offer(t, trs, old)
		var accErr error
		var scan *ticketing.ScanResult
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() { <-start; _, _, accErr = trs.Accept(ctx, tr.ID, rec.Token(t, tr.ID)) })
		wg.Go(func() {
			<-start
			// Staggered over the rounds, so that either may come first.
			time.Sleep(time.Duration(round) * 4 * time.Millisecond)
			var err error
			if scan, err = s.in.Scan(ctx, s.tenant, ticketing.Scan{Code: codes[old], Gate: "north", KeyID: "key_door"}); err != nil {
				t.Error(err)
			}
		})
		close(start)
		wg.Wait()
		if scan == nil {
			t.FailNow()
		}
		got, err := trs.Get(ctx, s.tenant, tr.ID)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case accErr == nil && scan.Result == ticketing.ResultTransferred:
			wins["accept"]++
			if got.Status != ticketing.TransferAccepted || got.NewTicketNumber == "" {
				t.Fatalf("round %d: accept won but the transfer is %+v", round, got)
			}
			if res, err := s.in.Scan(ctx, s.tenant, ticketing.Scan{Code: got.NewTicketNumber, Gate: "north", KeyID: "key_door"}); err != nil ||
				res.Result != ticketing.ResultAdmitted {
				t.Fatalf("round %d: the new ticket at the door: %+v %v", round, res, err)
			}
		case ticketing.IsCode(accErr, ticketing.CodeConflict) && scan.Result == ticketing.ResultAdmitted:
			wins["scan"]++
			if got.Status != ticketing.TransferPending || got.NewOrderID != "" {
				t.Fatalf("round %d: the scan won but the transfer is %+v", round, got)
			}
		default:
			t.Fatalf("round %d: accept %v, scan %s: not exactly one winner", round, accErr, scan.Result)
		}
	}
	t.Logf("winners over 8 rounds: %v", wins)
}

// Ten accepts of one link and a cancel at the same instant: exactly one of
// them wins, and at most one ticket is issued.
func TestTransfers_ParallelAcceptsAndACancelExactlyOneWins(t *testing.T) {
	t.Parallel()
	s := newDoorStack(t)
	trs, rec := s.transfers()
	ctx := context.Background()
	for round := range 4 {
		o, _, _ := s.paid(t, fmt.Sprintf("accepts-%d", round), 1)
		tr := s.offer(t, trs, o.Tickets[0].Number)
		token := rec.Token(t, tr.ID)
		var mu sync.Mutex
		var accepted, cancelled int
		issued := map[string]bool{}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 10 {
			wg.Go(func() {
				<-start
				_, n, err := trs.Accept(ctx, tr.ID, token)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					accepted++
					issued[n.ID] = true
				case !ticketing.IsCode(err, ticketing.CodeConflict):
					t.Errorf("accept: %v", err)
				}
			})
		}
		wg.Go(func() {
			<-start
			_, err := trs.Cancel(ctx, s.tenant, tr.ID)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				cancelled++
			case !ticketing.IsCode(err, ticketing.CodeConflict):
				t.Errorf("cancel: %v", err)
			}
		})
		close(start)
		wg.Wait()
		got, err := trs.Get(ctx, s.tenant, tr.ID)
		if err != nil {
			t.Fatal(err)
		}
		if accepted+cancelled != 1 || len(issued) != accepted {
			t.Fatalf("round %d: %d accepted, %d cancelled, %d orders issued: want exactly one winner", round, accepted, cancelled, len(issued))
		}
		if (accepted == 1) != (got.Status == ticketing.TransferAccepted) || (cancelled == 1) != (got.Status == ticketing.TransferCancelled) {
			t.Fatalf("round %d: stored status %s after %d accepted, %d cancelled", round, got.Status, accepted, cancelled)
		}
	}
}

// A refund and a transfer of one of the order's tickets started at the
// same instant: exactly one goes ahead, the other is 409. Then, with a
// transfer pending, a refund racing its accept is 409 and the accept wins.
func TestTransfers_RefundRacingATransferExactlyOneWins(t *testing.T) {
	t.Parallel()
	s := newDoorStack(t)
	trs, rec := s.transfers()
	ctx := context.Background()
	for round := range 6 {
		o, _, _ := s.paid(t, fmt.Sprintf("refund-transfer-%d", round), 2)
		var refundErr, transferErr error
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() { <-start; _, refundErr = s.sales.Orders.RefundOrder(ctx, s.tenant, o.ID, nil) })
		wg.Go(func() {
			<-start
			_, transferErr = trs.Create(ctx, ticketing.Caller{Tenant: s.tenant, KeyID: "key_door"}, o.Tickets[1].Number,
				ticketing.TransferRequest{ToEmail: "friend@example.com"})
		})
		close(start)
		wg.Wait()
		if (refundErr == nil) == (transferErr == nil) {
			t.Fatalf("round %d: refund %v, transfer %v: want exactly one to go ahead", round, refundErr, transferErr)
		}
		for _, err := range []error{refundErr, transferErr} {
			if err != nil && !ticketing.IsCode(err, ticketing.CodeConflict) {
				t.Fatalf("round %d: the loser's error %v, want 409 conflict", round, err)
			}
		}
	}
	o, _, _ := s.paid(t, "accept-refund", 1)
	tr := s.offer(t, trs, o.Tickets[0].Number)
	var refundErr, acceptErr error
	var wg sync.WaitGroup
	start := make(chan struct{})
	wg.Go(func() { <-start; _, refundErr = s.sales.Orders.RefundOrder(ctx, s.tenant, o.ID, nil) })
	wg.Go(func() { <-start; _, _, acceptErr = trs.Accept(ctx, tr.ID, rec.Token(t, tr.ID)) })
	close(start)
	wg.Wait()
	if acceptErr != nil || !ticketing.IsCode(refundErr, ticketing.CodeConflict) {
		t.Fatalf("accept %v, refund %v: want the accept, and the refund 409", acceptErr, refundErr)
	}
	if got, err := s.sales.Orders.Order(ctx, s.tenant, o.ID); err != nil || got.Refund != nil {
		t.Fatalf("the order after the refused refund: %+v %v", got, err)
	}
}

// After a transfer: the old ticket shows transferred, its order and the
// transferred-in order refuse refunds as the contract says, the door's
// counts have the new ticket in place of the old, and a transferred ticket
// cannot be transferred again; the transferred-in ticket can.
func TestTransfers_StateAfterAcceptRefundRulesAndCounts(t *testing.T) {
	t.Parallel()
	s := newDoorStack(t)
	trs, rec := s.transfers()
	ctx := context.Background()
	o, _, _ := s.paid(t, "after", 2)
	before, err := s.in.Stats(ctx, s.tenant, ticketingtest.EventID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := s.offer(t, trs, o.Tickets[0].Number)
	done, n, err := trs.Accept(ctx, tr.ID, rec.Token(t, tr.ID))
	if err != nil {
		t.Fatal(err)
	}
	if n.Payment.Provider != ticketing.PaymentTransferIn || n.TotalPrice != 0 || n.Buyer.Email != "friend@example.com" ||
		n.TransferredFrom.OrderID != o.ID || n.Tickets[0].Number != done.NewTicketNumber {
		t.Fatalf("transferred-in order %+v", n)
	}
	tickets, err := s.sales.Orders.Tickets(ctx, s.tenant, o.ID)
	if err != nil || tickets.Tickets[0].Status != ticketing.TicketTransferred || tickets.Tickets[1].Status != ticketing.TicketIssued {
		t.Fatalf("old order's tickets %+v %v", tickets, err)
	}
	if _, err := s.sales.Orders.RefundOrder(ctx, s.tenant, o.ID, nil); !ticketing.IsCode(err, ticketing.CodeConflict) {
		t.Errorf("refund of the order a ticket was transferred from: %v, want 409", err)
	}
	if _, err := s.sales.Orders.RefundOrder(ctx, s.tenant, n.ID, nil); !ticketing.IsCode(err, ticketing.CodeUnsupported) {
		t.Errorf("refund of the transferred-in order: %v, want 422 unsupported", err)
	}
	after, err := s.in.Stats(ctx, s.tenant, ticketingtest.EventID, "", nil)
	if err != nil || after.Sold != before.Sold {
		t.Errorf("sold %d before the transfer, %d after (%v): want the same", before.Sold, after.Sold, err)
	}
	// The old ticket stays on the admission list as transferred, so an
	// offline door refuses its code too; the new one is valid.
	page, err := s.in.AdmissionList(ctx, s.tenant, ticketing.AdmissionQuery{EventID: ticketingtest.EventID, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, e := range page.Data {
		states[e.TicketNumber] = e.State
	}
	if states[o.Tickets[0].Number] != ticketcode.StateTransferred || states[done.NewTicketNumber] != ticketcode.StateValid {
		t.Errorf("admission list: old ticket %q, new %q; want transferred and valid", states[o.Tickets[0].Number], states[done.NewTicketNumber])
	}
	// An offline scan of the old ticket uploaded after the accept is
	// refused as transferred (and recorded), not retried as a lost race.
	scanned, err := s.in.Batch(ctx, s.tenant, ticketing.ScanBatch{Gate: "north", KeyID: "key_door",
		Scans: []ticketing.OfflineScan{{ClientScanID: "scn-after-transfer", Code: o.Tickets[0].Number, ScannedAt: time.Now().UTC().Add(-time.Minute)}}})
	if err != nil || len(scanned) != 1 || scanned[0].Result != ticketing.ResultTransferred {
		t.Errorf("offline scan of the transferred ticket: %+v %v, want transferred", scanned, err)
	}
	if _, err := trs.Create(ctx, ticketing.Caller{Tenant: s.tenant, KeyID: "key_door"}, o.Tickets[0].Number,
		ticketing.TransferRequest{ToEmail: "third@example.com"}); !ticketing.IsCode(err, ticketing.CodeConflict) {
		t.Errorf("transfer of a transferred ticket: %v, want 409", err)
	}
	if _, err := trs.Create(ctx, ticketing.Caller{Tenant: s.tenant, KeyID: "key_door"}, done.NewTicketNumber,
		ticketing.TransferRequest{ToEmail: "third@example.com"}); err != nil {
		t.Errorf("transfer of the transferred-in ticket: %v", err)
	}
	other := ticketing.Tenant{OrganizerID: "org_other", Environment: ticketing.EnvTest}
	if _, err := trs.Get(ctx, other, tr.ID); !errors.Is(err, ticketing.ErrNotFound) {
		t.Errorf("another organizer reads the transfer: %v", err)
	}
}
