package webhook

import (
	"context"

	"tix/internal/ticketing"
)

// OrderDeliveries are the webhooks sent for one of an organizer
// environment's orders with the receivers' answers, oldest event first;
// another tenant's order has none.
func (s *Service) OrderDeliveries(ctx context.Context, org string, env ticketing.Environment, orderID string) ([]*Delivery, error) {
	ds, err := s.Store.OrderDeliveries(ctx, orderID)
	if err != nil {
		return nil, err
	}
	out := make([]*Delivery, 0, len(ds))
	for _, d := range ds {
		if d.OrganizerID == org && d.Environment == env {
			out = append(out, d)
		}
	}
	return out, nil
}
