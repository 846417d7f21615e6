package store_test

import (
	"testing"

	"tix/internal/dashboard/account"
	"tix/internal/dashboard/account/passkeytest"
	"tix/internal/testenv"
)

// The passkeys on DynamoDB Local pass the passkey stores' conformance suite.
func TestPasskeys_Conformance(t *testing.T) {
	passkeytest.Run(t, func(t *testing.T) account.Passkeys { return testenv.Store(t, nil).Passkeys() })
}
