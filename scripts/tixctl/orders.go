package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"tix/internal/emailjobs"
	"tix/internal/ticketing"
)

// orderView is orders show: the operator's view of one order, its payment,
// refund and late payment. Its JSON shape is stable: every field is always
// present, null when it does not apply.
type orderView struct {
	ID           string            `json:"id"`
	OrganizerID  string            `json:"organizer_id"`
	Environment  string            `json:"environment"`
	Status       string            `json:"status"`
	EventID      string            `json:"event_id"`
	EventTitle   string            `json:"event_title"`
	Quantity     int               `json:"quantity"`
	TotalPrice   int64             `json:"total_price"`
	Currency     string            `json:"currency"`
	BuyerEmail   string            `json:"buyer_email"`
	CreatedAt    time.Time         `json:"created_at"`
	ExpiresAt    time.Time         `json:"expires_at"`
	PaidAt       *time.Time        `json:"paid_at"`
	CancelledAt  *time.Time        `json:"cancelled_at"`
	CancelReason *string           `json:"cancel_reason"`
	Tickets      int               `json:"tickets"`
	Payment      *orderPayment     `json:"payment"`
	Refund       *orderRefund      `json:"refund"`
	LatePayment  *orderLatePayment `json:"late_payment"`
	// OutsideRefund flags money returned at the bank, outside tix: kind full
	// (the order was refunded with it) or partial (the order stays paid: the
	// operator decides).
	OutsideRefund *orderOutsideRefund `json:"outside_refund"`
	// Email is the buyer's emails (tickets, refund, resends), oldest first.
	Email []emailjobs.JobView `json:"email"`
}

type orderPayment struct {
	Provider  string    `json:"provider"`
	ID        string    `json:"id"`
	ExpiresAt time.Time `json:"expires_at"`
}

type orderRefund struct {
	ID          string     `json:"id"`
	Status      string     `json:"status"`
	Amount      int64      `json:"amount"`
	CreatedAt   time.Time  `json:"created_at"`
	CompletedAt *time.Time `json:"completed_at"`
}

// orderLatePayment is money that reached the order after it was cancelled:
// outcome reinstated, refund_pending or refunded.
type orderLatePayment struct {
	PaymentID    string     `json:"payment_id"`
	Outcome      string     `json:"outcome"`
	DetectedAt   time.Time  `json:"detected_at"`
	CancelledAt  *time.Time `json:"cancelled_at"`
	CancelReason string     `json:"cancel_reason"`
	RefundedAt   *time.Time `json:"refunded_at"`
}

type orderOutsideRefund struct {
	Kind       string    `json:"kind"`
	PaymentID  string    `json:"payment_id"`
	DetectedAt time.Time `json:"detected_at"`
}

func orderViewOf(o *ticketing.Order) orderView {
	v := orderView{
		ID: o.ID, OrganizerID: o.OrganizerID, Environment: string(o.Environment), Status: string(o.Status),
		EventID: o.EventID, EventTitle: o.EventTitle, Quantity: o.Quantity, TotalPrice: o.TotalPrice,
		Currency: o.Currency, BuyerEmail: o.Buyer.Email, CreatedAt: o.CreatedAt.UTC(), ExpiresAt: o.ExpiresAt.UTC(),
		PaidAt: utc(o.PaidAt), CancelledAt: utc(o.CancelledAt), Tickets: len(o.Tickets), Email: []emailjobs.JobView{},
	}
	if o.CancelReason != "" {
		v.CancelReason = &o.CancelReason
	}
	if p := o.Payment; p != nil {
		v.Payment = &orderPayment{Provider: p.Provider, ID: p.ID, ExpiresAt: p.ExpiresAt.UTC()}
	}
	if r := o.Refund; r != nil {
		v.Refund = &orderRefund{ID: r.ID, Status: string(r.Status), Amount: r.Amount, CreatedAt: r.CreatedAt.UTC(), CompletedAt: utc(r.CompletedAt)}
	}
	if lp := o.LatePayment; lp != nil {
		v.LatePayment = &orderLatePayment{PaymentID: lp.PaymentID, Outcome: lp.Outcome, DetectedAt: lp.DetectedAt.UTC(),
			CancelledAt: utc(lp.CancelledAt), CancelReason: lp.CancelReason, RefundedAt: utc(lp.RefundedAt)}
	}
	if x := o.OutsideRefund; x != nil {
		v.OutsideRefund = &orderOutsideRefund{Kind: x.Kind, PaymentID: x.PaymentID, DetectedAt: x.DetectedAt.UTC()}
	}
	return v
}

func orDash(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func ordersShow(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("orders show", flag.ContinueOnError)
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 || rest[0] == "" {
		return usagef("orders show takes one order id")
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	o, err := st.Orders.GetOrder(ctx, rest[0])
	if err != nil {
		return err
	}
	v := orderViewOf(o)
	if v.Email, err = orderEmails(ctx, st, o.ID); err != nil {
		return err
	}
	return a.emit(v, func(w io.Writer) { v.print(w) })
}

func (v orderView) print(w io.Writer) {
	fmt.Fprintf(w, "order:     %s (%s, organizer %s)\nstatus:    %s\n", v.ID, v.Environment, v.OrganizerID, v.Status)
	fmt.Fprintf(w, "event:     %s (%s)\ntotal:     %s for %d ticket(s), buyer %s\n", v.EventTitle, v.EventID,
		money(v.TotalPrice, v.Currency), v.Quantity, v.BuyerEmail)
	fmt.Fprintf(w, "created:   %s, expires %s\npaid:      %s\n", formatTime(&v.CreatedAt), formatTime(&v.ExpiresAt), formatTime(v.PaidAt))
	if v.CancelledAt != nil {
		reason := "-"
		if v.CancelReason != nil {
			reason = *v.CancelReason
		}
		fmt.Fprintf(w, "cancelled: %s (%s)\n", formatTime(v.CancelledAt), reason)
	}
	if v.Payment != nil {
		fmt.Fprintf(w, "payment:   %s %s\n", v.Payment.Provider, v.Payment.ID)
	}
	fmt.Fprintf(w, "tickets:   %d\n", v.Tickets)
	if r := v.Refund; r != nil {
		fmt.Fprintf(w, "refund:    %s %s, %s, completed %s\n", r.ID, r.Status, money(r.Amount, v.Currency), formatTime(r.CompletedAt))
	}
	for _, e := range v.Email {
		fmt.Fprintf(w, "email:     %s %s after %d attempt(s), sent %s", e.Name, e.Status, e.Attempts, orDash(e.SentAt))
		if e.LastError != nil {
			fmt.Fprintf(w, " (last error: %s)", *e.LastError)
		}
		if e.Reason != nil {
			fmt.Fprintf(w, " (reason: %s)", *e.Reason)
		}
		fmt.Fprintln(w)
	}
	if x := v.OutsideRefund; x != nil {
		fmt.Fprintf(w, "REFUNDED AT THE BANK, outside tix: %s, payment %s (detected %s)", x.Kind, x.PaymentID, formatTime(&x.DetectedAt))
		if x.Kind == ticketing.OutsideRefundPartial {
			fmt.Fprint(w, "; the order stays paid: decide which tickets to void and tell the buyer")
		}
		fmt.Fprintln(w)
	}
	if lp := v.LatePayment; lp != nil {
		fmt.Fprintf(w, "late payment: %s of payment %s (detected %s; the order had been cancelled %s, %s; refunded %s)\n",
			lp.Outcome, lp.PaymentID, formatTime(&lp.DetectedAt), formatTime(lp.CancelledAt), lp.CancelReason, formatTime(lp.RefundedAt))
	}
}

// money is an amount in minor units as people read it: "2500.00 RUB".
func money(minor int64, currency string) string {
	return fmt.Sprintf("%d.%02d %s", minor/100, minor%100, currency)
}
