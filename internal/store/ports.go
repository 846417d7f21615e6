package store

import "tix/internal/ticketing"

var (
	_ ticketing.SalesStore   = (*Store)(nil)
	_ ticketing.CatalogStore = (*Store)(nil)
)
