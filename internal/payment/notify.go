package payment

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"tix/internal/payment/tbank"
	"tix/internal/ticketing"
)

// TBankNotifications verifies T-Bank's notifications: the terminal named in
// the body is looked up, its password opened, and the Token checked over
// every root scalar field received before anything in the body is believed;
// then the body is read strictly. What it yields names a payment to ask the
// bank about, nothing more (ticketing.Payments.PaymentNotified).
type TBankNotifications struct {
	// Account finds a terminal's account (a not_found error when unknown).
	Account func(ctx context.Context, terminalKey string) (*ticketing.PaymentAccount, error)
	// Password opens an account's sealed terminal password.
	Password func(a *ticketing.PaymentAccount) (string, error)
	// CacheTTL is how long a terminal's account, or the absence of one, is
	// reused (0: Account is asked for every notification), so that a flood of
	// notifications naming random terminals does not read the table each.
	CacheTTL time.Duration
	// Now is the cache's clock (time.Now when nil).
	Now func() time.Time

	mu    sync.Mutex
	cache map[string]cachedTerminal
}

type cachedTerminal struct {
	acct  *ticketing.PaymentAccount // nil: no such terminal
	until time.Time
}

// maxCachedTerminals bounds the terminal cache: past it, expired entries go,
// and when none has expired the cache starts over.
const maxCachedTerminals = 10_000

// Parse returns the payment a notification names, or an error wrapping
// ticketing.ErrForgedNotification when it is not the bank's (unknown
// terminal, missing or wrong Token, unreadable body), or one wrapping
// ticketing.ErrMalformedNotification when the Token verifies but the body is
// not one the bank sends (tbank.ErrMalformedNotification).
func (n *TBankNotifications) Parse(ctx context.Context, body []byte) (ticketing.PaymentUpdate, error) {
	forged := func(why error) (ticketing.PaymentUpdate, error) {
		return ticketing.PaymentUpdate{}, fmt.Errorf("%w: %v", ticketing.ErrForgedNotification, why)
	}
	terminal, err := tbank.NotificationTerminal(body)
	if err != nil {
		return forged(err)
	}
	acct, err := n.account(ctx, terminal)
	if ticketing.IsCode(err, ticketing.CodeNotFound) {
		return forged(errors.New("unknown terminal"))
	}
	if err != nil {
		return ticketing.PaymentUpdate{}, err
	}
	password, err := n.Password(acct)
	if err != nil {
		return ticketing.PaymentUpdate{}, fmt.Errorf("open the password of terminal %s: %w", terminal, err)
	}
	note, err := tbank.ParseNotification(body, password)
	if errors.Is(err, tbank.ErrMalformedNotification) {
		return ticketing.PaymentUpdate{}, fmt.Errorf("%w: %v", ticketing.ErrMalformedNotification, err)
	}
	if err != nil {
		return forged(err)
	}
	return ticketing.PaymentUpdate{
		OrganizerID: acct.OrganizerID, OrderID: note.OrderId, PaymentID: note.PaymentId,
		Amount: note.Amount, Status: Status(note.Status),
	}, nil
}

// account is Account through the cache.
func (n *TBankNotifications) account(ctx context.Context, terminal string) (*ticketing.PaymentAccount, error) {
	if n.CacheTTL <= 0 {
		return n.Account(ctx, terminal)
	}
	now := time.Now()
	if n.Now != nil {
		now = n.Now()
	}
	n.mu.Lock()
	c, ok := n.cache[terminal]
	n.mu.Unlock()
	if ok && now.Before(c.until) {
		if c.acct == nil {
			return nil, ticketing.NotFound("payment terminal " + terminal)
		}
		return c.acct, nil
	}
	acct, err := n.Account(ctx, terminal)
	if err != nil && !ticketing.IsCode(err, ticketing.CodeNotFound) {
		return nil, err // not cached: the next notification asks again
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cache == nil || len(n.cache) >= maxCachedTerminals {
		n.cache = pruned(n.cache, now)
	}
	n.cache[terminal] = cachedTerminal{acct: acct, until: now.Add(n.CacheTTL)}
	return acct, err
}

// pruned is the cache without its expired entries, or empty when all are live.
func pruned(cache map[string]cachedTerminal, now time.Time) map[string]cachedTerminal {
	out := make(map[string]cachedTerminal, len(cache))
	for k, c := range cache {
		if now.Before(c.until) {
			out[k] = c
		}
	}
	if len(out) >= maxCachedTerminals {
		return map[string]cachedTerminal{}
	}
	return out
}

// PasswordAAD binds a sealed terminal password to its organizer and terminal:
// sealed for one, it opens for no other.
func PasswordAAD(a *ticketing.PaymentAccount) string {
	return "payment-account:" + a.OrganizerID + ":" + a.Acquirer + ":" + a.TerminalKey
}
