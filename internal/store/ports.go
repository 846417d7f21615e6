package store

import "tix/internal/ticketing"

// Each store type implements the ports its users declare.
var (
	_ ticketing.SalesCatalog     = (*Catalog)(nil)
	_ ticketing.CatalogStore     = (*Catalog)(nil)
	_ ticketing.IdempotencyStore = (*Idempotency)(nil)
	_ ticketing.ClientLimits     = (*Limits)(nil)
	_ ticketing.HoldStore        = (*Holds)(nil)
	_ ticketing.OrderStore       = (*Orders)(nil)
	_ ticketing.DueTimerStore    = (*Due)(nil)
)

// Sales is the storage roles of the sales services.
func (s *Store) Sales() ticketing.SalesStores {
	return ticketing.SalesStores{Catalog: s.Catalog, Idempotency: s.Idempotency, Limits: s.Limits,
		HoldStore: s.Holds, OrderStore: s.Orders, Due: s.Due, Strays: s.Payments}
}
