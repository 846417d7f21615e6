package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"tix/internal/payment/tbank"
	"tix/internal/payment/tbanksim"
)

func TestAcquirerSim_PaysRejectsAndExpiresAtTheSimulator(t *testing.T) {
	sim := tbanksim.New(tbanksim.Options{})
	sim.AddTerminal("CtlDEMO", "pw")
	srv := httptest.NewServer(sim)
	t.Cleanup(func() { srv.Close(); sim.Close() })
	c := &tbank.Client{BaseURL: srv.URL, TerminalKey: "CtlDEMO", Password: "pw"}
	ctx := context.Background()
	for verb, want := range map[string]string{"pay": "CONFIRMED", "reject": "REJECTED", "expire": "DEADLINE_EXPIRED"} {
		order := "ord_ctl_" + verb
		a, err := c.Init(ctx, tbank.InitRequest{Amount: 1500, OrderId: order})
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		if code := run([]string{"acquirer-sim", verb, order, "--url", srv.URL}, &out, &errOut); code != 0 {
			t.Fatalf("%s: exit %d: %s", verb, code, errOut.String())
		}
		if !strings.Contains(out.String(), "is "+want) {
			t.Errorf("%s: output %q, want it to say %s", verb, out.String(), want)
		}
		if st, _ := c.GetState(ctx, string(a.PaymentId)); st.Status != want {
			t.Errorf("%s: bank status %s, want %s", verb, st.Status, want)
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"--json", "acquirer-sim", "pay", "ord_ctl_pay", "--url", srv.URL}, &out, &errOut); code != 1 {
		t.Errorf("paying a paid order: exit %d, want 1", code)
	}
	var e map[string]any
	if err := json.Unmarshal(out.Bytes(), &e); err != nil || !strings.Contains(out.String(), "CONFIRMED") {
		t.Errorf("--json error output %q: want one JSON value saying the payment is CONFIRMED", out.String())
	}
	if code := run([]string{"acquirer-sim", "pay", "--url", srv.URL}, &out, &errOut); code != 2 {
		t.Errorf("no order id: exit %d, want 2 (usage)", code)
	}
}
