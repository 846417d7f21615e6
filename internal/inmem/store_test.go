package inmem_test

import (
	"testing"

	"tix/internal/inmem"
	"tix/internal/ticketing/ticketingtest"
)

func TestSalesStoreConformance(t *testing.T) {
	ticketingtest.RunSalesStore(t, func(*testing.T) ticketingtest.Store { return conformance(inmem.New()) })
}

// Order creation killed at each step recovers within the documented bound.
func TestCrashRecovery(t *testing.T) {
	ticketingtest.RunCrashRecovery(t, func(*testing.T) ticketingtest.Store { return conformance(inmem.New()) })
}

// conformance is st as the suite drives it.
func conformance(st *inmem.Store) ticketingtest.Store {
	return ticketingtest.Store{SalesStores: st.Sales(), Events: st.Catalog, Outbox: st.Outbox, Finder: st.Orders}
}
