package payment

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"tix/internal/auth"
	"tix/internal/payment/tbank"
	"tix/internal/ticketing"
)

// Connecting an organizer's own T-Bank terminal: the one code path of
// `tixctl organizers connect-tbank` and the dashboard's Payments page. The
// credentials are checked with a real call to the bank before anything is
// stored; the password is sealed; storing the account verifies the
// organizer (store.Payments.PutPaymentAccount), which opens live mode.

// Receipt settings T-Bank's Receipt object accepts (54-FZ): the organizer's
// tax system and the VAT rate of its ticket sales.
var (
	Taxations = []string{"osn", "usn_income", "usn_income_outcome", "esn", "patent"}
	VATRates  = []string{"none", "vat0", "vat5", "vat7", "vat10", "vat20", "vat22"}
)

// MaxTerminalPassword caps a terminal password, in bytes.
const MaxTerminalPassword = 4096

// maxTerminalKey is the longest TerminalKey the store looks up.
const maxTerminalKey = 100

// CheckReceipt refuses receipt settings T-Bank does not accept
// (invalid_request naming taxation or vat).
func CheckReceipt(taxation, vat string) error {
	if !slices.Contains(Taxations, taxation) {
		return ticketing.Invalid("taxation", "taxation must be one of %s", strings.Join(Taxations, ", "))
	}
	if !slices.Contains(VATRates, vat) {
		return ticketing.Invalid("vat", "vat must be one of %s", strings.Join(VATRates, ", "))
	}
	return nil
}

// Why the bank did not confirm a terminal's credentials (CheckError.Kind).
const (
	RefusedPassword = "password"    // the Token does not match: a wrong password
	RefusedTerminal = "terminal"    // the bank does not know the TerminalKey
	RefusedOther    = "refused"     // another refusal of the check call
	Unreachable     = "unreachable" // no answer from the bank
)

// CheckError is the bank not confirming a terminal's credentials; nothing
// was stored.
type CheckError struct {
	Kind   string // RefusedPassword, RefusedTerminal, RefusedOther, Unreachable
	Code   string // the bank's error code ("" when unreachable)
	Reason string // the bank's message and details, or the transport error
	Err    error
}

func (e *CheckError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("T-Bank did not confirm the terminal (error %s: %s)", e.Code, e.Reason)
	}
	return "could not reach T-Bank to check the terminal: " + e.Reason
}

func (e *CheckError) Unwrap() error { return e.Err }

// CheckTerminal makes one real call with the client's credentials:
// CheckOrder of a fresh order id, which the bank answers only for a known
// terminal and a Token made with its password. A failure is a *CheckError.
func CheckTerminal(ctx context.Context, c *tbank.Client) error {
	_, err := c.CheckOrder(ctx, "tix-check-"+auth.RandomString("abcdefghijklmnopqrstuvwxyz0123456789", 16))
	if err == nil {
		return nil
	}
	var refusal *tbank.Error
	if errors.As(err, &refusal) {
		ce := &CheckError{Kind: RefusedOther, Code: refusal.Code, Reason: refusal.Message, Err: err}
		if refusal.Details != "" {
			ce.Reason += " " + refusal.Details
		}
		switch refusal.Code {
		case tbank.CodeBadToken:
			ce.Kind = RefusedPassword
		case tbank.CodeTerminalNotFound:
			ce.Kind = RefusedTerminal
		}
		return ce
	}
	if tbank.IsTransport(err) {
		return &CheckError{Kind: Unreachable, Reason: err.Error(), Err: err}
	}
	return err
}

// Sealer seals a secret bound to its aad (webhook.SecretBox).
type Sealer interface {
	Seal(plaintext, aad string) (string, error)
}

// AccountWriter stores a payment account and verifies its organizer
// (store.Payments).
type AccountWriter interface {
	PutPaymentAccount(ctx context.Context, a ticketing.PaymentAccount) error
}

// Terminals connects organizers' T-Bank terminals.
type Terminals struct {
	Accounts AccountWriter
	Box      Sealer
	BaseURL  string       // T-Bank's API, without /v2 (TIX_TBANK_API_URL)
	HTTP     *http.Client // nil: tbank's default
	Now      func() time.Time
}

// Connection is a terminal to connect and the receipt settings to keep.
type Connection struct {
	OrganizerID, TerminalKey, Password string
	Taxation, VAT                      string
}

// CheckConnection refuses a connection that is not worth asking the bank
// about (invalid_request naming the field).
func CheckConnection(c Connection) error {
	switch {
	case c.TerminalKey == "" || len(c.TerminalKey) > maxTerminalKey || strings.IndexFunc(c.TerminalKey, unicode.IsSpace) >= 0:
		return ticketing.Invalid("terminal_key", "the terminal key is 1 to %d characters without spaces, as the bank's terminal settings show it", maxTerminalKey)
	case c.Password == "" || len(c.Password) > MaxTerminalPassword:
		return ticketing.Invalid("password", "the terminal password is 1 to %d bytes", MaxTerminalPassword)
	}
	return CheckReceipt(c.Taxation, c.VAT)
}

// Connect checks the credentials with the bank (a *CheckError when it does
// not confirm them: nothing is stored), seals the password under the
// organizer and terminal, and stores the account, which verifies the
// organizer (a terminal of another organizer's: conflict).
func (t *Terminals) Connect(ctx context.Context, c Connection) (*ticketing.PaymentAccount, error) {
	if err := CheckConnection(c); err != nil {
		return nil, err
	}
	if err := CheckTerminal(ctx, &tbank.Client{BaseURL: strings.TrimRight(t.BaseURL, "/"), TerminalKey: c.TerminalKey,
		Password: c.Password, HTTP: t.HTTP}); err != nil {
		return nil, err
	}
	now := t.Now().UTC()
	a := &ticketing.PaymentAccount{OrganizerID: c.OrganizerID, Acquirer: ticketing.AcquirerTBank, TerminalKey: c.TerminalKey,
		Taxation: c.Taxation, VAT: c.VAT, ConnectedAt: now, CheckedAt: now}
	sealed, err := t.Box.Seal(c.Password, PasswordAAD(a))
	if err != nil {
		return nil, fmt.Errorf("seal the terminal password: %w", err)
	}
	a.SealedPassword = sealed
	if err := t.Accounts.PutPaymentAccount(ctx, *a); err != nil {
		return nil, err
	}
	return a, nil
}
