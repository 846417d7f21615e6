package inmem_test

import (
	"testing"

	"tix/internal/dashboard/account"
	"tix/internal/dashboard/account/passkeytest"
	"tix/internal/inmem"
)

// The in-memory passkeys pass the same suite as the DynamoDB store's.
func TestPasskeys_Conformance(t *testing.T) {
	passkeytest.Run(t, func(*testing.T) account.Passkeys { return inmem.NewPasskeys() })
}
