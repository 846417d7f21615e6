package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"tix/internal/ticketing"
)

// strayView is one stray payment as payments strays shows it. Its JSON shape
// is stable: every field is always present, null when it does not apply.
type strayView struct {
	PaymentID   string     `json:"payment_id"`
	OrderID     string     `json:"order_id"`
	OrganizerID string     `json:"organizer_id"`
	Environment string     `json:"environment"`
	Amount      int64      `json:"amount"`
	Status      string     `json:"status"` // refund_pending | refunded
	DetectedAt  time.Time  `json:"detected_at"`
	NextCheckAt *time.Time `json:"next_check_at"`
	RefundedAt  *time.Time `json:"refunded_at"`
}

// paymentsStrays lists the stray payments, newest first: money that reached
// an order through a payment it does not own, or not for its amount, which
// tix refunds in full once and follows up until the bank reports it back.
func paymentsStrays(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("payments strays", flag.ContinueOnError)
	if err := parseNamed(fs, args); err != nil {
		return err
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	strays, err := st.Payments.ListStrays(ctx)
	if err != nil {
		return err
	}
	views := make([]strayView, 0, len(strays))
	for _, p := range strays {
		views = append(views, strayViewOf(p))
	}
	out := struct {
		Strays []strayView `json:"strays"`
	}{views}
	return a.emit(out, func(w io.Writer) {
		if len(views) == 0 {
			fmt.Fprintln(w, "No stray payments.")
			return
		}
		for _, v := range views {
			fmt.Fprintf(w, "%s  payment %s of order %s (%s, %s): %s, %s, detected %s, refunded %s\n", v.Status, v.PaymentID, v.OrderID,
				v.OrganizerID, v.Environment, money(v.Amount, "RUB"), v.Status, formatTime(&v.DetectedAt), formatTime(v.RefundedAt))
		}
	})
}

func strayViewOf(p ticketing.StrayPayment) strayView {
	return strayView{PaymentID: p.PaymentID, OrderID: p.OrderID, OrganizerID: p.OrganizerID, Environment: string(p.Environment),
		Amount: p.Amount, Status: p.Status, DetectedAt: p.DetectedAt.UTC(), NextCheckAt: utc(p.CheckAt), RefundedAt: utc(p.RefundedAt)}
}
