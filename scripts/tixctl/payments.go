package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"tix/internal/payment"
	"tix/internal/payment/tbank"
	"tix/internal/store"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// The organizers' payment accounts: an organizer's own T-Bank terminal,
// checked with a real call to the bank before it is stored (the password
// sealed under the webhook keyring), and the receipt settings (54-FZ).

// Receipt settings T-Bank's Receipt object accepts.
var (
	taxations = payment.Taxations
	vatRates  = payment.VATRates
)

// maxPassword caps what is read as a terminal password.
const maxPassword = payment.MaxTerminalPassword

// accountView is a payment account as tixctl shows it: never the password,
// sealed or not.
type accountView struct {
	OrganizerID string    `json:"organizer_id"`
	Acquirer    string    `json:"acquirer"`
	TerminalKey string    `json:"terminal_key"`
	Taxation    string    `json:"taxation"`
	VAT         string    `json:"vat"`
	ConnectedAt time.Time `json:"connected_at"`
	CheckedAt   time.Time `json:"checked_at"`
}

func accountViewOf(a *ticketing.PaymentAccount) *accountView {
	if a == nil {
		return nil
	}
	return &accountView{OrganizerID: a.OrganizerID, Acquirer: a.Acquirer, TerminalKey: a.TerminalKey,
		Taxation: a.Taxation, VAT: a.VAT, ConnectedAt: a.ConnectedAt.UTC(), CheckedAt: a.CheckedAt.UTC()}
}

// connectedView is what connect-tbank and receipt-settings print.
type connectedView struct {
	accountView
	Verified bool `json:"verified"`
}

func (v connectedView) print(w io.Writer, verb string) {
	fmt.Fprintf(w, "%s T-Bank terminal %s of organizer %s (checked with the bank at %s).\n",
		verb, v.TerminalKey, v.OrganizerID, v.CheckedAt.Format(time.RFC3339))
	fmt.Fprintf(w, "receipts: taxation %s, VAT %s\n", v.Taxation, v.VAT)
	if v.Verified {
		fmt.Fprintf(w, "Organizer %s is verified: it may have live keys (tixctl keys create --organizer %s --type sk --env live).\n", v.OrganizerID, v.OrganizerID)
	}
}

// connectFlags are connect-tbank's command line.
type connectFlags struct {
	id, terminalKey, passwordFile, apiURL, taxation, vat string
	passwordStdin                                        bool
}

func parseConnectFlags(args []string) (connectFlags, error) {
	var f connectFlags
	fs := flag.NewFlagSet("organizers connect-tbank", flag.ContinueOnError)
	fs.StringVar(&f.id, "id", "", "organizer id")
	fs.StringVar(&f.terminalKey, "terminal-key", "", "the terminal's TerminalKey")
	fs.StringVar(&f.passwordFile, "password-file", "", "file holding the terminal's password")
	fs.BoolVar(&f.passwordStdin, "password-stdin", false, "read the terminal's password from stdin")
	fs.StringVar(&f.apiURL, "api-url", pickEnv("TIX_TBANK_API_URL", tbank.DefaultBaseURL), "T-Bank API base URL, without /v2")
	fs.StringVar(&f.taxation, "taxation", "", "tax system on receipts: "+strings.Join(taxations, ", "))
	fs.StringVar(&f.vat, "vat", "", "VAT rate on receipts: "+strings.Join(vatRates, ", "))
	rest, err := parseFlags(fs, args)
	if err != nil {
		return f, err
	}
	if err := noPositional(rest); err != nil {
		return f, usagef("%s (the password is read from --password-file or --password-stdin, never from the command line)", err)
	}
	if err := required("id", f.id); err != nil {
		return f, err
	}
	if err := required("terminal-key", f.terminalKey); err != nil {
		return f, err
	}
	if (f.passwordFile == "") == !f.passwordStdin {
		return f, usagef("give the terminal password with exactly one of --password-file FILE or --password-stdin")
	}
	if strings.TrimSpace(f.apiURL) == "" {
		return f, usagef("--api-url must not be empty")
	}
	return f, checkReceiptFlags(f.taxation, f.vat, true)
}

// checkReceiptFlags checks --taxation and --vat; empty values are allowed
// when optional (connect-tbank keeps an existing account's).
func checkReceiptFlags(taxation, vat string, optional bool) error {
	if taxation != "" || !optional {
		if !slices.Contains(taxations, taxation) {
			return usagef("--taxation must be one of %s", strings.Join(taxations, ", "))
		}
	}
	if vat != "" || !optional {
		if !slices.Contains(vatRates, vat) {
			return usagef("--vat must be one of %s", strings.Join(vatRates, ", "))
		}
	}
	return nil
}

// readPassword reads the terminal password from the file or stdin, trimmed.
func (a *app) readPassword(f connectFlags) (string, error) {
	r := a.stdin
	from := "stdin"
	if f.passwordFile != "" {
		file, err := os.Open(f.passwordFile)
		if err != nil {
			return "", fmt.Errorf("read the terminal password: %w", err)
		}
		defer file.Close()
		if err := privateFile(file); err != nil {
			return "", err
		}
		r, from = file, f.passwordFile
	}
	b, err := io.ReadAll(io.LimitReader(r, maxPassword+1))
	if err != nil {
		return "", fmt.Errorf("read the terminal password from %s: %w", from, err)
	}
	pw := strings.TrimSpace(string(b))
	switch {
	case pw == "":
		return "", usagef("the terminal password read from %s is empty", from)
	case len(pw) > maxPassword:
		return "", usagef("the terminal password read from %s is longer than %d bytes", from, maxPassword)
	}
	return pw, nil
}

// privateFile refuses a password file that its group or others may read or
// write, as ssh does for a private key: the terminal password moves money.
func privateFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read the terminal password: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return usagef("%s has mode %04o: its group or others can read or change the terminal password; run `chmod 600 %s` and try again",
			f.Name(), perm, f.Name())
	}
	return nil
}

func organizersConnectTBank(ctx context.Context, a *app, args []string) error {
	f, err := parseConnectFlags(args)
	if err != nil {
		return err
	}
	password, err := a.readPassword(f)
	if err != nil {
		return err
	}
	box, st, err := a.paymentAccounts(ctx)
	if err != nil {
		return err
	}
	c, err := newConnection(ctx, st, f)
	if err != nil {
		return err
	}
	c.Password = password
	terminals := &payment.Terminals{Accounts: st.Payments, Box: box, BaseURL: f.apiURL, Now: a.clock.Now}
	acct, err := terminals.Connect(ctx, c)
	if err != nil {
		return checkFailure(err, f.apiURL, c.TerminalKey)
	}
	v := connectedView{accountView: *accountViewOf(acct), Verified: true}
	return a.emit(v, func(w io.Writer) { v.print(w, "Connected") })
}

// newConnection is the terminal connect-tbank connects, its receipt
// settings from the flags or else from the organizer's existing account. It
// fails before any call to the bank when the organizer is unknown or the
// settings missing.
func newConnection(ctx context.Context, st *store.Store, f connectFlags) (payment.Connection, error) {
	c := payment.Connection{OrganizerID: f.id, TerminalKey: strings.TrimSpace(f.terminalKey), Taxation: f.taxation, VAT: f.vat}
	if _, err := st.Organizers.GetOrganizer(ctx, f.id); err != nil {
		return c, err
	}
	old, err := st.Payments.GetPaymentAccount(ctx, f.id)
	switch {
	case ticketing.IsCode(err, ticketing.CodeNotFound):
		if f.taxation == "" || f.vat == "" {
			return c, usagef("--taxation and --vat are required when an organizer connects its first terminal: " +
				"every payment and refund carries a fiscal receipt (54-FZ)")
		}
	case err != nil:
		return c, err
	default:
		c.Taxation = orDefault(f.taxation, old.Taxation)
		c.VAT = orDefault(f.vat, old.VAT)
	}
	return c, nil
}

// orDefault is v, or def when v is empty.
func orDefault(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

// checkFailure says why the bank did not confirm the credentials (tixctl's
// words: the flags to check); other errors pass as they are.
func checkFailure(err error, apiURL, terminalKey string) error {
	var ce *payment.CheckError
	if !errors.As(err, &ce) {
		return err
	}
	switch ce.Kind {
	case payment.RefusedPassword:
		return fmt.Errorf("T-Bank at %s refused the credentials of terminal %s: wrong password (error %s: %s); "+
			"nothing was stored: check the password in the terminal's settings", apiURL, terminalKey, ce.Code, ce.Reason)
	case payment.RefusedTerminal:
		return fmt.Errorf("T-Bank at %s does not know terminal %s (error %s: %s); nothing was stored: "+
			"check --terminal-key, and --api-url", apiURL, terminalKey, ce.Code, ce.Reason)
	case payment.RefusedOther:
		return fmt.Errorf("T-Bank at %s refused the check call for terminal %s (error %s: %s); the credentials are not "+
			"confirmed and nothing was stored", apiURL, terminalKey, ce.Code, ce.Reason)
	default:
		return fmt.Errorf("could not reach T-Bank at %s to check terminal %s (%v); nothing was stored", apiURL, terminalKey, ce.Err)
	}
}

// paymentAccounts is the keyring's box (as the Lambdas have it: the webhook
// keyring seals terminal passwords too) and the store.
func (a *app) paymentAccounts(ctx context.Context) (webhook.SecretBox, *store.Store, error) {
	cfg, err := a.webhookConfig()
	if err != nil {
		return nil, nil, err
	}
	box, err := webhook.NewAESBoxKeys(cfg.Webhooks.Keyring)
	if err != nil {
		return nil, nil, fmt.Errorf("TIX_WEBHOOK_KEYRING: %w", err)
	}
	st, err := a.store(ctx)
	if err != nil {
		return nil, nil, err
	}
	return box, st, nil
}

func organizersReceiptSettings(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("organizers receipt-settings", flag.ContinueOnError)
	id := fs.String("id", "", "organizer id")
	taxation := fs.String("taxation", "", "tax system on receipts: "+strings.Join(taxations, ", "))
	vat := fs.String("vat", "", "VAT rate on receipts: "+strings.Join(vatRates, ", "))
	if err := parseNamed(fs, args, "id"); err != nil {
		return err
	}
	if err := checkReceiptFlags(*taxation, *vat, false); err != nil {
		return err
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	acct, err := st.Payments.SetReceiptSettings(ctx, *id, *taxation, *vat)
	if ticketing.IsCode(err, ticketing.CodeNotFound) {
		return ticketing.Errorf(ticketing.CodeNotFound, "organizer %s has no T-Bank terminal connected: "+
			"connect one first (tixctl organizers connect-tbank --id %s ...)", *id, *id)
	}
	if err != nil {
		return err
	}
	o, err := st.Organizers.GetOrganizer(ctx, *id)
	if err != nil {
		return err
	}
	v := connectedView{accountView: *accountViewOf(acct), Verified: o.Verified}
	return a.emit(v, func(w io.Writer) { v.print(w, "Updated the receipt settings of") })
}

// organizerView is organizers show: the organizer and its payment account
// (null when none), never a secret.
type organizerView struct {
	ticketing.Organizer
	PaymentAccount *accountView `json:"payment_account"`
}

func organizersShow(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("organizers show", flag.ContinueOnError)
	id := fs.String("id", "", "organizer id")
	if err := parseNamed(fs, args, "id"); err != nil {
		return err
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	o, err := st.Organizers.GetOrganizer(ctx, *id)
	if err != nil {
		return err
	}
	acct, err := st.Payments.GetPaymentAccount(ctx, *id)
	if err != nil && !ticketing.IsCode(err, ticketing.CodeNotFound) {
		return err
	}
	v := organizerView{Organizer: *o, PaymentAccount: accountViewOf(acct)}
	return a.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "id:        %s\nname:      %s\nverified:  %t\ncreated:   %s\n", o.ID, o.Name, o.Verified, formatTime(&o.CreatedAt))
		if acct == nil {
			fmt.Fprintf(w, "payments:  no T-Bank terminal connected (tixctl organizers connect-tbank --id %s ...)\n", o.ID)
			return
		}
		fmt.Fprintf(w, "payments:  %s terminal %s, connected %s, checked %s\nreceipts:  taxation %s, VAT %s\n", acct.Acquirer,
			acct.TerminalKey, formatTime(&acct.ConnectedAt), formatTime(&acct.CheckedAt), acct.Taxation, acct.VAT)
	})
}
