package store_test

import (
	"testing"
	"time"

	"tix/internal/clock"
	"tix/internal/store"
	"tix/internal/testenv"
	"tix/internal/ticketing/ticketingtest"
)

// The DynamoDB store passes the same conformance suite as the in-memory one.
func TestSalesStoreConformance(t *testing.T) {
	ticketingtest.RunSalesStore(t, func(t *testing.T) ticketingtest.Store {
		return conformance(testenv.Store(t, clock.NewFixed(time.Now())))
	})
}

// Order creation killed at each step recovers within the documented bound, on
// DynamoDB Local.
func TestCrashRecovery(t *testing.T) {
	ticketingtest.RunCrashRecovery(t, func(t *testing.T) ticketingtest.Store {
		return conformance(testenv.Store(t, clock.NewFixed(time.Now())))
	})
}

// conformance is st as the suite drives it.
func conformance(st *store.Store) ticketingtest.Store {
	return ticketingtest.Store{SalesStores: st.Sales(), Events: st.Catalog, Outbox: st.Webhooks, Finder: st.Search}
}
