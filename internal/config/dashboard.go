package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Dashboard is the organizer dashboard's settings (docs/dashboard.md).
type Dashboard struct {
	// OpenSignup: anyone may sign up (TIX_SIGNUP=open); otherwise only
	// invited people get an account (TIX_SIGNUP=invite).
	OpenSignup bool
	// Path is the URL path the dashboard is served under, without a
	// trailing slash (TIX_DASHBOARD_PATH).
	Path string
	// WebAuthnRPID and WebAuthnOrigins are the passkeys' relying party
	// (TIX_WEBAUTHN_RP_ID, TIX_WEBAUTHN_ORIGINS); empty: derived from
	// TIX_PUBLIC_URL by the dashboard.
	WebAuthnRPID    string
	WebAuthnOrigins []string
}

func (r *reader) dashboard() Dashboard {
	d := Dashboard{Path: strings.TrimRight(r.get("TIX_DASHBOARD_PATH"), "/")}
	switch v := r.get("TIX_SIGNUP"); v {
	case "open":
		d.OpenSignup = true
	case "invite":
	default:
		r.errs = append(r.errs, fmt.Errorf("TIX_SIGNUP=%q: must be open or invite", v))
	}
	if !strings.HasPrefix(d.Path, "/") || strings.ContainsAny(d.Path, "?#% ") || d.Path == "" {
		r.errs = append(r.errs, fmt.Errorf("TIX_DASHBOARD_PATH=%q: must be a URL path such as /dashboard", r.get("TIX_DASHBOARD_PATH")))
	}
	d.WebAuthnRPID = strings.ToLower(strings.TrimSpace(r.get("TIX_WEBAUTHN_RP_ID")))
	if d.WebAuthnRPID != "" {
		if err := CheckRPID(d.WebAuthnRPID); err != nil {
			r.errs = append(r.errs, fmt.Errorf("TIX_WEBAUTHN_RP_ID=%q: %w", d.WebAuthnRPID, err))
		}
	}
	for _, o := range strings.Split(r.get("TIX_WEBAUTHN_ORIGINS"), ",") {
		if o = strings.TrimRight(strings.TrimSpace(o), "/"); o == "" {
			continue
		}
		if err := CheckOrigin(o, d.WebAuthnRPID); err != nil {
			r.errs = append(r.errs, fmt.Errorf("TIX_WEBAUTHN_ORIGINS: %q: %w", o, err))
		}
		d.WebAuthnOrigins = append(d.WebAuthnOrigins, o)
	}
	return d
}

// CheckRPID says what is wrong with a WebAuthn relying party id: it must
// be a domain name (letters, digits, hyphens, dots), never an IP address,
// a URL or a host:port.
func CheckRPID(id string) error {
	if net.ParseIP(id) != nil {
		return fmt.Errorf("an IP address cannot be a passkey relying party (browsers refuse it): use a domain, localhost locally")
	}
	if len(id) > 253 || strings.HasPrefix(id, ".") || strings.HasSuffix(id, ".") || strings.Contains(id, "..") {
		return fmt.Errorf("must be a domain such as example.com")
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return fmt.Errorf("must be a domain such as example.com, without a scheme, port or path")
		}
	}
	return nil
}

// CheckOrigin says what is wrong with a passkey origin: scheme://host[:port]
// with nothing after it, https unless the host is localhost (browsers allow
// passkeys only in a secure context), its host rpID or below it (when rpID
// is known).
func CheckOrigin(origin, rpID string) error {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil ||
		u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Errorf("must be an origin such as https://tickets.example.com")
	}
	host := strings.ToLower(u.Hostname())
	if u.Scheme == "http" && host != "localhost" && !strings.HasSuffix(host, ".localhost") {
		return fmt.Errorf("must be https (browsers allow passkeys on plain http only for localhost)")
	}
	if rpID != "" && host != rpID && !strings.HasSuffix(host, "."+rpID) {
		return fmt.Errorf("its host is not %s nor below it (TIX_WEBAUTHN_RP_ID)", rpID)
	}
	return nil
}
