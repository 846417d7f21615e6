package tbanksim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tix/internal/payment/tbank"
	"tix/internal/payment/tbanksim"
)

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestAdmin_PayRejectExpireByOrderID(t *testing.T) {
	sim := tbanksim.New(tbanksim.Options{NotifyRetry: 20 * time.Millisecond})
	sim.AddTerminal(terminal, password)
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	c := &tbank.Client{BaseURL: srv.URL, TerminalKey: terminal, Password: password}
	for order, want := range map[string]string{"pay": "CONFIRMED", "reject": "REJECTED", "expire": "DEADLINE_EXPIRED"} {
		a, err := c.Init(ctx, tbank.InitRequest{Amount: 1000, OrderId: "ord-admin-" + order})
		if err != nil {
			t.Fatal(err)
		}
		code, body := post(t, srv.URL+"/sim/"+order, `{"order_id":"ord-admin-`+order+`"}`)
		if code != http.StatusOK {
			t.Fatalf("POST /sim/%s: %d %s", order, code, body)
		}
		var p tbanksim.Payment
		if err := json.Unmarshal([]byte(body), &p); err != nil || p.Status != want || p.ID != string(a.PaymentId) {
			t.Errorf("POST /sim/%s answered %s, want payment %s %s", order, body, a.PaymentId, want)
		}
		if st, _ := c.GetState(ctx, string(a.PaymentId)); st.Status != want {
			t.Errorf("GetState after /sim/%s: %s, want %s", order, st.Status, want)
		}
	}
	if code, _ := post(t, srv.URL+"/sim/pay", `{"order_id":"ord-admin-pay"}`); code != http.StatusConflict {
		t.Errorf("paying a paid order: %d, want 409", code)
	}
	if code, _ := post(t, srv.URL+"/sim/pay", `{"order_id":"nope"}`); code != http.StatusConflict {
		t.Errorf("paying an unknown order: %d, want 409", code)
	}
	if code, _ := post(t, srv.URL+"/sim/pay", `{}`); code != http.StatusBadRequest {
		t.Errorf("no order id: %d, want 400", code)
	}
}

func TestAdmin_FaultsAndTerminals(t *testing.T) {
	sim := tbanksim.New(tbanksim.Options{})
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	if code, body := post(t, srv.URL+"/sim/faults", `{"duplicate":true,"init_failures":2}`); code != http.StatusOK {
		t.Fatalf("POST /sim/faults: %d %s", code, body)
	}
	if f := sim.Faults(); !f.Duplicate || f.InitFailures != 2 {
		t.Errorf("faults %+v, want duplicate and 2 Init failures", f)
	}
	if code, _ := post(t, srv.URL+"/sim/faults", `{"duplicates":true}`); code != http.StatusBadRequest {
		t.Errorf("misspelt switch: %d, want 400", code)
	}
	if code, _ := post(t, srv.URL+"/sim/terminals", `{"terminal_key":"NewDEMO","password":"pw"}`); code != http.StatusOK {
		t.Fatalf("POST /sim/terminals: %d", code)
	}
	c := &tbank.Client{BaseURL: srv.URL, TerminalKey: "NewDEMO", Password: "pw"}
	if _, err := c.CheckOrder(ctx, "x"); err != nil {
		t.Errorf("the added terminal is refused: %v", err)
	}
}
