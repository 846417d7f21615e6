package webhook

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// hits counts requests reaching a test server.
type hits struct{ n atomic.Int64 }

func (h *hits) wrap(f http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { h.n.Add(1); f(w, r) }
}

func TestSenderDefaults(t *testing.T) {
	s := NewSender(SenderOptions{AllowLoopback: true})
	if s.timeout != 10*time.Second || s.userAgent != "tix-webhooks/1.0 (+https://tix.example/docs/webhooks)" || s.maxBody != 4096 {
		t.Fatalf("defaults %v %q %d", s.timeout, s.userAgent, s.maxBody)
	}
	for _, c := range []*http.Client{s.live, s.test} {
		tr := c.Transport.(*http.Transport)
		if tr.Proxy != nil || tr.DisableKeepAlives || tr.MaxIdleConnsPerHost < 2 || c.CheckRedirect == nil || c.Timeout != 10*time.Second {
			t.Fatalf("transport %+v", tr)
		}
	}
}

func TestPostOK(t *testing.T) {
	var got struct {
		method, ct, ua, sig, body string
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.method, got.ct, got.ua, got.sig, got.body = r.Method, r.Header.Get("Content-Type"), r.UserAgent(), r.Header.Get("Tix-Signature"), string(b)
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"nonce":"n_1"}`)
	}))
	defer srv.Close()

	s := NewSender(SenderOptions{AllowLoopback: true})
	res := s.Post(context.Background(), false, srv.URL+"/hook", []byte(`{"id":"evt_1"}`), Signature{Tix: "t=1,v1=ab"})
	if !res.OK() || res.Err != nil || res.StatusCode != 202 || string(res.Body) != `{"nonce":"n_1"}` || res.ErrorText() != "" {
		t.Fatalf("result %+v %q", res, res.ErrorText())
	}
	if res.Duration <= 0 {
		t.Fatalf("duration %v", res.Duration)
	}
	if got.method != "POST" || got.ct != "application/json" || got.ua != DefaultUserAgent || got.sig != "t=1,v1=ab" || got.body != `{"id":"evt_1"}` {
		t.Fatalf("request %+v", got)
	}

	// A custom user agent.
	s2 := NewSender(SenderOptions{AllowLoopback: true, UserAgent: "custom/2"})
	if res := s2.Post(context.Background(), false, srv.URL, nil, Signature{Tix: "x"}); !res.OK() || got.ua != "custom/2" {
		t.Fatalf("ua %q %+v", got.ua, res)
	}
}

func TestPostServerError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer srv.Close()
	res := NewSender(SenderOptions{AllowLoopback: true}).Post(context.Background(), false, srv.URL, []byte(`{}`), Signature{})
	if res.OK() || res.Err != nil || res.StatusCode != 500 || res.ErrorText() != "HTTP 500" || !strings.Contains(string(res.Body), "boom") {
		t.Fatalf("result %+v %q", res, res.ErrorText())
	}
}

func TestPostRedirectNotFollowed(t *testing.T) {
	var target hits
	dst := httptest.NewServer(target.wrap(func(w http.ResponseWriter, r *http.Request) {}))
	defer dst.Close()
	for _, code := range []int{301, 302, 303, 307, 308} {
		src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, dst.URL+"/elsewhere", code)
		}))
		res := NewSender(SenderOptions{AllowLoopback: true}).Post(context.Background(), false, src.URL, []byte(`{}`), Signature{})
		src.Close()
		want := "redirect not followed (" + strconv.Itoa(code) + " to " + dst.URL + "/elsewhere)"
		if res.OK() || res.StatusCode != code || !errors.Is(res.Err, ErrRedirect) || res.ErrorText() != want {
			t.Fatalf("%d: %+v %q", code, res, res.ErrorText())
		}
	}
	if n := target.n.Load(); n != 0 {
		t.Fatalf("redirect target hit %d times", n)
	}
}

func TestPostTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	res := NewSender(SenderOptions{AllowLoopback: true, Timeout: 150 * time.Millisecond}).Post(context.Background(), false, srv.URL, []byte(`{}`), Signature{})
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("took %v", el)
	}
	if res.OK() || res.StatusCode != 0 || res.ErrorText() != "timeout after 150ms" {
		t.Fatalf("result %+v %q", res, res.ErrorText())
	}
}

func TestPostTimeoutWhileReadingBody(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		_, _ = io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	res := NewSender(SenderOptions{AllowLoopback: true, Timeout: 150 * time.Millisecond}).Post(context.Background(), false, srv.URL, []byte(`{}`), Signature{})
	if res.OK() || res.StatusCode != 200 || res.ErrorText() != "reading the response: timeout after 150ms" {
		t.Fatalf("result %+v %q", res, res.ErrorText())
	}
}

func TestPostBodyTruncated(t *testing.T) {
	big := strings.Repeat("x", 10000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, big)
	}))
	defer srv.Close()
	res := NewSender(SenderOptions{AllowLoopback: true, MaxResponseBytes: 100}).Post(context.Background(), false, srv.URL, nil, Signature{})
	if !res.OK() || len(res.Body) != 100 || string(res.Body) != big[:100] {
		t.Fatalf("result %d %+v", len(res.Body), res.Err)
	}
	res = NewSender(SenderOptions{AllowLoopback: true}).Post(context.Background(), false, srv.URL, nil, Signature{})
	if !res.OK() || len(res.Body) != 4096 {
		t.Fatalf("default limit: %d", len(res.Body))
	}
	// A body far beyond the drain bound does not keep the sender reading.
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("y", 32<<10))
		for i := 0; i < 1<<12; i++ { // up to 128 MiB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer huge.Close()
	start := time.Now()
	res = NewSender(SenderOptions{AllowLoopback: true}).Post(context.Background(), false, huge.URL, nil, Signature{})
	if !res.OK() || len(res.Body) != 4096 || time.Since(start) > 5*time.Second {
		t.Fatalf("huge: %+v in %v", res.Err, time.Since(start))
	}
}

func TestPostConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	res := NewSender(SenderOptions{AllowLoopback: true}).Post(context.Background(), false, "http://"+addr, nil, Signature{})
	if res.OK() || res.ErrorText() != "connection refused" {
		t.Fatalf("result %+v %q", res, res.ErrorText())
	}
}

func TestPostCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := NewSender(SenderOptions{AllowLoopback: true}).Post(ctx, false, "http://127.0.0.1:1", nil, Signature{})
	if res.OK() || res.ErrorText() != "cancelled" {
		t.Fatalf("result %+v %q", res, res.ErrorText())
	}
}

func TestPostGuardLiveLoopback(t *testing.T) {
	var h hits
	srv := httptest.NewServer(h.wrap(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	tls := httptest.NewTLSServer(h.wrap(func(w http.ResponseWriter, r *http.Request) {}))
	defer tls.Close()

	s := NewSender(SenderOptions{AllowLoopback: true})
	for _, u := range []string{srv.URL, tls.URL} {
		res := s.Post(context.Background(), true, u, []byte(`{}`), Signature{})
		var ae *AddressError
		if res.OK() || res.StatusCode != 0 || !errors.As(res.Err, &ae) || !errors.Is(res.Err, ErrAddressNotAllowed) ||
			res.ErrorText() != "address not allowed: 127.0.0.1 is loopback" {
			t.Fatalf("%s: %+v %q", u, res, res.ErrorText())
		}
	}
	// A host name resolving to loopback is refused too: the guard sees the
	// resolved address, not the name.
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	res := s.Post(context.Background(), true, "http://localhost:"+port, []byte(`{}`), Signature{})
	if res.OK() || !errors.Is(res.Err, ErrAddressNotAllowed) || !strings.Contains(res.ErrorText(), "is loopback") {
		t.Fatalf("localhost: %+v %q", res, res.ErrorText())
	}
	if n := h.n.Load(); n != 0 {
		t.Fatalf("server hit %d times", n)
	}

	// The same URLs are fine for a test endpoint of a Sender that allows
	// loopback (the local stack's), and for live with AllowPrivate.
	if res := s.Post(context.Background(), false, "http://localhost:"+port, nil, Signature{}); !res.OK() {
		t.Fatalf("test endpoint to localhost: %+v", res)
	}
	if res := NewSender(SenderOptions{AllowPrivate: true}).Post(context.Background(), true, srv.URL, nil, Signature{}); !res.OK() {
		t.Fatalf("AllowPrivate: %+v", res)
	}
	if n := h.n.Load(); n != 2 {
		t.Fatalf("server hit %d times, want 2", n)
	}
}

// Without AllowLoopback (every Lambda function), test endpoints cannot reach
// loopback either: there it is the Lambda runtime API (127.0.0.1:9001).
func TestPostGuardTestLoopbackNeedsAllowLoopback(t *testing.T) {
	var h hits
	srv := httptest.NewServer(h.wrap(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	s := NewSender(SenderOptions{Timeout: 2 * time.Second})
	if s.AllowsLoopback() {
		t.Fatal("a default Sender allows loopback")
	}
	for _, u := range []string{srv.URL, "http://localhost:" + port, "http://[::1]:" + port, "http://127.0.0.1:9001/2018-06-01/runtime/invocation/next"} {
		res := s.Post(context.Background(), false, u, []byte(`{}`), Signature{})
		if res.OK() || res.StatusCode != 0 || !errors.Is(res.Err, ErrAddressNotAllowed) || !strings.Contains(res.ErrorText(), "is loopback") {
			t.Errorf("%s: %+v %q", u, res, res.ErrorText())
		}
	}
	if n := h.n.Load(); n != 0 {
		t.Fatalf("server hit %d times", n)
	}
	if !NewSender(SenderOptions{AllowLoopback: true}).AllowsLoopback() {
		t.Fatal("AllowLoopback is not reported")
	}
}

func TestPostGuardIgnoresProxyEnv(t *testing.T) {
	var proxy hits
	p := httptest.NewServer(proxy.wrap(func(w http.ResponseWriter, r *http.Request) {}))
	defer p.Close()
	t.Setenv("HTTP_PROXY", p.URL)
	t.Setenv("HTTPS_PROXY", p.URL)
	t.Setenv("NO_PROXY", "")
	res := NewSender(SenderOptions{AllowLoopback: true}).Post(context.Background(), true, "http://10.0.0.1/hook", nil, Signature{})
	if res.OK() || res.ErrorText() != "address not allowed: 10.0.0.1 is private" || proxy.n.Load() != 0 {
		t.Fatalf("result %+v %q, proxy hits %d", res, res.ErrorText(), proxy.n.Load())
	}
}

func TestPostGuardPrivateForTest(t *testing.T) {
	// Test endpoints may reach loopback, never private or metadata addresses.
	s := NewSender(SenderOptions{AllowLoopback: true, Timeout: 2 * time.Second})
	for _, u := range []string{"http://10.1.2.3/", "http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://[::ffff:192.168.1.1]/", "http://0.0.0.0:1/"} {
		res := s.Post(context.Background(), false, u, nil, Signature{})
		if res.OK() || !errors.Is(res.Err, ErrAddressNotAllowed) {
			t.Errorf("%s: %+v %q", u, res, res.ErrorText())
		}
	}
}

func TestBlockedReason(t *testing.T) {
	cases := []struct {
		addr       string
		live, test string // reason (by default; with loopback allowed), "" when allowed
	}{
		{"8.8.8.8", "", ""},
		{"1.1.1.1", "", ""},
		{"2606:4700:4700::1111", "", ""},
		{"::ffff:8.8.8.8", "", ""},
		{"2002:808:808::1", "", ""}, // 6to4 of 8.8.8.8
		{"127.0.0.1", "loopback", ""},
		{"127.9.9.9", "loopback", ""},
		{"::1", "loopback", ""},
		{"::ffff:127.0.0.1", "loopback", ""},
		{"10.0.0.1", "private", "private"},
		{"172.16.0.1", "private", "private"},
		{"172.31.255.255", "private", "private"},
		{"172.32.0.1", "", ""},
		{"192.168.1.1", "private", "private"},
		{"fc00::1", "private (unique local)", "private (unique local)"},
		{"fd12:3456::1", "private (unique local)", "private (unique local)"},
		{"169.254.169.254", "link-local (cloud metadata lives there)", "link-local (cloud metadata lives there)"},
		{"fd00:ec2::254", "the cloud metadata service", "the cloud metadata service"},
		{"fe80::1", "link-local", "link-local"},
		{"fe80::1%eth0", "link-local", "link-local"},
		{"224.0.0.1", "multicast", "multicast"},
		{"ff02::1", "multicast", "multicast"},
		{"100.64.0.1", "shared address space (CGNAT)", "shared address space (CGNAT)"},
		{"100.127.255.255", "shared address space (CGNAT)", "shared address space (CGNAT)"},
		{"100.128.0.1", "", ""},
		{"0.0.0.0", "unspecified or \"this network\" (0.0.0.0/8)", "unspecified or \"this network\" (0.0.0.0/8)"},
		{"0.1.2.3", "unspecified or \"this network\" (0.0.0.0/8)", "unspecified or \"this network\" (0.0.0.0/8)"},
		{"::", "unspecified", "unspecified"},
		{"255.255.255.255", "reserved or broadcast", "reserved or broadcast"},
		{"::ffff:10.0.0.1", "private", "private"},
		{"::ffff:169.254.169.254", "link-local (cloud metadata lives there)", "link-local (cloud metadata lives there)"},
		{"::ffff:0.0.0.0", "unspecified or \"this network\" (0.0.0.0/8)", "unspecified or \"this network\" (0.0.0.0/8)"},
		{"64:ff9b::a00:1", "private (in an IPv6 address)", "private (in an IPv6 address)"},
		{"64:ff9b::7f00:1", "loopback (in an IPv6 address)", "loopback (in an IPv6 address)"},
		{"::10.0.0.1", "private (in an IPv6 address)", "private (in an IPv6 address)"},
		{"2002:a9fe:a9fe::", "link-local (cloud metadata lives there) (in an IPv6 address)", "link-local (cloud metadata lives there) (in an IPv6 address)"},
	}
	for _, c := range cases {
		a := netip.MustParseAddr(c.addr)
		if got := blockedReason(a, guard{}); got != c.live {
			t.Errorf("%s: %q, want %q", c.addr, got, c.live)
		}
		if got := blockedReason(a, guard{loopback: true}); got != c.test {
			t.Errorf("%s loopback allowed: %q, want %q", c.addr, got, c.test)
		}
	}
}

func TestCheckDialAddress(t *testing.T) {
	if err := checkDialAddress("93.184.216.34:443", guard{}); err != nil {
		t.Fatal(err)
	}
	if err := checkDialAddress("[::ffff:10.0.0.1]:443", guard{}); err == nil || err.Error() != "address not allowed: ::ffff:10.0.0.1 is private" {
		t.Fatalf("mapped: %v", err)
	}
	if err := checkDialAddress("[fe80::1%eth0]:443", guard{loopback: true}); err == nil || err.Error() != "address not allowed: fe80::1 is link-local" {
		t.Fatalf("zone: %v", err)
	}
	if err := checkDialAddress("127.0.0.1:9001", guard{}); err == nil || err.Error() != "address not allowed: 127.0.0.1 is loopback" {
		t.Fatalf("loopback: %v", err)
	}
	if err := checkDialAddress("not-an-address:443", guard{loopback: true}); !errors.Is(err, ErrAddressNotAllowed) {
		t.Fatalf("unparsable: %v", err)
	}
}

func TestValidateURL(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", MaxURLLength)
	cases := []struct {
		live bool
		url  string
		want string // "" valid, else a fragment of the message
	}{
		{true, "https://example.com/webhooks", ""},
		{true, "https://example.com:8443/hooks?x=1", ""},
		{true, "HTTPS://Example.COM/x", ""},
		{true, "https://93.184.216.34/hook", ""},
		{true, "https://[2606:4700::1111]/hook", ""},
		{false, "https://example.com/webhooks", ""},
		{false, "http://localhost:3000/hook", ""},
		{false, "http://LOCALHOST./hook", ""},
		{false, "http://127.0.0.1:8080/hook", ""},
		{false, "http://127.1.2.3/hook", ""},
		{false, "http://[::1]:8080/hook", ""},
		{false, "https://localhost/hook", ""},
		{false, "https://10.0.0.1/hook", "address not allowed: 10.0.0.1 is private"},
		{true, "https://internal.example.com/hook", ""},

		{true, "http://example.com/hook", "live endpoints must use https"},
		{true, "http://localhost/hook", "live endpoints must use https"},
		{false, "http://example.com/hook", "http is allowed only to localhost"},
		{false, "http://10.0.0.1/hook", "http is allowed only to localhost"},
		{false, "http://localhost.example.com/hook", "http is allowed only to localhost"},
		{true, "ftp://example.com/", `scheme "ftp" is not supported`},
		{true, "javascript:alert(1)", "must be absolute"},
		{true, "mailto:a@example.com", "must be absolute"},
		{true, "/relative/path", "must be absolute"},
		{true, "example.com/hook", "must be absolute"},
		{true, "", "URL is empty"},
		{true, " https://example.com/", "spaces around it"},
		{true, "https:///path", "has no host"},
		{true, "https://:443/path", "has no host"},
		{true, "https://user:pass@example.com/", "user name or password"},
		{true, "https://user@example.com/", "user name or password"},
		{true, "https://example.com/hook#frag", "fragment"},
		{true, "https://example.com/hook#", "fragment"},
		{true, "https://example.com:99999/", "not a port number"},
		{true, "https://example.com:0/", "not a port number"},
		{true, "https://exa mple.com/", "not valid"},
		{true, "https://example.com/\x7f", "not valid"},
		{true, long, "at most 2048"},
		{true, "https://10.0.0.1/hook", "address not allowed: 10.0.0.1 is private"},
		{true, "https://127.0.0.1/hook", "address not allowed: 127.0.0.1 is loopback"},
		{true, "https://[::1]/hook", "address not allowed: ::1 is loopback"},
		{true, "https://169.254.169.254/latest", "address not allowed: 169.254.169.254 is link-local"},
		{true, "https://[fd00:ec2::254]/", "address not allowed: fd00:ec2::254 is the cloud metadata service"},
		{true, "https://[::ffff:192.168.0.1]/", "address not allowed: ::ffff:192.168.0.1 is private"},
		{true, "https://100.64.1.1/", "CGNAT"},
		{true, "https://0.0.0.0/", "address not allowed: 0.0.0.0"},
		{true, "https://[fe80::1%25eth0]/", "address not allowed: fe80::1 is link-local"},
		{true, "https://localhost/hook", "address not allowed: localhost is loopback"},
		{true, "https://api.localhost/hook", "is loopback"},
	}
	for _, c := range cases {
		err := ValidateURL(c.live, true, c.url)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("live=%v %q: %v", c.live, c.url, err)
		case c.want != "" && err == nil:
			t.Errorf("live=%v %q: accepted", c.live, c.url)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("live=%v %q: %v (want %q)", c.live, c.url, err, c.want)
		}
	}
	if err := ValidateURL(true, true, "https://example.com/"+strings.Repeat("a", MaxURLLength-len("https://example.com/"))); err != nil {
		t.Errorf("exactly 2048: %v", err)
	}
}

// Outside the local stack (allowLoopback false: every Lambda function), a
// test endpoint on loopback is refused when it is saved, as a live one is.
func TestValidateURLWithoutLoopback(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"https://example.com/webhooks", ""},
		{"https://93.184.216.34/hook", ""},
		{"http://127.0.0.1:9001/2018-06-01/runtime/invocation/next", "test endpoints must use https"},
		{"http://localhost:3000/hook", "test endpoints must use https"},
		{"https://127.0.0.1:9001/", "address not allowed: 127.0.0.1 is loopback"},
		{"https://[::1]/hook", "address not allowed: ::1 is loopback"},
		{"https://[::ffff:127.0.0.1]/hook", "is loopback"},
		{"https://localhost/hook", "address not allowed: localhost is loopback"},
		{"https://LOCALHOST./hook", "is loopback"},
		{"https://api.localhost/hook", "is loopback"},
		{"https://10.0.0.1/hook", "is private"},
	} {
		err := ValidateURL(false, false, c.url)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.url, err)
		case c.want != "" && err == nil:
			t.Errorf("%q: accepted", c.url)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("%q: %v (want %q)", c.url, err, c.want)
		}
	}
}
