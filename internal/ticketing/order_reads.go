package ticketing

import (
	"context"
	"time"
)

func (s *Orders) reload(ctx context.Context, id string) (*Order, error) {
	return s.OrderStore.GetOrder(ctx, id)
}

// load reads the caller's order (another tenant's answers as a missing one) as of now.
func (s *Orders) load(ctx context.Context, t Tenant, id string) (*Order, error) {
	o, err := s.OrderStore.GetOrder(ctx, id)
	if err != nil {
		return nil, err
	}
	if o.OrganizerID != t.OrganizerID {
		return nil, NotFound("order")
	}
	if o.Environment != t.Environment {
		return nil, otherMode("order", id, o.Environment, t.Environment)
	}
	return s.current(ctx, o)
}

// otherMode is the 404 for an object of the caller's organizer in the other
// environment: it says so, as the object was read anyway (no extra read).
func otherMode(what, id string, has, key Environment) *Error {
	return Errorf(CodeNotFound, "%s %s not found: it exists in %s mode; this is a %s key. Use a %s key to reach it",
		what, id, has, key, has)
}

// Order is GET /orders/{id} with a key.
func (s *Orders) Order(ctx context.Context, t Tenant, id string) (*Order, error) {
	return s.load(ctx, t, id)
}

// OrderByPollToken is GET /orders/{id} with a poll token instead of a key.
func (s *Orders) OrderByPollToken(ctx context.Context, id, token string) (*Order, error) {
	if !s.CheckPollToken(id, token) {
		return nil, &Error{Code: CodeUnauthorized, Message: "invalid poll_token for this order"}
	}
	o, err := s.OrderStore.GetOrder(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.current(ctx, o)
}

// Orders is GET /orders: newest first; overdue pending orders are expired as they are read.
func (s *Orders) Orders(ctx context.Context, q OrderQuery) (*OrderPage, error) {
	q.Now = s.now()
	page, err := s.OrderStore.ListOrders(ctx, q)
	if err != nil {
		return nil, err
	}
	kept := page.Orders[:0]
	for _, o := range page.Orders {
		cur, err := s.current(ctx, o)
		if err != nil {
			return nil, err
		}
		if q.Status != "" && cur.Status != q.Status {
			continue
		}
		kept = append(kept, cur)
	}
	page.Orders = kept
	return page, nil
}

// OrderQuery is GET /orders.
type OrderQuery struct {
	OrganizerID   string
	Environment   Environment
	Limit         int
	Cursor        string
	Status        OrderStatus
	EventID       string
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	// Now decides the status filter of a pending order past its expiry: it is
	// cancelled as of now (reads apply the expiry), whether or not a timer ran.
	Now time.Time
}

// OrderPage is one page of orders, newest first.
type OrderPage struct {
	Orders     []*Order
	NextCursor string
	HasMore    bool
}
