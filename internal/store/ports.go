package store

import "tix/internal/ticketing"

// The store is every adapter the domain needs from the table.
var (
	_ ticketing.SalesStore       = (*Store)(nil)
	_ ticketing.SalesCatalog     = (*Store)(nil)
	_ ticketing.IdempotencyStore = (*Store)(nil)
	_ ticketing.ClientLimits     = (*Store)(nil)
	_ ticketing.HoldStore        = (*Store)(nil)
	_ ticketing.OrderStore       = (*Store)(nil)
	_ ticketing.DueTimerStore    = (*Store)(nil)
	_ ticketing.CatalogStore     = (*Store)(nil)
)
