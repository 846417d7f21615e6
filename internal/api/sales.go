package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"tix/internal/auth"
	"tix/internal/ticketcode"
	"tix/internal/ticketing"
)

// salesCaller is the domain's view of the authenticated key; the domain
// charges a publishable key's ceiling through Admit once the request is valid.
func (s *Server) salesCaller(w http.ResponseWriter, r *http.Request) ticketing.Caller {
	c := callerOf(r.Context())
	return ticketing.Caller{Tenant: c.tenant(), KeyID: c.key.ID, Publishable: c.key.Type == auth.Publishable, IP: ticketing.ClientNetwork(clientIP(r)),
		Admit: func(context.Context) error { return s.chargeCeiling(w, r) }}
}

// idempotencyKey reads the Idempotency-Key header: 1-255 printable ASCII
// characters other than the comma. On AWS the Lambda adapter splits headers on
// commas (and API Gateway joins repeated headers with them), so a key with a
// comma would be one key here and several there: both refuse it alike.
func idempotencyKey(r *http.Request, required bool) (string, error) {
	vals := r.Header.Values("Idempotency-Key")
	if len(vals) == 0 {
		if required {
			return "", ticketing.Invalid("Idempotency-Key", "the Idempotency-Key header is required: send a unique value (a UUID) per order and reuse it when you retry that order")
		}
		return "", nil
	}
	k := vals[0]
	if len(vals) > 1 || k == "" || len(k) > 255 || strings.Contains(k, ",") {
		return "", ticketing.Invalid("Idempotency-Key", "Idempotency-Key must be one value of 1 to 255 printable ASCII characters without a comma (a UUID fits)")
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return "", ticketing.Invalid("Idempotency-Key", "Idempotency-Key must be printable ASCII")
		}
	}
	return k, nil
}

type holdSeatJSON struct {
	ReservationID string `json:"reservation_id"`
	SeatID        string `json:"seat_id"`
	Label         string `json:"label"`
	ZoneName      string `json:"zone_name"`
	ZoneColor     string `json:"zone_color"`
	TicketTierID  string `json:"ticket_tier_id"`
	Price         int64  `json:"price"`
}

type holdJSON struct {
	HoldID         string         `json:"hold_id"`
	ExpiresAt      string         `json:"expires_at"`
	TotalBasePrice int64          `json:"total_base_price"`
	Seats          []holdSeatJSON `json:"seats"`
}

func (s *Server) createHold(w http.ResponseWriter, r *http.Request) error {
	key, err := idempotencyKey(r, false)
	if err != nil {
		return err
	}
	var req ticketing.HoldRequest
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.EventID != nil {
		if _, err := s.admitted(r, *req.EventID, deref(req.OccurrenceID), ""); err != nil {
			return err
		}
	}
	h, err := s.Sales.Holds.CreateHold(r.Context(), s.salesCaller(w, r), key, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderHold(h))
	return nil
}

// renderHold is a hold on the wire (SeatHoldResponse).
func renderHold(h *ticketing.Hold) holdJSON {
	out := holdJSON{HoldID: h.ID, ExpiresAt: ts(h.ExpiresAt), TotalBasePrice: h.TotalBasePrice, Seats: []holdSeatJSON{}}
	for _, st := range h.Seats {
		out.Seats = append(out.Seats, holdSeatJSON{ReservationID: st.ReservationID, SeatID: st.SeatID, Label: st.Label,
			ZoneName: st.ZoneName, ZoneColor: st.ZoneColor, TicketTierID: st.TierID, Price: st.Price})
	}
	return out
}

func (s *Server) releaseHolds(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		ReservationIDs *[]string `json:"reservation_ids"`
	}
	if err := decodeJSON(r, &req); err != nil {
		return err
	}
	if req.ReservationIDs == nil {
		return ticketing.Invalid("reservation_ids", "reservation_ids is required")
	}
	n, err := s.Sales.Holds.ReleaseHolds(r.Context(), s.salesCaller(w, r), *req.ReservationIDs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]int{"released": n})
	return nil
}

// orderRequest is the body of POST /orders and /orders/preview. ticket_tier_id
// is accepted as another name of tier_id: one example in the contract uses it.
type orderRequest struct {
	ticketing.OrderRequest
	TicketTierID *string `json:"ticket_tier_id,omitempty"`
}

func decodeOrder(r *http.Request) (ticketing.OrderRequest, error) {
	var req orderRequest
	if err := decodeJSON(r, &req); err != nil {
		// encoding/json names a field of the embedded struct by its Go path
		// ("OrderRequest.quantity"); the client knows it as "quantity".
		var e *ticketing.Error
		if errors.As(err, &e) && strings.HasPrefix(e.Param, "OrderRequest.") {
			e.Param = strings.TrimPrefix(e.Param, "OrderRequest.")
			e.Message = strings.Replace(e.Message, "OrderRequest.", "", 1)
		}
		return req.OrderRequest, err
	}
	if req.TicketTierID != nil {
		if req.TierID != nil {
			return req.OrderRequest, ticketing.Invalid("ticket_tier_id", "send tier_id or its alias ticket_tier_id, not both")
		}
		req.TierID = req.TicketTierID
	}
	return req.OrderRequest, nil
}

type paymentJSON struct {
	QRImage   string  `json:"qr_image"`
	QRPayload string  `json:"qr_payload"`
	DeepLink  *string `json:"deep_link"`
	ExpiresAt *string `json:"expires_at"`
	Provider  string  `json:"provider"`
}

type orderCreatedJSON struct {
	ID          string      `json:"id"`
	Status      string      `json:"status"`
	Type        string      `json:"type"`
	Environment string      `json:"environment"`
	Currency    string      `json:"currency"`
	BasePrice   int64       `json:"base_price"`
	ServiceFee  int64       `json:"service_fee"`
	TotalPrice  int64       `json:"total_price"`
	Payment     paymentJSON `json:"payment"`
	PollToken   string      `json:"poll_token"`
	CreatedAt   string      `json:"created_at"`
}

func (s *Server) createOrder(w http.ResponseWriter, r *http.Request) error {
	key, err := idempotencyKey(r, true)
	if err != nil {
		return err
	}
	req, err := decodeOrder(r)
	if err != nil {
		return err
	}
	spent, err := s.orderAdmission(r, key, req)
	if err != nil {
		return err
	}
	res, err := s.Sales.Orders.CreateOrder(r.Context(), s.salesCaller(w, r), key, req)
	if err != nil {
		spent(err)
		return err
	}
	o := res.Order
	out := orderCreatedJSON{
		ID: o.ID, Status: string(o.Status), Type: o.Type, Environment: string(o.Environment), Currency: o.Currency,
		BasePrice: o.BasePrice, ServiceFee: o.ServiceFee, TotalPrice: o.TotalPrice, PollToken: res.PollToken,
		CreatedAt: ts(o.CreatedAt),
	}
	if p := o.Payment; p != nil {
		out.Payment = paymentJSON{QRImage: res.QRImage, QRPayload: p.Payload, DeepLink: strPtr(p.DeepLink),
			ExpiresAt: tsPtr(&p.ExpiresAt), Provider: p.Provider}
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, out)
	return nil
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type previewLineJSON struct {
	TierID    string `json:"tier_id"`
	Name      string `json:"name"`
	UnitPrice int64  `json:"unit_price"`
	Quantity  int    `json:"quantity"`
	Amount    int64  `json:"amount"`
}

type previewJSON struct {
	Type       string  `json:"type"`
	ItemName   *string `json:"item_name"`
	EventTitle *string `json:"event_title"`
	Quantity   int     `json:"quantity"`
	BasePrice  int64   `json:"base_price"`
	ServiceFee int64   `json:"service_fee"`
	TotalPrice int64   `json:"total_price"`
	Currency   string  `json:"currency"`
	FeeVersion int     `json:"fee_version"`
	IsFree     bool    `json:"is_free"`
	Breakdown  struct {
		Items    []previewLineJSON `json:"items"`
		Subtotal int64             `json:"subtotal"`
		Discount int64             `json:"discount"`
		Total    int64             `json:"total"`
	} `json:"breakdown"`
	Promo *promoJSON `json:"promo"`
}

type promoJSON struct {
	Code     string `json:"code"`
	Type     string `json:"type"`
	Value    int64  `json:"value"`
	Discount int64  `json:"discount"`
}

func (s *Server) previewOrder(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeOrder(r)
	if err != nil {
		return err
	}
	p, err := s.Sales.Pricing.Preview(r.Context(), s.salesCaller(w, r), req)
	if err != nil {
		return err
	}
	out := previewJSON{Type: ticketing.OrderTypeTicket, EventTitle: &p.Event.Title, Quantity: p.Quantity,
		BasePrice: p.BasePrice, TotalPrice: p.Total, Currency: ticketing.CurrencyOf(p.Event), FeeVersion: ticketing.FeeVersion,
		IsFree: p.Total == 0}
	out.ItemName = itemName(p.Lines)
	// Seats of one tier are one breakdown line, like a general-admission quantity.
	index := map[string]int{}
	for _, l := range p.Lines {
		i, ok := index[l.TierID]
		if !ok {
			i = len(out.Breakdown.Items)
			index[l.TierID] = i
			out.Breakdown.Items = append(out.Breakdown.Items, previewLineJSON{TierID: l.TierID, Name: l.TierName, UnitPrice: l.UnitPrice})
		}
		out.Breakdown.Items[i].Quantity += l.Quantity
		out.Breakdown.Items[i].Amount += l.UnitPrice * int64(l.Quantity)
	}
	out.Breakdown.Subtotal, out.Breakdown.Discount, out.Breakdown.Total = p.BasePrice, p.Discount, p.Total
	if p.Promo != nil {
		out.Promo = &promoJSON{Code: p.Promo.Code, Type: string(p.Promo.Type), Value: p.Promo.Value, Discount: p.Promo.Discount}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// itemName is the tier name, or the names of several tiers joined.
func itemName(lines []ticketing.OrderLine) *string {
	var names []string
	seen := map[string]bool{}
	for _, l := range lines {
		if !seen[l.TierName] {
			seen[l.TierName] = true
			names = append(names, l.TierName)
		}
	}
	if len(names) == 0 {
		return nil
	}
	n := strings.Join(names, ", ")
	return &n
}

// seesPII: buyer data only for a secret key holding orders:read (never a
// publishable key, never a poll token).
func seesPII(c *caller) bool {
	return c != nil && c.key.Type == auth.Secret && c.key.HasScope(auth.ScopeOrdersRead)
}

// getOrder serves GET /orders/{id} and POST /orders/{id}/check-status, with a
// key or with the order's poll token.
func (s *Server) getOrder(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	c := callerOf(r.Context())
	var o *ticketing.Order
	var err error
	if c == nil {
		token, _ := pollToken(r)
		if o, err = s.Sales.Orders.OrderByPollToken(r.Context(), id, token); err != nil {
			return err
		}
	} else if o, err = s.Sales.Orders.Order(r.Context(), c.tenant(), id); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	out := renderOrder(o, seesPII(c))
	if seesPII(c) && s.Email != nil {
		// The buyer's email status; a failure to read it leaves it out rather
		// than failing the order's status.
		if views, err := s.Email.OrderStatus(r.Context(), o.ID); err == nil {
			out.Email = &views
		} else {
			slog.WarnContext(r.Context(), "read the order's email status", "order_id", o.ID, "error", err)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) simulatePayment(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Outcome *string `json:"outcome"`
	}
	if err := decodeOptionalJSON(r, &req); err != nil {
		return err
	}
	c := callerOf(r.Context())
	outcome := ""
	if req.Outcome != nil {
		outcome = *req.Outcome
		if outcome == "" {
			return ticketing.Invalid("outcome", "outcome must be paid, cancelled or late_payment")
		}
	}
	o, err := s.Sales.Orders.Simulate(r.Context(), c.tenant(), r.PathValue("id"), outcome)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderOrder(o, seesPII(c)))
	return nil
}

// decodeOptionalJSON is decodeJSON for an optional body: none, or an empty one, is fine.
func decodeOptionalJSON(r *http.Request, v any) error {
	if r.ContentLength == 0 {
		return nil
	}
	if err := decodeJSON(r, v); err != nil && !isEmptyBody(err) {
		return err
	}
	return nil
}

func isEmptyBody(err error) bool {
	var e *ticketing.Error
	return errors.As(err, &e) && strings.HasPrefix(e.Message, "request body is empty")
}

// ticketSeatJSON is a ticket's seat on the wire (one shape with the
// admission list's).
type ticketSeatJSON = ticketcode.Seat

// renderTicketSeat is a ticket's seat on the wire (nil: general admission).
func renderTicketSeat(st *ticketing.SeatRef) *ticketSeatJSON {
	if st == nil {
		return nil
	}
	code := st.SeatID
	return &ticketSeatJSON{Label: st.Label, ZoneName: st.ZoneName, Row: st.Row, Number: st.Number, SeatCode: &code}
}

type issuedTicketJSON struct {
	TicketNumber string          `json:"ticket_number"`
	Status       string          `json:"status"`
	Seat         *ticketSeatJSON `json:"seat"`
	QRPayload    string          `json:"qr_payload"` // the ticket's own signed code (docs/door.md)
}

type orderTicketsJSON struct {
	OrderID      string             `json:"order_id"`
	Status       string             `json:"status"`
	EventID      *string            `json:"event_id"`
	Quantity     int                `json:"quantity"`
	TicketNumber *string            `json:"ticket_number"`
	QRPayload    *string            `json:"qr_payload"`
	Tickets      []issuedTicketJSON `json:"tickets"`
}

func (s *Server) getTickets(w http.ResponseWriter, r *http.Request) error {
	o, err := s.Sales.Orders.Tickets(r.Context(), callerOf(r.Context()).tenant(), r.PathValue("id"))
	if err != nil {
		return err
	}
	qr, codes, err := s.ticketCodes(r.Context(), o)
	if err != nil {
		return err
	}
	out := orderTicketsJSON{OrderID: o.ID, Status: string(o.Status), EventID: strPtr(o.EventID), Quantity: o.Quantity,
		TicketNumber: strPtr(o.TicketNumber), QRPayload: &qr, Tickets: []issuedTicketJSON{}}
	for _, t := range o.Tickets {
		it := issuedTicketJSON{TicketNumber: t.Number, Status: t.Status, Seat: renderTicketSeat(t.Seat), QRPayload: codes[t.Number]}
		out.Tickets = append(out.Tickets, it)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, out)
	return nil
}

// ticketCodes are the order's signed codes: the order's and each ticket's.
func (s *Server) ticketCodes(ctx context.Context, o *ticketing.Order) (string, map[string]string, error) {
	if s.TicketKeys == nil {
		order, codes := o.UnsignedCodes()
		return order, codes, nil
	}
	return s.TicketKeys.TicketCodes(ctx, o)
}

type refundJSON struct {
	ID          string  `json:"id"`
	OrderID     string  `json:"order_id"`
	Status      string  `json:"status"`
	Amount      int64   `json:"amount"`
	Currency    string  `json:"currency"`
	Reason      *string `json:"reason"`
	CreatedAt   string  `json:"created_at"`
	CompletedAt *string `json:"completed_at"`
}

func renderRefund(orderID string, rf *ticketing.Refund) refundJSON {
	return refundJSON{ID: rf.ID, OrderID: orderID, Status: string(rf.Status), Amount: rf.Amount, Currency: rf.Currency,
		Reason: rf.Reason, CreatedAt: ts(rf.CreatedAt), CompletedAt: tsPtr(rf.CompletedAt)}
}

func (s *Server) refundOrder(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Reason *string `json:"reason"`
	}
	if err := decodeOptionalJSON(r, &req); err != nil {
		return err
	}
	id := r.PathValue("id")
	rf, err := s.Sales.Orders.RefundOrder(r.Context(), callerOf(r.Context()).tenant(), id, req.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderRefund(id, rf))
	return nil
}

func (s *Server) getRefund(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	rf, err := s.Sales.Orders.LatestRefund(r.Context(), callerOf(r.Context()).tenant(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, renderRefund(id, rf))
	return nil
}

func (s *Server) listOrders(w http.ResponseWriter, r *http.Request) error {
	c := callerOf(r.Context())
	q := queryOf(r)
	var err error
	oq := ticketing.OrderQuery{OrganizerID: c.key.OrganizerID, Environment: c.key.Environment, Cursor: q.str("cursor"), EventID: q.str("event_id")}
	if oq.Limit, err = q.limit(); err != nil {
		return err
	}
	status, err := q.enum("status", "", "pending", "paid", "cancelled", "refunded")
	if err != nil {
		return err
	}
	oq.Status = ticketing.OrderStatus(status)
	if oq.CreatedAfter, err = q.time("created_after"); err != nil {
		return err
	}
	if oq.CreatedBefore, err = q.time("created_before"); err != nil {
		return err
	}
	if oq.CreatedAfter != nil && oq.CreatedBefore != nil && oq.CreatedBefore.Before(*oq.CreatedAfter) {
		return ticketing.Invalid("created_before", "created_before is earlier than created_after")
	}
	page, err := s.Sales.Orders.Orders(r.Context(), oq)
	if err != nil {
		return err
	}
	out := pageJSON[orderStatusJSON]{Data: []orderStatusJSON{}, HasMore: page.HasMore, NextCursor: strPtr(page.NextCursor)}
	pii := seesPII(c)
	for _, o := range page.Orders {
		out.Data = append(out.Data, renderOrder(o, pii))
	}
	w.Header().Set("Cache-Control", "no-store") // buyers' names, emails and phones
	writeJSON(w, http.StatusOK, out)
	return nil
}
