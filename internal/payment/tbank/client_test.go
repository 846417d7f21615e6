package tbank_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"tix/internal/payment/tbank"
)

// answering is a server that checks each request's Token and answers body.
func answering(t *testing.T, status int, body string) (*tbank.Client, *[]map[string]any) {
	t.Helper()
	var seen []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if err := tbank.CheckToken(b, "pw"); err != nil {
			t.Errorf("request %s: %v", b, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("request %s: %v", b, err)
		}
		m["path"] = r.URL.Path
		seen = append(seen, m)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return &tbank.Client{BaseURL: srv.URL + "/", TerminalKey: "T", Password: "pw"}, &seen
}

func TestClient_SignsRequestsAndDecodesTheBanksWireVariants(t *testing.T) {
	c, seen := answering(t, 200, `{"Success":true,"ErrorCode":"0","TerminalKey":"T","OrderId":"o","PaymentId":7001,"Data":"https://qr.nspk.ru/X"}`)
	a, err := c.GetQr(context.Background(), "7001")
	if err != nil {
		t.Fatal(err)
	}
	if a.PaymentId != "7001" || a.Data != "https://qr.nspk.ru/X" {
		t.Errorf("answer %+v: want PaymentId 7001 from a JSON number", a)
	}
	req := (*seen)[0]
	if req["path"] != "/v2/GetQr" || req["TerminalKey"] != "T" || req["PaymentId"] != "7001" || req["DataType"] != "PAYLOAD" {
		t.Errorf("request %v", req)
	}
	c2, seen2 := answering(t, 200, `{"Success":"true","ErrorCode":0,"PaymentId":"1","Status":"NEW","Amount":100,"OrderId":"o"}`)
	if _, err := c2.Init(context.Background(), tbank.InitRequest{Amount: 100, OrderId: "o",
		Receipt: &tbank.Receipt{Email: "a@b.c", Taxation: "osn", Items: []tbank.ReceiptItem{{Name: "x", Price: 100, Quantity: 1, Amount: 100, Tax: "none"}}},
		DATA:    map[string]string{"k": "v"}}); err != nil {
		t.Errorf("Success as a string, ErrorCode as a number: %v", err)
	}
	if _, ok := (*seen2)[0]["Receipt"].(map[string]any); !ok {
		t.Errorf("Receipt not sent as an object: %v", (*seen2)[0])
	}
}

func TestClient_RefusalsAreTypedErrors(t *testing.T) {
	for name, body := range map[string]string{
		"Success false":              `{"Success":false,"ErrorCode":"204","Message":"Неверные параметры.","Details":"Неверный токен."}`,
		"non-zero code with Success": `{"Success":true,"ErrorCode":204}`,
	} {
		c, _ := answering(t, 200, body)
		_, err := c.GetState(context.Background(), "1")
		var refusal *tbank.Error
		if !errors.As(err, &refusal) || refusal.Code != "204" || refusal.Method != "GetState" || !tbank.IsCode(err, tbank.CodeBadToken) {
			t.Errorf("%s: err = %v, want *tbank.Error 204", name, err)
		}
		if tbank.IsTransport(err) {
			t.Errorf("%s: a refusal is not an unknown outcome", name)
		}
	}
}

func TestClient_UnknownOutcomesAreTransportErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		status int
		body   string
	}{
		"5xx":          {503, `{"Success":true,"ErrorCode":"0"}`},
		"not JSON":     {200, `<html>gateway</html>`},
		"wrong schema": {200, `{"Success":{"x":1}}`},
	} {
		c, _ := answering(t, tc.status, tc.body)
		if _, err := c.Init(context.Background(), tbank.InitRequest{Amount: 1, OrderId: "o"}); !tbank.IsTransport(err) {
			t.Errorf("%s: err = %v, want ErrTransport", name, err)
		}
	}
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); slow.Close() })
	c := &tbank.Client{BaseURL: slow.URL, TerminalKey: "T", Password: "pw"}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Init(ctx, tbank.InitRequest{Amount: 1, OrderId: "o"}); !tbank.IsTransport(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: err = %v, want ErrTransport wrapping the deadline", err)
	}
}

func TestDueDate_IsMoscowTimeWithItsOffset(t *testing.T) {
	got := tbank.DueDate(time.Date(2030, 5, 17, 9, 30, 15, 500, time.UTC))
	if got != "2030-05-17T12:30:15+03:00" {
		t.Errorf("DueDate = %s, want 2030-05-17T12:30:15+03:00", got)
	}
}
