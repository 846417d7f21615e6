package dashboard

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"tix/internal/dashboard/account"
	"tix/internal/payment"
	"tix/internal/ticketing"
)

// The Payments page (owners): the organizer's own T-Bank terminal,
// connected or replaced with the code tixctl organizers connect-tbank runs
// (payment.Terminals: checked with the bank, the password sealed, the
// organizer verified, so live mode opens), and the receipt settings.

// PaymentAccounts reads payment accounts and changes receipt settings
// (store.Payments), as tixctl organizers show and receipt-settings do.
type PaymentAccounts interface {
	GetPaymentAccount(ctx context.Context, organizerID string) (*ticketing.PaymentAccount, error)
	SetReceiptSettings(ctx context.Context, organizerID, taxation, vat string) (*ticketing.PaymentAccount, error)
}

// Terminals connects terminals (*payment.Terminals).
type Terminals interface {
	Connect(ctx context.Context, c payment.Connection) (*ticketing.PaymentAccount, error)
}

func (s *Server) paymentRoutes(mux *http.ServeMux, o string) {
	mux.HandleFunc("GET "+o+"/payments", s.inOrg(account.ManagePayments, s.paymentsPage))
	mux.HandleFunc("POST "+o+"/payments/terminal", s.inOrg(account.ManagePayments, s.connectTerminal))
	mux.HandleFunc("POST "+o+"/payments/receipts", s.inOrg(account.ManagePayments, s.receiptSettings))
}

// paymentsData is the Payments page: the account (never its password,
// sealed or not), the choices, the form's field errors and the bank's
// refusal of the last connection, if any.
type paymentsData struct {
	Account   *ticketing.PaymentAccount
	Taxations []string
	VATRates  []string
	Errors    map[string]string // field -> message key
	Refusal   *payment.CheckError
}

func (s *Server) paymentsPage(w http.ResponseWriter, r *http.Request, o *orgReq) {
	s.showPayments(w, r, o, paymentsData{}, http.StatusOK)
}

func (s *Server) showPayments(w http.ResponseWriter, r *http.Request, o *orgReq, d paymentsData, status int) {
	a, err := s.Payments.GetPaymentAccount(r.Context(), o.org())
	if err != nil && !ticketing.IsCode(err, ticketing.CodeNotFound) {
		s.internal(w, r, err)
		return
	}
	if a != nil {
		a.SealedPassword = ""
		if o.v.Form["taxation"] == "" {
			o.v.Form["taxation"], o.v.Form["vat"] = a.Taxation, a.VAT
		}
	}
	d.Account, d.Taxations, d.VATRates = a, payment.Taxations, payment.VATRates
	o.v.Data = d
	s.render(w, r, status, "payments", o.v)
}

// fieldError is the field an invalid_request names, or "" for another error.
func fieldError(err error) string {
	var te *ticketing.Error
	if errors.As(err, &te) && te.Code == ticketing.CodeInvalidRequest {
		return te.Param
	}
	return ""
}

// connectTerminal connects (or replaces) the terminal. A refusal by the
// bank is shown with its code and reason and stores nothing; success
// verifies the organizer.
func (s *Server) connectTerminal(w http.ResponseWriter, r *http.Request, o *orgReq) {
	f := formValues(r, "terminal_key", "password", "taxation", "vat")
	o.v.Form = map[string]string{"terminal_key": strings.TrimSpace(f["terminal_key"]), "taxation": f["taxation"], "vat": f["vat"]}
	c := payment.Connection{OrganizerID: o.org(), TerminalKey: o.v.Form["terminal_key"], Password: strings.TrimSpace(f["password"]),
		Taxation: f["taxation"], VAT: f["vat"]}
	if c.Taxation == "" && c.VAT == "" { // a replaced terminal keeps the receipt settings
		old, err := s.Payments.GetPaymentAccount(r.Context(), o.org())
		if err != nil && !ticketing.IsCode(err, ticketing.CodeNotFound) {
			s.internal(w, r, err)
			return
		}
		if old != nil {
			c.Taxation, c.VAT = old.Taxation, old.VAT
		}
	}
	a, err := s.Terminals.Connect(r.Context(), c)
	var ce *payment.CheckError
	switch {
	case err == nil:
	case fieldError(err) != "":
		s.showPayments(w, r, o, paymentsData{Errors: map[string]string{fieldError(err): "pay.bad_" + fieldError(err)}}, http.StatusBadRequest)
		return
	case errors.As(err, &ce):
		s.did(r, o, "payments.connect_refused", c.TerminalKey, ce.Kind+" "+ce.Code)
		o.v.Message = "pay.refused_" + ce.Kind
		s.showPayments(w, r, o, paymentsData{Refusal: ce}, http.StatusUnprocessableEntity)
		return
	case ticketing.IsCode(err, ticketing.CodeConflict):
		s.showPayments(w, r, o, paymentsData{Errors: map[string]string{"terminal_key": "pay.taken"}}, http.StatusConflict)
		return
	default:
		s.internal(w, r, err)
		return
	}
	s.did(r, o, "payments.connect", a.TerminalKey, a.Taxation+" "+a.VAT)
	o.v.Org.Verified = true
	o.v.Message, o.v.Form = "pay.connected", map[string]string{}
	s.showPayments(w, r, o, paymentsData{}, http.StatusOK)
}

// receiptSettings changes the taxation and VAT rate of the connected
// terminal's receipts (store.Payments.SetReceiptSettings, as tixctl
// organizers receipt-settings).
func (s *Server) receiptSettings(w http.ResponseWriter, r *http.Request, o *orgReq) {
	f := formValues(r, "taxation", "vat")
	o.v.Form = f
	if err := payment.CheckReceipt(f["taxation"], f["vat"]); err != nil {
		s.showPayments(w, r, o, paymentsData{Errors: map[string]string{fieldError(err): "pay.bad_" + fieldError(err)}}, http.StatusBadRequest)
		return
	}
	a, err := s.Payments.SetReceiptSettings(r.Context(), o.org(), f["taxation"], f["vat"])
	if ticketing.IsCode(err, ticketing.CodeNotFound) {
		o.v.Message = "pay.connect_first"
		s.showPayments(w, r, o, paymentsData{}, http.StatusConflict)
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.did(r, o, "payments.receipts", a.TerminalKey, a.Taxation+" "+a.VAT)
	o.v.Message = "pay.receipts_saved"
	s.showPayments(w, r, o, paymentsData{}, http.StatusOK)
}
