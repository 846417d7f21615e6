// Package dash wires the organizer dashboard over an app: only the
// dashboard's function and the local runner import it, so the API
// functions link no html/template.
package dash

import (
	"net/http"
	"strings"

	"tix/internal/app"
	"tix/internal/dashboard"
	"tix/internal/dashboard/scanner"
	"tix/internal/payment"
	"tix/internal/store"
	"tix/internal/ticketing"
)

// NewDashboard builds the organizer dashboard over a's store and services:
// its keys and webhook endpoints change through the same store methods
// and webhook service as the API and tixctl, its emails go through a's
// email pipeline.
func NewDashboard(a *app.App) *dashboard.Server {
	// Its refunds lock the tickets as the API's do (an admitted ticket's
	// order is not refunded), and its tickets show used ones.
	app.EnableDoor(a)
	s := dashboard.DefaultSettings
	s.Path, s.OpenSignup = a.Config.Dashboard.Path, a.Config.Dashboard.OpenSignup
	s.PublicURL = a.Config.Payments.PublicURL
	s.SecretOverlap = a.Config.Webhooks.SecretOverlap
	s.EdgeSecret = a.Config.Edge.Secret
	s.PasskeyRPID, s.PasskeyOrigins = a.Config.Dashboard.WebAuthnRPID, a.Config.Dashboard.WebAuthnOrigins
	d := &dashboard.Server{
		Accounts: a.Store.Accounts(), Organizers: a.Store.Organizers, Keys: a.Store.Keys, Webhooks: a.Webhooks, Replays: a.Webhooks,
		Sales: store.TallyOf(a.Store), Catalog: a.Store.Catalog, Door: a.Store.Tickets(), Onsales: a.Waitroom,
		Counter: a.Store.Keys, Passkeys: a.Store.Passkeys(), Clock: a.Webhooks.Clock, Settings: s,
		Payments: a.Store.Payments, Identities: a.Store.Emails,
		Terminals: &payment.Terminals{Accounts: a.Store.Payments, Box: a.Webhooks.Box, BaseURL: a.Config.Payments.TBankURL,
			HTTP: &http.Client{Timeout: a.Config.Payments.TBankTimeout}, Now: a.Webhooks.Clock.Now},
	}
	d.Orders, d.OrderWebhooks = a.Sales.Orders, a.Webhooks
	d.Search = &ticketing.OrderSearch{Orders: a.Sales.Orders, Finder: a.Store.Search}
	d.Scanner = &scanner.Server{Keys: a.Store.Keys, CheckIns: a.CheckIns, TicketKeys: a.TicketKeys, Events: a.Store.Catalog,
		Box: a.Webhooks.Box, Clock: a.Webhooks.Clock, Base: s.Path, Secure: !strings.HasPrefix(s.PublicURL, "http://")}
	if a.Email != nil {
		d.Mail = a.Email
		d.OrderEmails = a.Email
	}
	return d
}
