package payment

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"tix/internal/payment/paymenttest"
	"tix/internal/ticketing"
)

func TestTest_MeetsTheProviderContract(t *testing.T) {
	paymenttest.ProviderContract(t, NewTest(TestOptions{RefundSettleAfter: 3 * time.Minute}))
}

func request(orderID string, amount int64) ticketing.PaymentRequest {
	return ticketing.PaymentRequest{
		OrderID: orderID, Environment: ticketing.EnvTest, Amount: amount, Currency: "RUB",
		ExpiresAt: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
	}
}

func TestCreatePayment_ReturnsAnNSPKStyleTestLink(t *testing.T) {
	p := NewTest(TestOptions{})
	pay, err := p.CreatePayment(context.Background(), request("ord-1", 250050))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^TS[0-9A-V]{30}$`).MatchString(pay.ID) {
		t.Errorf("ID = %q, want TS and 30 base32hex characters (32 like an NSPK id)", pay.ID)
	}
	want := "https://qr.nspk.ru/" + pay.ID + "?type=02&sum=250050&cur=RUB&test=1&crc="
	if !strings.HasPrefix(pay.Payload, want) {
		t.Errorf("Payload = %q, want it to start with %q", pay.Payload, want)
	}
	if pay.DeepLink != pay.Payload {
		t.Errorf("DeepLink = %q, want the payload %q", pay.DeepLink, pay.Payload)
	}
	u, err := url.Parse(pay.Payload)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Get("test") != "1" || q.Get("type") != "02" || q.Get("cur") != "RUB" {
		t.Errorf("query %v: want type=02, cur=RUB, test=1", q)
	}
	i := strings.Index(pay.Payload, "&crc=")
	if got, want := pay.Payload[i+len("&crc="):], crcHex(pay.Payload[:i]); got != want {
		t.Errorf("crc = %s, want %s", got, want)
	}
}

func crcHex(s string) string {
	const hex = "0123456789ABCDEF"
	c := crc16CCITTFalse(s)
	return string([]byte{hex[c>>12], hex[c>>8&0xF], hex[c>>4&0xF], hex[c&0xF]})
}

// The crc of real NSPK links (published examples) is CRC-16/CCITT-FALSE of
// everything before "&crc=": the test links compute it the same way.
func TestCRC_MatchesRealNSPKLinks(t *testing.T) {
	for _, link := range []string{
		"https://qr.nspk.ru/AS100001ORTF4GAF80KPJ53K186D9A3G?type=01&bank=100000000007&crc=0C8A",
		"https://qr.nspk.ru/BD10006LQ6LNI7R88AJBQP5AE5GEBSNT?type=02&bank=100000000015&sum=10000&cur=RUB&crc=B4F7",
		"https://qr.nspk.ru/AD100004BAL7227F9BNP6KNE007J9B3K?type=02&bank=100000000007&sum=1&cur=RUB&crc=AB75",
	} {
		i := strings.Index(link, "&crc=")
		if got, want := crcHex(link[:i]), link[i+len("&crc="):]; got != want {
			t.Errorf("%s: crc %s, want %s", link, got, want)
		}
	}
}

func TestCreatePayment_RejectsMalformedRequests(t *testing.T) {
	p := NewTest(TestOptions{})
	for name, r := range map[string]ticketing.PaymentRequest{
		"no order id": request("", 100),
		"zero amount": request("ord-1", 0),
		"negative":    request("ord-1", -1),
		"lowercase":   func() ticketing.PaymentRequest { r := request("ord-1", 100); r.Currency = "rub"; return r }(),
		"no currency": func() ticketing.PaymentRequest { r := request("ord-1", 100); r.Currency = ""; return r }(),
	} {
		if _, err := p.CreatePayment(context.Background(), r); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%s: err = %v, want ErrInvalidRequest", name, err)
		}
	}
}

func TestCreatePayment_FailHookErrorIsReturnedWrapped(t *testing.T) {
	down := errors.New("provider unavailable")
	var seen []string
	p := NewTest(TestOptions{Fail: func(r ticketing.PaymentRequest) error {
		seen = append(seen, r.OrderID)
		if r.OrderID == "ord-fail" {
			return down
		}
		return nil
	}})
	_, err := p.CreatePayment(context.Background(), request("ord-fail", 100))
	if !errors.Is(err, down) || err == down {
		t.Errorf("err = %v, want the hook's error wrapped", err)
	}
	if _, err := p.CreatePayment(context.Background(), request("ord-ok", 100)); err != nil {
		t.Errorf("hook returning nil: err = %v, want success", err)
	}
	if strings.Join(seen, ",") != "ord-fail,ord-ok" {
		t.Errorf("hook saw %v", seen)
	}
}

func TestRefund_SettlesAfterTheConfiguredDelay(t *testing.T) {
	ctx := context.Background()
	r := ticketing.RefundRequest{OrderID: "ord-1", RefundID: "ref-1", Amount: 100, Currency: "RUB"}
	got, err := NewTest(TestOptions{RefundSettleAfter: 90 * time.Second}).Refund(ctx, r)
	if err != nil || got.SettleAfter != 90*time.Second {
		t.Errorf("Refund = %+v, %v; want SettleAfter 90s", got, err)
	}
	got, err = NewTest(TestOptions{}).Refund(ctx, r)
	if err != nil || got.SettleAfter != DefaultRefundSettleAfter {
		t.Errorf("unset delay: Refund = %+v, %v; want the default %v (0 would mean settle by callback)", got, err, DefaultRefundSettleAfter)
	}
}

func TestQRImage_IsSmall(t *testing.T) {
	p := NewTest(TestOptions{})
	pay, err := p.CreatePayment(context.Background(), request("ord-0123456789-abcdef", 99999999))
	if err != nil {
		t.Fatal(err)
	}
	uri, err := p.QRImage(pay.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if len(uri) > 4<<10 {
		t.Errorf("QR data URI is %d bytes, want under 4 KiB", len(uri))
	}
	if _, err := p.QRImage(""); err == nil {
		t.Error("QRImage(\"\"): want an error")
	}
	t.Logf("payload %d chars, data URI %d bytes", len(pay.Payload), len(uri))
}
