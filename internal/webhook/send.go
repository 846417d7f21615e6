package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SenderOptions configure a Sender; zero values take the defaults.
type SenderOptions struct {
	// Timeout bounds the whole exchange: connect, TLS, request, response
	// headers and body (default 10s).
	Timeout time.Duration
	// UserAgent is sent with every POST (default DefaultUserAgent).
	UserAgent string
	// MaxResponseBytes is how much of a response body is kept (default 4096);
	// the rest is drained up to a bound and discarded.
	MaxResponseBytes int64
	// AllowLoopback lets test endpoints reach loopback (127.0.0.0/8, [::1]):
	// a receiver on the developer's machine. Only the local stack and tests set
	// it, never a Lambda function: there loopback is the Lambda runtime API.
	// Live endpoints never reach loopback.
	AllowLoopback bool
	// AllowPrivate disables the address guard entirely, for tests only: live
	// endpoints may then reach private addresses.
	AllowPrivate bool
}

// Sender defaults.
const (
	DefaultSendTimeout      = 10 * time.Second
	DefaultUserAgent        = "tix-webhooks/1.0 (+https://tix.example/docs/webhooks)"
	DefaultMaxResponseBytes = 4096
)

// drainBytes is how much of a response beyond MaxResponseBytes is read and
// thrown away so the connection can be reused; a longer body closes it.
const drainBytes = 64 << 10

// Sender makes the outbound POST of an attempt. It is safe for concurrent
// use; build one per process and share it (its connections are kept alive).
//
// Every connection passes the address guard at connect time, after DNS
// resolution, on the address actually dialled: private, link-local
// (including cloud metadata), multicast, CGNAT, reserved and unspecified
// addresses are refused, and loopback too unless the endpoint is a test one
// and the Sender was built with AllowLoopback (the local stack). Proxies from
// the environment are not used, and redirects are not followed, so neither can
// go around it.
type Sender struct {
	live, test    *http.Client
	timeout       time.Duration
	userAgent     string
	maxBody       int64
	allowLoopback bool
}

// NewSender builds a Sender and its two clients (live and test endpoints).
func NewSender(o SenderOptions) *Sender {
	if o.Timeout <= 0 {
		o.Timeout = DefaultSendTimeout
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.MaxResponseBytes <= 0 {
		o.MaxResponseBytes = DefaultMaxResponseBytes
	}
	return &Sender{
		live:          newClient(o, guard{}),
		test:          newClient(o, guard{loopback: o.AllowLoopback}),
		timeout:       o.Timeout,
		userAgent:     o.UserAgent,
		maxBody:       o.MaxResponseBytes,
		allowLoopback: o.AllowLoopback,
	}
}

// AllowsLoopback reports whether test endpoints may be on loopback (nil: no).
func (s *Sender) AllowsLoopback() bool { return s != nil && s.allowLoopback }

// guard is what the address guard lets through besides public addresses.
type guard struct{ loopback bool }

func newClient(o SenderOptions, g guard) *http.Client {
	d := &net.Dialer{Timeout: o.Timeout, KeepAlive: 30 * time.Second}
	if !o.AllowPrivate {
		d.Control = func(network, address string, _ syscall.RawConn) error {
			return checkDialAddress(address, g)
		}
	}

	t := &http.Transport{
		Proxy:                  nil, // never HTTP(S)_PROXY: the guard must see the real peer
		DialContext:            d.DialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    o.Timeout,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: t,
		Timeout:   o.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// Result is the outcome of one POST.
type Result struct {
	// StatusCode is the response status, 0 when no response was received.
	StatusCode int
	// Body is the start of the response body (at most MaxResponseBytes).
	Body []byte
	// Err is why the attempt failed without a usable response: no response
	// (timeout, connection refused, address not allowed, TLS, DNS), a
	// redirect (not followed), or a body cut short. It is nil for any other
	// response, 2xx or not; Error() is already the short text of ErrorText.
	Err error
	// Duration is from the start of the POST to the end of reading the body.
	Duration time.Duration
}

// OK reports whether the receiver acknowledged: a 2xx response and no error.
func (r Result) OK() bool { return r.Err == nil && r.StatusCode >= 200 && r.StatusCode <= 299 }

// ErrorText is the short text of a failed attempt for the delivery record,
// e.g. "timeout after 10s", "connection refused", "redirect not followed (302
// to https://...)", "HTTP 500" or "address not allowed: 10.0.0.1 is private";
// "" when OK.
func (r Result) ErrorText() string {
	switch {
	case r.Err != nil:
		return clipText(r.Err.Error(), 300)
	case r.OK():
		return ""
	default:
		return "HTTP " + strconv.Itoa(r.StatusCode)
	}
}

// ErrRedirect is wrapped by Result.Err when the receiver answered 3xx.
var ErrRedirect = errors.New("redirect not followed")

// sendError is a classified failure: its text is what the delivery record
// shows, and it unwraps to the cause.
type sendError struct {
	text  string
	cause error
}

func (e *sendError) Error() string { return e.text }
func (e *sendError) Unwrap() error { return e.cause }

// Post sends body to url with the signature headers, for a live endpoint or a
// test one (only a test one may reach loopback, and only with AllowLoopback). url is expected
// to have passed ValidateURL when the endpoint was saved.
func (s *Sender) Post(ctx context.Context, live bool, url string, body []byte, sig Signature) Result {
	start := time.Now()
	c := s.test
	if live {
		c = s.live
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Result{Err: &sendError{"invalid URL: " + clipText(err.Error(), 200), err}, Duration: time.Since(start)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", s.userAgent)
	sig.set(req.Header)

	resp, err := c.Do(req)
	if err != nil {
		return Result{Err: s.classify(ctx, err), Duration: time.Since(start)}
	}
	r := Result{StatusCode: resp.StatusCode}
	r.Body, err = io.ReadAll(io.LimitReader(resp.Body, s.maxBody))
	if err != nil {
		r.Err = &sendError{"reading the response: " + s.classify(ctx, err).Error(), err}
	} else {
		_, _ = io.CopyN(io.Discard, resp.Body, drainBytes)
	}
	_ = resp.Body.Close() // the body is read: a close error changes nothing
	if r.Err == nil && resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		text := fmt.Sprintf("redirect not followed (%d)", resp.StatusCode)
		if loc := resp.Header.Get("Location"); loc != "" {
			text = fmt.Sprintf("redirect not followed (%d to %s)", resp.StatusCode, clipText(loc, 200))
		}
		r.Err = &sendError{text, ErrRedirect}
	}
	r.Duration = time.Since(start)
	return r
}

// classify turns a transport error into a short, stable text.
func (s *Sender) classify(ctx context.Context, err error) error {
	var (
		addrErr *AddressError
		dnsErr  *net.DNSError
		netErr  net.Error
		certErr *tls.CertificateVerificationError
		hostErr x509.HostnameError
		authErr x509.UnknownAuthorityError
		invErr  x509.CertificateInvalidError
		recErr  tls.RecordHeaderError
	)
	text := ""
	switch {
	case errors.As(err, &addrErr):
		text = addrErr.Error()
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		text = "cancelled"
	case ctx.Err() != nil:
		text = "deadline of the caller exceeded"
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			text = "host not found: " + dnsErr.Name
		} else {
			text = "DNS lookup failed for " + dnsErr.Name
		}
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		text = "timeout after " + s.timeout.String()
	case errors.Is(err, syscall.ECONNREFUSED):
		text = "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		text = "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		text = "host unreachable"
	case errors.As(err, &hostErr):
		text = "TLS certificate error: " + hostErr.Error()
	case errors.As(err, &authErr):
		text = "TLS certificate error: signed by an unknown authority"
	case errors.As(err, &invErr):
		text = "TLS certificate error: " + invErr.Error()
	case errors.As(err, &certErr):
		text = "TLS certificate error: " + certErr.Err.Error()
	case errors.As(err, &recErr):
		text = "TLS handshake failed: the server did not answer TLS (is it plain http?)"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		text = "connection closed before a complete response"
	default:
		var ue *url.Error
		if errors.As(err, &ue) {
			text = ue.Err.Error()
		} else {
			text = err.Error()
		}
	}
	return &sendError{clipText(text, 200), err}
}

// AddressError is the address guard refusing a connection. It wraps
// ErrAddressNotAllowed.
type AddressError struct {
	Addr   netip.Addr // the address being connected to (or written in the URL)
	Reason string     // e.g. "private", "loopback", "link-local"
}

// ErrAddressNotAllowed is wrapped by every AddressError.
var ErrAddressNotAllowed = errors.New("address not allowed")

func (e *AddressError) Error() string {
	return "address not allowed: " + e.Addr.String() + " is " + e.Reason
}

func (e *AddressError) Unwrap() error { return ErrAddressNotAllowed }

// checkDialAddress is the dialer's Control: address is the "ip:port" being
// connected to, after resolution. Anything unparsable is refused.
func checkDialAddress(address string, g guard) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse %q", ErrAddressNotAllowed, address)
	}
	if reason := blockedReason(ap.Addr(), g); reason != "" {
		return &AddressError{Addr: ap.Addr().WithZone(""), Reason: reason}
	}
	return nil
}

type blockedPrefix struct {
	p      netip.Prefix
	reason string
}

// blocked4 and blocked6 are the ranges the guard refuses, loopback apart.
var (
	blocked4 = prefixes(
		"0.0.0.0/8", "unspecified or \"this network\" (0.0.0.0/8)",
		"10.0.0.0/8", "private",
		"100.64.0.0/10", "shared address space (CGNAT)",
		"169.254.0.0/16", "link-local (cloud metadata lives there)",
		"172.16.0.0/12", "private",
		"192.0.0.0/24", "reserved for IETF protocol assignments",
		"192.168.0.0/16", "private",
		"198.18.0.0/15", "reserved for benchmarking",
		"224.0.0.0/4", "multicast",
		"240.0.0.0/4", "reserved or broadcast",
	)
	blocked6 = prefixes(
		"fd00:ec2::254/128", "the cloud metadata service",
		"fc00::/7", "private (unique local)",
		"fe80::/10", "link-local",
		"fec0::/10", "site-local (deprecated private)",
		"ff00::/8", "multicast",
		"100::/64", "reserved for discard",
		"2001:db8::/32", "reserved for documentation",
	)
	loopback4 = netip.MustParsePrefix("127.0.0.0/8")
	// IPv6 forms that carry an IPv4 address, checked as that address:
	// IPv4-compatible (::a.b.c.d, deprecated), NAT64 (64:ff9b::/96) and 6to4.
	compat6 = netip.MustParsePrefix("::/96")
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
)

func prefixes(pairs ...string) []blockedPrefix {
	out := make([]blockedPrefix, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, blockedPrefix{netip.MustParsePrefix(pairs[i]), pairs[i+1]})
	}
	return out
}

// blockedReason says why the guard refuses to connect to a, or "" when it
// may. Loopback is refused unless g allows it.
func blockedReason(a netip.Addr, g guard) string {
	a = a.WithZone("")
	if !a.IsValid() {
		return "not a valid address"
	}
	if a.Is4In6() {
		a = a.Unmap()
	}
	if a.Is6() {
		switch {
		case a.IsUnspecified():
			return "unspecified"
		case a.IsLoopback():
			if !g.loopback {
				return "loopback"
			}
			return ""
		case compat6.Contains(a) || nat64.Contains(a):
			b := a.As16()
			return embedded4(netip.AddrFrom4([4]byte(b[12:16])), g)
		case sixTo4.Contains(a):
			b := a.As16()
			return embedded4(netip.AddrFrom4([4]byte(b[2:6])), g)
		}
		for _, bp := range blocked6 {
			if bp.p.Contains(a) {
				return bp.reason
			}
		}
		return ""
	}
	if loopback4.Contains(a) {
		if !g.loopback {
			return "loopback"
		}
		return ""
	}
	for _, bp := range blocked4 {
		if bp.p.Contains(a) {
			return bp.reason
		}
	}
	return ""
}

// embedded4 checks the IPv4 address inside an IPv6 one; loopback reached
// that way is refused even for test endpoints (no local server listens so).
func embedded4(a netip.Addr, g guard) string {
	if loopback4.Contains(a) {
		return "loopback (in an IPv6 address)"
	}
	if r := blockedReason(a, g); r != "" {
		return r + " (in an IPv6 address)"
	}
	return ""
}

// MaxURLLength is the longest endpoint URL accepted.
const MaxURLLength = 2048

// ValidateURL checks an endpoint URL when it is created or changed, for a
// live endpoint or a test one; every error is a sentence for the operator.
// It wants an absolute URL of at most 2048 characters with a host, no
// user:password and no fragment; https for live endpoints; https for test
// endpoints, or, when allowLoopback (the local stack), http or https to
// localhost, 127.0.0.0/8 or [::1]. An IP address the address guard would
// refuse, and localhost names unless allowed, are rejected now; other host
// names are checked when connecting, on the addresses they resolve to.
func ValidateURL(live, allowLoopback bool, raw string) error {
	if len(raw) > MaxURLLength {
		return fmt.Errorf("the URL is %d characters long; at most %d are allowed", len(raw), MaxURLLength)
	}
	if strings.TrimSpace(raw) == "" {
		return errors.New("the URL is empty; give an absolute URL such as https://example.com/webhooks")
	}
	if strings.TrimSpace(raw) != raw {
		return errors.New("the URL has spaces around it")
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("the URL is not valid (%v); give an absolute URL such as https://example.com/webhooks", err)
	}
	if !u.IsAbs() || u.Opaque != "" {
		return errors.New("the URL must be absolute, such as https://example.com/webhooks")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "https" && scheme != "http" {
		return fmt.Errorf("the URL scheme %q is not supported; use https", clipText(u.Scheme, 20))
	}
	if u.User != nil {
		return errors.New("the URL must not contain a user name or password; authenticate requests with the " + SignatureHeader + " signature")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return errors.New("the URL must not contain a fragment (#...); it is never sent to the server")
	}
	host := u.Hostname()
	if host == "" {
		return errors.New("the URL has no host; give an absolute URL such as https://example.com/webhooks")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("the URL port %q is not a port number (1 to 65535)", clipText(p, 10))
		}
	}
	ip, ipErr := netip.ParseAddr(host)
	isIP := ipErr == nil
	loopback := isIP && ip.Unmap().IsLoopback() || isLocalhostName(host)
	g := guard{loopback: !live && allowLoopback}
	switch {
	case scheme == "http" && live:
		return errors.New("live endpoints must use https")
	case scheme == "http" && !g.loopback:
		return errors.New("test endpoints must use https")
	case scheme == "http" && !loopback:
		return errors.New("test endpoints must use https; http is allowed only to localhost, 127.0.0.1 (127.0.0.0/8) or [::1]")
	}
	reach := "live endpoints must be reachable on the public internet"
	if !live {
		reach = "test endpoints outside the local stack must be reachable on the public internet"
	}
	if isIP {
		if reason := blockedReason(ip, g); reason != "" {
			return fmt.Errorf("%v; %s", &AddressError{Addr: ip.WithZone(""), Reason: reason}, reach)
		}
	} else if loopback && !g.loopback {
		return fmt.Errorf("address not allowed: %s is loopback; %s", host, reach)
	}
	return nil
}

// isLocalhostName reports localhost and its subdomains, which always resolve
// to loopback (RFC 6761).
func isLocalhostName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}
