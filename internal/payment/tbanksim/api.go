package tbanksim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"tix/internal/payment/tbank"
)

// maxRequest caps a request body, as the bank's gateway does.
const maxRequest = 1 << 20

// method answers one signed API call for terminal; it returns the answer
// (without the envelope fields, which reply adds) or a refusal.
type method func(terminal string, body []byte) (map[string]any, error)

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	for name, m := range map[string]method{
		"Init": s.init, "GetQr": s.getQr, "GetState": s.getState, "Cancel": s.cancelPayment,
		"SbpPayTest": s.sbpPayTest, "Resend": s.resend, "CheckOrder": s.checkOrder,
	} {
		s.mux.HandleFunc("POST /v2/"+name, s.api(name, m))
	}
	s.adminRoutes()
}

// api authenticates a call the way the bank does (known TerminalKey, Token
// over the root scalar fields under the terminal's password), then runs it.
func (s *Server) api(name string, m method) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRequest))
		if err != nil {
			reply(w, nil, errf("unreadable request"))
			return
		}
		terminal, err := s.authenticate(body)
		if err != nil {
			reply(w, nil, err)
			return
		}
		if name == "Init" && s.initFault(w) {
			return
		}
		out, err := m(terminal, body)
		reply(w, out, err)
	}
}

func (s *Server) authenticate(body []byte) (string, error) {
	var head struct {
		TerminalKey string `json:"TerminalKey"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return "", errf("request is not a JSON object")
	}
	s.mu.Lock()
	password, ok := s.terminals[head.TerminalKey]
	s.mu.Unlock()
	if !ok {
		return "", &tbank.Error{Code: tbank.CodeTerminalNotFound, Message: "Терминал не найден.", Details: ""}
	}
	if err := tbank.CheckToken(body, password); err != nil {
		return "", &tbank.Error{Code: tbank.CodeBadToken, Message: "Неверные параметры.",
			Details: "Неверный токен. Проверьте пару TerminalKey/SecretKey."}
	}
	return head.TerminalKey, nil
}

// initFault applies the Init failure switches; it reports whether it answered.
func (s *Server) initFault(w http.ResponseWriter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.faults.InitFailures > 0 {
		s.faults.InitFailures--
		http.Error(w, "Service Temporarily Unavailable", http.StatusServiceUnavailable)
		return true
	}
	return false
}

// reply writes the bank's envelope: HTTP 200 always, Success and ErrorCode
// telling the outcome.
func reply(w http.ResponseWriter, out map[string]any, err error) {
	if out == nil {
		out = map[string]any{}
	}
	var refusal *tbank.Error
	if errors.As(err, &refusal) {
		out["Success"], out["ErrorCode"], out["Message"] = false, refusal.Code, refusal.Message
		if refusal.Details != "" {
			out["Details"] = refusal.Details
		}
	} else {
		out["Success"], out["ErrorCode"] = true, tbank.CodeOK
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return errf("malformed request: %v", err)
	}
	return nil
}

func (s *Server) init(terminal string, body []byte) (map[string]any, error) {
	var r tbank.InitRequest
	if err := decode(body, &r); err != nil {
		return nil, err
	}
	due, err := s.checkInit(r)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	p := s.newPayment(terminal, r, due)
	hang := time.Duration(0)
	if s.faults.InitTimeouts > 0 {
		s.faults.InitTimeouts--
		hang = time.Duration(max(s.faults.InitHangMS, 1)) * time.Millisecond
	}
	out := map[string]any{"TerminalKey": terminal, "Amount": p.Amount, "OrderId": p.OrderID,
		"Status": p.Status, "PaymentId": p.ID, "PaymentURL": "https://securepay.invalid/sim/" + p.ID}
	s.mu.Unlock()
	if hang > 0 {
		select { // the payment exists; the answer comes too late
		case <-time.After(hang):
		case <-s.ctx.Done():
		}
	}
	return out, nil
}

func (s *Server) checkInit(r tbank.InitRequest) (time.Time, error) {
	switch {
	case r.Amount <= 0:
		return time.Time{}, errf("Amount must be positive kopecks")
	case r.OrderId == "" || len(r.OrderId) > 50:
		return time.Time{}, errf("OrderId must have 1..50 characters")
	case len([]rune(r.Description)) > 140:
		return time.Time{}, errf("Description is longer than 140 characters")
	}
	if r.Receipt != nil {
		if err := checkReceipt(r.Receipt, r.Amount); err != nil {
			return time.Time{}, err
		}
	}
	due := s.opts.Now().Add(s.opts.DefaultDue)
	if r.RedirectDueDate != "" {
		t, err := time.Parse(tbank.DueDateLayout, r.RedirectDueDate)
		if err != nil {
			return time.Time{}, errf("RedirectDueDate %q is not YYYY-MM-DDThh:mm:ss±hh:mm", r.RedirectDueDate)
		}
		due = t
	}
	return due, nil
}

// find returns terminal's payment; s.mu is held.
func (s *Server) find(terminal, id string) (*Payment, error) {
	p, ok := s.payments[strings.TrimSpace(id)]
	if !ok || p.TerminalKey != terminal {
		return nil, errf("payment %s not found", id)
	}
	s.expireIfDue(p)
	return p, nil
}

func (s *Server) getQr(terminal string, body []byte) (map[string]any, error) {
	var r struct {
		PaymentId tbank.Text `json:"PaymentId"`
		DataType  string     `json:"DataType"`
	}
	if err := decode(body, &r); err != nil {
		return nil, err
	}
	if r.DataType != "" && r.DataType != "PAYLOAD" && r.DataType != "IMAGE" {
		return nil, errf("DataType must be PAYLOAD or IMAGE")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.find(terminal, string(r.PaymentId))
	if err != nil {
		return nil, err
	}
	if p.Status != tbank.StatusNew && p.Status != tbank.StatusFormShowed {
		return nil, errf("payment %s is %s, a QR needs NEW or FORM_SHOWED", p.ID, p.Status)
	}
	p.Status = tbank.StatusFormShowed
	p.QR = qrLink(p.SbpPaymentID, p.Amount)
	data := p.QR
	if r.DataType == "IMAGE" {
		data = "<svg xmlns=\"http://www.w3.org/2000/svg\"><!-- " + p.QR + " --></svg>"
	}
	// The bank sends this PaymentId as a JSON number.
	return map[string]any{"TerminalKey": terminal, "OrderId": p.OrderID, "PaymentId": json.Number(p.ID), "Data": data}, nil
}

func (s *Server) getState(terminal string, body []byte) (map[string]any, error) {
	var r struct {
		PaymentId tbank.Text `json:"PaymentId"`
	}
	if err := decode(body, &r); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.find(terminal, string(r.PaymentId))
	if err != nil {
		return nil, err
	}
	return map[string]any{"TerminalKey": terminal, "OrderId": p.OrderID, "PaymentId": p.ID,
		"Status": p.Status, "Amount": p.Amount}, nil
}

func (s *Server) checkOrder(terminal string, body []byte) (map[string]any, error) {
	var r tbank.CheckOrderRequest
	if err := decode(body, &r); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	payments := []map[string]any{}
	for _, id := range s.orders[terminal+"\x00"+r.OrderId] {
		p := s.payments[id]
		s.expireIfDue(p)
		payments = append(payments, map[string]any{"PaymentId": p.ID, "Amount": p.Amount, "Status": p.Status,
			"Success": true, "ErrorCode": "0", "Message": "None", "SbpPaymentId": p.SbpPaymentID})
	}
	return map[string]any{"TerminalKey": terminal, "OrderId": r.OrderId, "Payments": payments}, nil
}
