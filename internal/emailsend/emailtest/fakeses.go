package emailtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// FakeSES is an HTTP server speaking the SES v2 wire protocol (REST JSON) for
// SendEmail with raw content: POST /v2/email/outbound-emails. It keeps what
// it accepted, refuses recipients listed in Reject with MessageRejected, as
// SES does for a suppressed or (in the sandbox) unverified address, and
// answers Throttle recipients with TooManyRequestsException.
type FakeSES struct {
	URL string

	mu       sync.Mutex
	sent     []SESCall
	reject   map[string]bool
	throttle map[string]bool
}

// SESCall is one accepted SendEmail request.
type SESCall struct {
	From, ConfigurationSet string
	To                     []string
	Raw                    []byte
	MessageID              string
}

// NewFakeSES starts the fake; it stops when the test ends.
func NewFakeSES(tb testing.TB) *FakeSES {
	f := &FakeSES{reject: map[string]bool{}, throttle: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	tb.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// Reject makes SendEmail to address fail with MessageRejected.
func (f *FakeSES) Reject(address string) { f.mu.Lock(); f.reject[address] = true; f.mu.Unlock() }

// Throttle makes SendEmail to address fail with TooManyRequestsException.
func (f *FakeSES) Throttle(address string) { f.mu.Lock(); f.throttle[address] = true; f.mu.Unlock() }

// Sent is every accepted request to address to.
func (f *FakeSES) Sent(to string) []SESCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []SESCall
	for _, c := range f.sent {
		for _, a := range c.To {
			if a == to {
				out = append(out, c)
			}
		}
	}
	return out
}

// sendEmailRequest is SendEmail's JSON body (Raw.Data is base64, which
// encoding/json decodes into []byte).
type sendEmailRequest struct {
	FromEmailAddress     string
	ConfigurationSetName string
	Destination          struct{ ToAddresses []string }
	Content              struct {
		Raw *struct{ Data []byte }
	}
}

func (f *FakeSES) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v2/email/outbound-emails" {
		sesError(w, http.StatusNotFound, "NotFoundException", "unknown operation "+r.Method+" "+r.URL.Path)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		sesError(w, http.StatusForbidden, "AccessDeniedException", "request is not signed")
		return
	}
	var in sendEmailRequest
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Content.Raw == nil || len(in.Content.Raw.Data) == 0 {
		sesError(w, http.StatusBadRequest, "BadRequestException", fmt.Sprintf("want Content.Raw.Data (%v)", err))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, to := range in.Destination.ToAddresses {
		if f.reject[to] {
			sesError(w, http.StatusBadRequest, "MessageRejected", "Email address is not verified. The following identities failed the check: "+to)
			return
		}
		if f.throttle[to] {
			sesError(w, http.StatusTooManyRequests, "TooManyRequestsException", "Maximum sending rate exceeded.")
			return
		}
	}
	call := SESCall{From: in.FromEmailAddress, ConfigurationSet: in.ConfigurationSetName, To: in.Destination.ToAddresses,
		Raw: in.Content.Raw.Data, MessageID: fmt.Sprintf("0100fake%08d-ses", len(f.sent)+1)}
	f.sent = append(f.sent, call)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"MessageId": call.MessageID})
}

// sesError answers as SES v2 does: the error type in X-Amzn-ErrorType and a
// JSON body with the message.
func sesError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}
