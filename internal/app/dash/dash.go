// Package dash wires the organizer dashboard over an app: only the
// dashboard's function and the local runner import it, so the API
// functions link no html/template.
package dash

import (
	"tix/internal/app"
	"tix/internal/dashboard"
	"tix/internal/store"
	"tix/internal/ticketing"
)

// NewDashboard builds the organizer dashboard over a's store and services:
// its keys and webhook endpoints change through the same store methods
// and webhook service as the API and tixctl, its emails go through a's
// email pipeline.
func NewDashboard(a *app.App) *dashboard.Server {
	s := dashboard.DefaultSettings
	s.Path, s.OpenSignup = a.Config.Dashboard.Path, a.Config.Dashboard.OpenSignup
	s.PublicURL = a.Config.Payments.PublicURL
	s.SecretOverlap = a.Config.Webhooks.SecretOverlap
	s.PasskeyRPID, s.PasskeyOrigins = a.Config.Dashboard.WebAuthnRPID, a.Config.Dashboard.WebAuthnOrigins
	d := &dashboard.Server{
		Accounts: a.Store.Accounts(), Organizers: a.Store.Organizers, Keys: a.Store.Keys, Webhooks: a.Webhooks,
		Sales: store.TallyOf(a.Store), Catalog: a.Store.Catalog,
		Counter: a.Store.Keys, Passkeys: a.Store.Passkeys(), Clock: a.Webhooks.Clock, Settings: s,
	}
	d.Orders, d.OrderWebhooks = a.Sales.Orders, a.Webhooks
	d.Search = &ticketing.OrderSearch{Orders: a.Sales.Orders, Finder: a.Store.Search}
	if a.Email != nil {
		d.Mail = a.Email
		d.OrderEmails = a.Email
	}
	return d
}
