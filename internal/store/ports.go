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

// Tickets implements ticketing.TicketStore and TicketKeys
// ticketing.TicketKeyStore; their tests assert it, not this file, so that
// the functions without the door (app.EnableDoor) do not link them.

// Sales is the storage roles of the sales services. Tickets (the tickets'
// door state) is left to app.EnableDoor, which the functions that refund or
// admit tickets call: the catalog function's bootstrap has no room for it.
func (s *Store) Sales() ticketing.SalesStores {
	return ticketing.SalesStores{Catalog: s.Catalog, Idempotency: s.Idempotency, Limits: s.Limits,
		HoldStore: s.Holds, OrderStore: s.Orders, Due: s.Due, Strays: s.Payments}
}
