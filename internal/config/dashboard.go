package config

import (
	"fmt"
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
	return d
}
