package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"tix/internal/dashboard/account"
	"tix/internal/emailjobs"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// The Orders pages (docs/dashboard.md, Orders): the list with the
// contract's filters and a search by order id, buyer email or ticket
// number; an order's page with its timeline; refund (after a confirmation
// page) and resend tickets. Reads and changes go through the ticketing
// services the API uses (GET /orders, GET /orders/{id}, POST
// /orders/{id}/refund) and the email pipeline tixctl's resend-tickets uses.

// Orders is the ticketing orders' service (*ticketing.Orders), as the API uses it.
type Orders interface {
	Orders(ctx context.Context, q ticketing.OrderQuery) (*ticketing.OrderPage, error)
	Order(ctx context.Context, t ticketing.Tenant, id string) (*ticketing.Order, error)
	RefundOrder(ctx context.Context, t ticketing.Tenant, id string, reason *string) (*ticketing.Refund, error)
}

// OrderSearch finds orders by buyer email (one indexed query) or ticket
// number (*ticketing.OrderSearch).
type OrderSearch interface {
	ByBuyer(ctx context.Context, t ticketing.Tenant, email string, limit int) ([]*ticketing.Order, error)
	ByTicket(ctx context.Context, t ticketing.Tenant, number string) (*ticketing.Order, error)
}

// OrderWebhooks are the webhooks sent for an order (*webhook.Service).
type OrderWebhooks interface {
	OrderDeliveries(ctx context.Context, org string, env ticketing.Environment, orderID string) ([]*webhook.Delivery, error)
}

// OrderEmails are an order's emails and the resend of its tickets
// (*emailjobs.Service, as GET /orders/{id} and tixctl orders resend-tickets use it).
type OrderEmails interface {
	OrderStatus(ctx context.Context, orderID string) ([]emailjobs.JobView, error)
	Resend(ctx context.Context, orderID, callID string) (*emailjobs.Job, bool, error)
}

// ordersPageSize is the list's page (the contract's default).
const ordersPageSize = 20

func (s *Server) ordersRoutes(mux *http.ServeMux, o string) {
	mux.HandleFunc("GET "+o+"/orders", s.inOrg(account.ReadOrders, s.ordersPage))
	mux.HandleFunc("GET "+o+"/orders/{id}", s.inOrg(account.ReadOrders, s.orderPage))
	mux.HandleFunc("GET "+o+"/orders/{id}/refund", s.inOrg(account.ManageOrders, s.refundConfirm))
	mux.HandleFunc("POST "+o+"/orders/{id}/refund", s.inOrg(account.ManageOrders, s.refund))
	mux.HandleFunc("POST "+o+"/orders/{id}/resend", s.inOrg(account.ManageOrders, s.resend))
}

// orderRow is an order as the list shows it.
type orderRow struct {
	*ticketing.Order
	Total string
}

type ordersData struct {
	Orders   []orderRow
	Statuses []ticketing.OrderStatus
	Searched bool   // a search answered, not the filtered list
	Next     string // the next page's URL, "" on the last
}

func (s *Server) ordersPage(w http.ResponseWriter, r *http.Request, o *orgReq) {
	q := r.URL.Query()
	for _, k := range []string{"q", "status", "event_id", "created_after", "created_before"} {
		o.v.Form[k] = strings.TrimSpace(q.Get(k))
	}
	d := ordersData{Statuses: []ticketing.OrderStatus{ticketing.OrderPending, ticketing.OrderPaid, ticketing.OrderCancelled, ticketing.OrderRefunded}}
	var found []*ticketing.Order
	var err error
	if o.v.Form["q"] != "" {
		d.Searched = true
		found, err = s.searchOrders(r.Context(), o, o.v.Form["q"])
	} else {
		var page *ticketing.OrderPage
		if page, err = s.listOrders(r.Context(), o, q); err == nil {
			found = page.Orders
			if page.HasMore {
				next := url.Values{"cursor": {page.NextCursor}}
				for _, k := range []string{"status", "event_id", "created_after", "created_before"} {
					if v := o.v.Form[k]; v != "" {
						next.Set(k, v)
					}
				}
				d.Next = o.v.OrgPath("/orders?" + next.Encode())
			}
		}
	}
	if err != nil {
		s.orderError(w, r, err, func(msg string, status int) {
			o.v.Error, o.v.Data = msg, d
			s.render(w, r, status, "orders", o.v)
		})
		return
	}
	for _, x := range found {
		d.Orders = append(d.Orders, orderRow{Order: x, Total: formatMoney(x.TotalPrice, x.Currency)})
	}
	o.v.Data = d
	s.render(w, r, http.StatusOK, "orders", o.v)
}

// searchOrders answers the search box: an order id (ord_...), a ticket
// number (TIX-...) or a buyer's email address.
func (s *Server) searchOrders(ctx context.Context, o *orgReq, q string) ([]*ticketing.Order, error) {
	t := ticketing.Tenant{OrganizerID: o.org(), Environment: o.env()}
	var x *ticketing.Order
	var err error
	switch {
	case strings.Contains(q, "@"):
		return s.Search.ByBuyer(ctx, t, q, ordersPageSize)
	case strings.HasPrefix(q, "ord_"):
		x, err = s.Orders.Order(ctx, t, q)
	case strings.HasPrefix(strings.ToUpper(q), "TIX-"):
		x, err = s.Search.ByTicket(ctx, t, q)
	default:
		return nil, ticketing.Invalid("q", "search by an order id (ord_…), a ticket number (TIX-…) or the buyer's email address")
	}
	if ticketing.IsCode(err, ticketing.CodeNotFound) {
		return nil, nil // nothing found is an empty list, not a missing page
	}
	if err != nil {
		return nil, err
	}
	return []*ticketing.Order{x}, nil
}

// listOrders is GET /orders with the page's filters: the same query and
// rules as the API (status enum, creation bounds inclusive, newest first).
// Dates are days in the organizer's time zone.
func (s *Server) listOrders(ctx context.Context, o *orgReq, q url.Values) (*ticketing.OrderPage, error) {
	oq := ticketing.OrderQuery{OrganizerID: o.org(), Environment: o.env(), Limit: ordersPageSize,
		Cursor: q.Get("cursor"), EventID: o.v.Form["event_id"], Status: ticketing.OrderStatus(o.v.Form["status"])}
	switch oq.Status {
	case "", ticketing.OrderPending, ticketing.OrderPaid, ticketing.OrderCancelled, ticketing.OrderRefunded:
	default:
		return nil, ticketing.Invalid("status", "status must be pending, paid, cancelled or refunded")
	}
	var err error
	if oq.CreatedAfter, err = day(o, "created_after", 0); err != nil {
		return nil, err
	}
	if oq.CreatedBefore, err = day(o, "created_before", 24*time.Hour-time.Second); err != nil {
		return nil, err
	}
	if oq.CreatedAfter != nil && oq.CreatedBefore != nil && oq.CreatedBefore.Before(*oq.CreatedAfter) {
		return nil, ticketing.Invalid("created_before", "created_before is earlier than created_after")
	}
	return s.Orders.Orders(ctx, oq)
}

// day is a date field (YYYY-MM-DD) as an instant of the organizer's time
// zone: its midnight plus add; nil when the field is empty.
func day(o *orgReq, field string, add time.Duration) (*time.Time, error) {
	v := o.v.Form[field]
	if v == "" {
		return nil, nil
	}
	d, err := time.ParseInLocation("2006-01-02", v, o.v.Loc)
	if err != nil {
		return nil, ticketing.Invalid(field, "%s must be a date like 2026-12-31", field)
	}
	t := d.Add(add)
	return &t, nil
}

// orderError shows a service's error on the page (show) with the API's
// status: invalid input 400, conflicts 409, an unsupported refund 422, the
// provider's refusal 502; a missing order is 404.
func (s *Server) orderError(w http.ResponseWriter, r *http.Request, err error, show func(msg string, status int)) {
	status := map[ticketing.Code]int{ticketing.CodeInvalidRequest: http.StatusBadRequest, ticketing.CodeConflict: http.StatusConflict,
		ticketing.CodeUnsupported: http.StatusUnprocessableEntity, ticketing.CodePaymentProviderError: http.StatusBadGateway}
	var te *ticketing.Error
	switch {
	case !errors.As(err, &te):
		s.internal(w, r, err)
	case te.Code == ticketing.CodeNotFound:
		s.notFound(w, r)
	case status[te.Code] != 0:
		show(te.Message, status[te.Code])
	default:
		s.internal(w, r, err)
	}
}

// formatMoney writes minor units with two decimals and the currency.
func formatMoney(minor int64, currency string) string {
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	return fmt.Sprintf("%s%d.%02d %s", sign, minor/100, minor%100, currency)
}
