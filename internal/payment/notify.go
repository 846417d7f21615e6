package payment

import (
	"context"
	"errors"
	"fmt"

	"tix/internal/payment/tbank"
	"tix/internal/ticketing"
)

// TBankNotifications verifies T-Bank's notifications: the terminal named in
// the body is looked up, its password opened, and the Token checked over
// every root scalar field received before anything in the body is believed.
type TBankNotifications struct {
	// Account finds a terminal's account (a not_found error when unknown).
	Account func(ctx context.Context, terminalKey string) (*ticketing.PaymentAccount, error)
	// Password opens an account's sealed terminal password.
	Password func(a *ticketing.PaymentAccount) (string, error)
}

// Parse returns what a notification says, or an error wrapping
// ticketing.ErrForgedNotification when it is not the bank's (unknown
// terminal, missing or wrong Token, unreadable body).
func (n *TBankNotifications) Parse(ctx context.Context, body []byte) (ticketing.PaymentUpdate, error) {
	forged := func(why error) (ticketing.PaymentUpdate, error) {
		return ticketing.PaymentUpdate{}, fmt.Errorf("%w: %v", ticketing.ErrForgedNotification, why)
	}
	terminal, err := tbank.NotificationTerminal(body)
	if err != nil {
		return forged(err)
	}
	acct, err := n.Account(ctx, terminal)
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
	if err != nil {
		return forged(err)
	}
	return ticketing.PaymentUpdate{
		OrganizerID: acct.OrganizerID, OrderID: note.OrderId, PaymentID: string(note.PaymentId),
		Amount: note.Amount, Status: Status(note.Status),
	}, nil
}

// PasswordAAD binds a sealed terminal password to its organizer and terminal:
// sealed for one, it opens for no other.
func PasswordAAD(a *ticketing.PaymentAccount) string {
	return "payment-account:" + a.OrganizerID + ":" + a.Acquirer + ":" + a.TerminalKey
}
