package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"tix/internal/clock"
	"tix/internal/config"
	"tix/internal/payment"
	"tix/internal/payment/tbank"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// PaymentAccounts reads organizers' acquiring terminals (store.Payments).
type PaymentAccounts interface {
	GetPaymentAccount(ctx context.Context, organizerID string) (*ticketing.PaymentAccount, error)
	PaymentAccountByTerminal(ctx context.Context, acquirer, terminalKey string) (*ticketing.PaymentAccount, error)
}

// NotificationPath is where T-Bank posts an organizer's notifications.
const NotificationPath = "/v1/payment-notifications/tbank"

// NewPayments is the providers of the configuration: the test provider, and
// the organizers' terminals when accounts (and the box that opens their
// passwords) are given; without them live orders get ErrNoLiveProvider.
func NewPayments(cfg config.Config, accounts PaymentAccounts, box webhook.SecretBox, c clock.Clock) *Payments {
	if c == nil {
		c = clock.System{}
	}
	return &Payments{Test: payment.NewTest(payment.TestOptions{RefundSettleAfter: cfg.RefundDelay}),
		Accounts: accounts, Box: box, Settings: cfg.Payments, Clock: c}
}

// Payments finds the SBP provider of an organizer's environment: the test
// provider for test orders, the organizer's own T-Bank terminal for live ones
// (its settings cached for AccountCache).
type Payments struct {
	Test     *payment.Test
	Accounts PaymentAccounts
	Box      webhook.SecretBox
	Settings config.Payments
	Clock    clock.Clock
	HTTP     *http.Client

	mu    sync.Mutex
	cache map[string]cachedLive
}

type cachedLive struct {
	live  *payment.Live
	until time.Time
}

// ErrNoTerminal: the organizer has connected no acquiring terminal.
var ErrNoTerminal = errors.New("the organizer has no T-Bank terminal connected (tixctl organizers connect-tbank)")

// Provider is ticketing.SalesDeps.Payments.
func (p *Payments) Provider(ctx context.Context, organizerID string, env ticketing.Environment) (ticketing.PaymentProvider, error) {
	if env != ticketing.EnvLive {
		return p.Test, nil
	}
	if p.Accounts == nil {
		return nil, ErrNoLiveProvider
	}
	now := p.Clock.Now()
	p.mu.Lock()
	c, ok := p.cache[organizerID]
	p.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.live, nil
	}
	if p.Settings.PublicURL == "" {
		return nil, errors.New("TIX_PUBLIC_URL is not set: the bank would have nowhere to send payment notifications")
	}
	acct, err := p.Accounts.GetPaymentAccount(ctx, organizerID)
	if ticketing.IsCode(err, ticketing.CodeNotFound) {
		return nil, ErrNoTerminal
	}
	if err != nil {
		return nil, err
	}
	live, err := p.live(acct)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.cache == nil {
		p.cache = map[string]cachedLive{}
	}
	p.cache[organizerID] = cachedLive{live: live, until: now.Add(p.Settings.AccountCache)}
	p.mu.Unlock()
	return live, nil
}

// live is the provider of one organizer's terminal.
func (p *Payments) live(a *ticketing.PaymentAccount) (*payment.Live, error) {
	if a.Acquirer != ticketing.AcquirerTBank {
		return nil, fmt.Errorf("organizer %s: acquirer %q is not supported", a.OrganizerID, a.Acquirer)
	}
	pw, err := p.Box.Open(a.SealedPassword, payment.PasswordAAD(a))
	if err != nil {
		return nil, fmt.Errorf("open the terminal password of organizer %s: %w", a.OrganizerID, err)
	}
	return &payment.Live{
		Client:          &tbank.Client{BaseURL: p.Settings.TBankURL, TerminalKey: a.TerminalKey, Password: pw, HTTP: p.HTTP},
		NotificationURL: p.Settings.PublicURL + NotificationPath,
		Timeout:         p.Settings.TBankTimeout, Taxation: a.Taxation, VAT: a.VAT,
	}, nil
}

// Notifications verifies T-Bank notifications against the terminals' passwords
// (terminals found, or not, cached for TerminalCache).
func (p *Payments) Notifications() *payment.TBankNotifications {
	return &payment.TBankNotifications{
		Account: func(ctx context.Context, terminalKey string) (*ticketing.PaymentAccount, error) {
			return p.Accounts.PaymentAccountByTerminal(ctx, ticketing.AcquirerTBank, terminalKey)
		},
		Password: func(a *ticketing.PaymentAccount) (string, error) {
			return p.Box.Open(a.SealedPassword, payment.PasswordAAD(a))
		},
		CacheTTL: p.Settings.TerminalCache, Now: p.Clock.Now,
	}
}
