package dashboard

import (
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"tix/internal/auth"
	"tix/internal/emailjobs"
	"tix/internal/ticketing"
)

// An order's page: its facts, its timeline (created, paid or cancelled, the
// webhooks sent for it with the receivers' answers, its emails with their
// status, the refund), and for owners and support the Refund (after a
// confirmation page) and Resend tickets buttons.

// orderStep is one line of an order's timeline.
type orderStep struct {
	At      *time.Time // nil: an email not sent (Waiting: not yet; else skipped or failed)
	Waiting bool
	What    string // a message key
	Detail  string // shown as is: an event type and endpoint, an email's kind
	Status  string
	Answer  string // the receiver's answer or the email's error
}

type orderData struct {
	Order        *ticketing.Order
	Total        string
	Timeline     []orderStep
	Partial      bool // the webhooks or emails could not be read
	Refundable   bool // paid, no refund yet: the Refund button
	Resendable   bool // paid and the email pipeline wired
	CallID       string
	RefundAmount string
}

// pathOrder reads the path's order of this organizer and environment; another
// one's, a missing one and a malformed id answer 404 alike.
func (s *Server) pathOrder(w http.ResponseWriter, r *http.Request, o *orgReq) *ticketing.Order {
	x, err := s.Orders.Order(r.Context(), ticketing.Tenant{OrganizerID: o.org(), Environment: o.env()}, r.PathValue("id"))
	if err != nil {
		s.orderError(w, r, err, func(string, int) { s.notFound(w, r) })
		return nil
	}
	return x
}

// postedOrder is pathOrder for an action: the order, and its form parsed.
func (s *Server) postedOrder(w http.ResponseWriter, r *http.Request, o *orgReq) *ticketing.Order {
	x := s.pathOrder(w, r, o)
	if x == nil {
		return nil
	}
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, http.StatusBadRequest, "err.form")
		return nil
	}
	return x
}

// orderDone are the messages a redirect after an action shows.
var orderDone = map[string]string{"refund": "orders.done_refund", "resend": "orders.done_resend", "resend_again": "orders.done_resend_again"}

func (s *Server) orderPage(w http.ResponseWriter, r *http.Request, o *orgReq) {
	if x := s.pathOrder(w, r, o); x != nil {
		o.v.Message = orderDone[r.URL.Query().Get("done")]
		s.showOrder(w, r, o, x, http.StatusOK)
	}
}

func (s *Server) showOrder(w http.ResponseWriter, r *http.Request, o *orgReq, x *ticketing.Order, status int) {
	d := orderData{Order: x, Total: formatMoney(x.TotalPrice, x.Currency), Timeline: orderSteps(x),
		Refundable: x.Status == ticketing.OrderPaid && x.Refund == nil,
		Resendable: x.Status == ticketing.OrderPaid && s.OrderEmails != nil,
		CallID:     auth.RandomString("abcdefghijklmnopqrstuvwxyz0123456789", 16)}
	ctx := r.Context()
	if s.OrderWebhooks != nil {
		ds, err := s.OrderWebhooks.OrderDeliveries(ctx, o.org(), o.env(), x.ID)
		if err != nil {
			slog.WarnContext(ctx, "read the order's webhooks", "order_id", x.ID, "error", err)
			d.Partial = true
		}
		for _, dl := range ds {
			answer := ""
			if dl.LastStatusCode != nil {
				answer = strconv.Itoa(*dl.LastStatusCode)
			}
			if dl.LastError != nil {
				answer = strings.TrimSpace(answer + " " + *dl.LastError)
			}
			at := dl.CreatedAt
			d.Timeline = append(d.Timeline, orderStep{At: &at, What: "orders.step_webhook", Detail: dl.EventType + " → " + dl.EndpointID,
				Status: string(dl.Status) + " (" + strconv.Itoa(dl.Attempts) + "/" + strconv.Itoa(dl.MaxAttempts) + ")", Answer: answer})
		}
	}
	if s.OrderEmails != nil {
		views, err := s.OrderEmails.OrderStatus(ctx, x.ID)
		if err != nil {
			slog.WarnContext(ctx, "read the order's emails", "order_id", x.ID, "error", err)
			d.Partial = true
		}
		for _, j := range views {
			st := orderStep{What: "orders.step_email", Detail: string(j.Kind), Status: string(j.Status),
				Waiting: j.Status == emailjobs.StatusPending || j.Status == emailjobs.StatusSending}
			if j.SentAt != nil {
				if t, err := time.Parse(time.RFC3339Nano, *j.SentAt); err == nil {
					st.At = &t
				}
			}
			for _, e := range []*string{j.LastError, j.Reason} {
				if e != nil {
					st.Answer = strings.TrimSpace(st.Answer + " " + *e)
				}
			}
			d.Timeline = append(d.Timeline, st)
		}
	}
	sort.SliceStable(d.Timeline, func(i, j int) bool {
		a, b := d.Timeline[i].At, d.Timeline[j].At
		return a != nil && (b == nil || a.Before(*b))
	})
	o.v.Data = d
	s.render(w, r, status, "order", o.v)
}

// orderSteps are the order's own moments: created, paid, cancelled, the refund.
func orderSteps(x *ticketing.Order) []orderStep {
	created := x.CreatedAt
	steps := []orderStep{{At: &created, What: "orders.step_created", Detail: formatMoney(x.TotalPrice, x.Currency)}}
	if x.PaidAt != nil {
		steps = append(steps, orderStep{At: x.PaidAt, What: "orders.step_paid", Detail: x.TicketNumber})
	}
	if x.CancelledAt != nil {
		steps = append(steps, orderStep{At: x.CancelledAt, What: "orders.step_cancelled", Detail: x.CancelReason})
	}
	if rf := x.Refund; rf != nil {
		at := rf.CreatedAt
		steps = append(steps, orderStep{At: &at, What: "orders.step_refund", Detail: formatMoney(rf.Amount, rf.Currency), Status: string(rf.Status)})
		if rf.CompletedAt != nil {
			steps = append(steps, orderStep{At: rf.CompletedAt, What: "orders.step_refunded", Detail: formatMoney(rf.Amount, rf.Currency)})
		}
	}
	return steps
}

// refundConfirm is the confirmation page of a refund: what will be
// returned, an optional reason, and the button that posts it.
func (s *Server) refundConfirm(w http.ResponseWriter, r *http.Request, o *orgReq) {
	if x := s.pathOrder(w, r, o); x != nil {
		s.showRefund(w, r, o, x, http.StatusOK)
	}
}

func (s *Server) showRefund(w http.ResponseWriter, r *http.Request, o *orgReq, x *ticketing.Order, status int) {
	o.v.Data = orderData{Order: x, Total: formatMoney(x.TotalPrice, x.Currency)}
	s.render(w, r, status, "order_refund", o.v)
}

// refund refunds the order in full through the ticketing service, as POST
// /orders/{id}/refund does (its 409 and 422 cases are shown on the order's
// page), and records it in the audit log.
func (s *Server) refund(w http.ResponseWriter, r *http.Request, o *orgReq) {
	x := s.postedOrder(w, r, o)
	if x == nil {
		return
	}
	var reason *string
	if v := strings.TrimSpace(r.PostForm.Get("reason")); v != "" {
		reason = &v
	}
	o.v.Form["reason"] = r.PostForm.Get("reason")
	t := ticketing.Tenant{OrganizerID: o.org(), Environment: o.env()}
	rf, err := s.Orders.RefundOrder(r.Context(), t, x.ID, reason)
	if err != nil {
		s.orderError(w, r, err, func(msg string, status int) {
			o.v.Error = msg
			if status == http.StatusBadRequest {
				s.showRefund(w, r, o, x, status)
				return
			}
			if cur, err := s.Orders.Order(r.Context(), t, x.ID); err == nil {
				x = cur
			}
			s.showOrder(w, r, o, x, status)
		})
		return
	}
	s.did(r, o, "order.refund", x.ID, formatMoney(rf.Amount, rf.Currency))
	s.redirect(w, r, "/o/"+o.org()+"/"+string(o.env())+"/orders/"+x.ID+"?done=refund")
}

// resend sends the paid order's tickets to its buyer again, through the
// email pipeline as tixctl orders resend-tickets does: once per call id
// (the page's form carries one, so a double submit sends once).
func (s *Server) resend(w http.ResponseWriter, r *http.Request, o *orgReq) {
	x := s.postedOrder(w, r, o)
	if x == nil {
		return
	}
	if s.OrderEmails == nil {
		o.v.Message = "orders.no_email"
		s.showOrder(w, r, o, x, http.StatusServiceUnavailable)
		return
	}
	call := r.PostForm.Get("call_id")
	_, created, err := s.OrderEmails.Resend(r.Context(), x.ID, call)
	if err != nil {
		s.orderError(w, r, err, func(msg string, status int) { o.v.Error = msg; s.showOrder(w, r, o, x, status) })
		return
	}
	next := "resend_again"
	if created {
		next = "resend"
		s.did(r, o, "order.resend", x.ID, call)
	}
	s.redirect(w, r, "/o/"+o.org()+"/"+string(o.env())+"/orders/"+x.ID+"?done="+next)
}
