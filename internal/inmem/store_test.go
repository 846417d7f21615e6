package inmem_test

import (
	"testing"

	"tix/internal/inmem"
	"tix/internal/ticketing/ticketingtest"
)

func TestSalesStoreConformance(t *testing.T) {
	ticketingtest.RunSalesStore(t, func(*testing.T) ticketingtest.Store { return inmem.New() })
}

// Order creation killed at each step recovers within the documented bound.
func TestCrashRecovery(t *testing.T) {
	ticketingtest.RunCrashRecovery(t, func(*testing.T) ticketingtest.Store { return inmem.New() })
}
