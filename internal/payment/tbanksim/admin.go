package tbanksim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// adminRoutes are the simulator's own commands, under /sim/:
//
//	POST /sim/pay, /sim/reject, /sim/expire  {"order_id": "..."}
//	GET  /sim/faults, POST /sim/faults        Faults as JSON
//	POST /sim/refund  {"payment_id": "...", "amount": 0}  refunded in the bank's portal (0: all)
//	POST /sim/terminals                       {"terminal_key": "...", "password": "..."}
//	GET  /sim/payments?order_id=...           the order's payments
//	GET  /sim/notifications                   every notification and its fate
func (s *Server) adminRoutes() {
	for _, o := range []Outcome{Pay, Reject, Expire} {
		s.mux.HandleFunc("POST /sim/"+string(o), func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				OrderID string `json:"order_id"`
			}
			if err := readJSON(r, &req); err != nil || req.OrderID == "" {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body must be {\"order_id\": \"...\"}"})
				return
			}
			p, err := s.Settle(req.OrderID, o)
			if err != nil {
				writeJSON(w, http.StatusConflict, map[string]any{"error": err.Error(), "payment": p})
				return
			}
			writeJSON(w, http.StatusOK, p)
		})
	}
	s.mux.HandleFunc("POST /sim/refund", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			PaymentID string `json:"payment_id"`
			Amount    int64  `json:"amount"`
		}
		if err := readJSON(r, &req); err != nil || req.PaymentID == "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body must be {\"payment_id\": \"...\", \"amount\": kopecks or 0 for all}"})
			return
		}
		p, err := s.RefundInPortal(req.PaymentID, req.Amount)
		if err != nil {
			writeJSON(w, http.StatusConflict, map[string]any{"error": err.Error(), "payment": p})
			return
		}
		writeJSON(w, http.StatusOK, p)
	})
	s.mux.HandleFunc("GET /sim/faults", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.Faults())
	})
	s.mux.HandleFunc("POST /sim/faults", func(w http.ResponseWriter, r *http.Request) {
		var f Faults
		if err := readJSON(r, &f); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
			return
		}
		s.SetFaults(f)
		writeJSON(w, http.StatusOK, f)
	})
	s.mux.HandleFunc("POST /sim/terminals", func(w http.ResponseWriter, r *http.Request) {
		var t struct {
			Key      string `json:"terminal_key"`
			Password string `json:"password"`
		}
		if err := readJSON(r, &t); err != nil || t.Key == "" || t.Password == "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body must be {\"terminal_key\", \"password\"}"})
			return
		}
		s.AddTerminal(t.Key, t.Password)
		writeJSON(w, http.StatusOK, map[string]string{"terminal_key": t.Key})
	})
	s.mux.HandleFunc("GET /sim/payments", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, s.Payments(r.URL.Query().Get("order_id")))
	})
	s.mux.HandleFunc("GET /sim/notifications", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.Deliveries())
	})
}

func readJSON(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
