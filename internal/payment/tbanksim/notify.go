package tbanksim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"time"

	"tix/internal/payment/tbank"
)

// ExtraField is the root field the ExtraField fault adds to notifications.
const ExtraField = "SimAddedField"

// Delivery is what became of one notification.
type Delivery struct {
	PaymentID string `json:"payment_id"`
	OrderID   string `json:"order_id"`
	Status    string `json:"status"`
	Body      string `json:"body"`
	Attempts  int    `json:"attempts"`
	Delivered bool   `json:"delivered"`
	Lost      bool   `json:"lost"`
}

type note struct {
	Delivery
	terminal string
	url      string
}

// outbox holds the notifications; its fields are guarded by Server.mu.
type outbox struct {
	s     *Server
	notes []*note
	held  map[string]*note // out-of-order fault: per payment, the note held back
}

func newOutbox(s *Server) *outbox { return &outbox{s: s, held: map[string]*note{}} }

// queue builds and signs p's notification for its current status and starts
// delivering it under the faults; s.mu is held.
func (o *outbox) queue(p *Payment, f Faults) {
	if p.NotificationURL == "" {
		return
	}
	n := o.build(p, f)
	o.notes = append(o.notes, n)
	delay := time.Duration(f.DelayMS) * time.Millisecond
	switch {
	case f.Lose:
		n.Lost = true
	case f.OutOfOrder:
		prev := o.held[p.ID]
		if prev == nil {
			o.held[p.ID] = n
			o.go_(func() { o.releaseHeld(p.ID, n) })
			return
		}
		delete(o.held, p.ID)
		o.go_(func() { o.deliver(n, delay); o.deliver(prev, 0) })
	default:
		o.go_(func() { o.deliver(n, delay) })
	}
	if f.Duplicate && !f.Lose {
		dup := &note{Delivery: Delivery{PaymentID: n.PaymentID, OrderID: n.OrderID, Status: n.Status, Body: n.Body},
			terminal: n.terminal, url: n.url}
		o.notes = append(o.notes, dup)
		o.go_(func() { o.deliver(dup, delay) })
	}
}

func (o *outbox) build(p *Payment, f Faults) *note {
	success, code := true, tbank.CodeOK
	if p.Status == tbank.StatusRejected {
		success, code = false, tbank.CodeInvalidParams
	}
	fields := map[string]any{
		"TerminalKey": p.TerminalKey, "OrderId": p.OrderID, "Success": success, "Status": p.Status,
		"PaymentId": json.Number(p.ID), "ErrorCode": code, "Amount": p.Amount,
	}
	if f.ExtraField {
		fields[ExtraField] = "a field tix has never seen"
	}
	raw, _ := json.Marshal(fields)
	signed, err := tbank.SignNotification(raw, o.s.terminals[p.TerminalKey])
	if err != nil { // cannot happen: raw is an object
		panic(err)
	}
	return &note{Delivery: Delivery{PaymentID: p.ID, OrderID: p.OrderID, Status: p.Status, Body: string(signed)},
		terminal: p.TerminalKey, url: p.NotificationURL}
}

func (o *outbox) go_(f func()) {
	o.s.wg.Add(1)
	go func() { defer o.s.wg.Done(); f() }()
}

// releaseHeld sends a held note after HoldFor if no newer one overtook it.
func (o *outbox) releaseHeld(paymentID string, n *note) {
	select {
	case <-time.After(o.s.opts.HoldFor):
	case <-o.s.ctx.Done():
		return
	}
	o.s.mu.Lock()
	still := o.held[paymentID] == n
	if still {
		delete(o.held, paymentID)
	}
	o.s.mu.Unlock()
	if still {
		o.deliver(n, 0)
	}
}

// deliver POSTs n until the receiver answers HTTP 200 with body OK, pausing
// NotifyRetry between attempts, until the simulator closes.
func (o *outbox) deliver(n *note, delay time.Duration) {
	if !o.sleep(delay) {
		return
	}
	for {
		ok := o.attempt(n)
		o.s.mu.Lock()
		n.Attempts++
		n.Delivered = n.Delivered || ok
		o.s.mu.Unlock()
		if ok || !o.sleep(o.s.opts.NotifyRetry) {
			return
		}
	}
}

func (o *outbox) sleep(d time.Duration) bool {
	if d <= 0 {
		return o.s.ctx.Err() == nil
	}
	select {
	case <-time.After(d):
		return true
	case <-o.s.ctx.Done():
		return false
	}
}

func (o *outbox) attempt(n *note) bool {
	req, err := http.NewRequestWithContext(o.s.ctx, http.MethodPost, n.url, bytes.NewReader([]byte(n.Body)))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := o.s.opts.HTTP.Do(req)
	if err != nil {
		o.s.opts.Log.Info("notification not delivered", "payment_id", n.PaymentID, "status", n.Status, "err", err)
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	ok := resp.StatusCode == http.StatusOK && string(body) == tbank.NotificationOK
	o.s.opts.Log.Info("notification attempt", "payment_id", n.PaymentID, "status", n.Status,
		"http_status", resp.StatusCode, "acknowledged", ok)
	return ok
}

// resend starts delivering terminal's lost notifications again and returns
// how many there were.
func (o *outbox) resend(terminal string) int {
	o.s.mu.Lock()
	defer o.s.mu.Unlock()
	count := 0
	for _, n := range o.notes {
		if n.terminal == terminal && n.Lost && !n.Delivered {
			n.Lost = false
			count++
			o.go_(func() { o.deliver(n, 0) })
		}
	}
	return count
}

// Deliveries returns every notification so far, in the order they were made.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Delivery, len(s.outbox.notes))
	for i, n := range s.outbox.notes {
		out[i] = n.Delivery
	}
	return out
}
