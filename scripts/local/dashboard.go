package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"tix/internal/app"
	"tix/internal/app/dash"
	"tix/internal/dashboard"
	"tix/internal/dashboard/account"
	"tix/internal/demo"
)

// demoOwnerEmail signs in to the dashboard as the demo organizer's owner.
const demoOwnerEmail = "owner@example.com"

// demoOwner is the demo owner's sign-in, remembered like the demo keys in
// .data/demo-dashboard.json (passwords are stored only hashed).
type demoOwner struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// ensureDemoOwner makes owner@example.com a verified owner of the demo
// organizer, with the password remembered in dataDir (a new random one
// when none is remembered).
func ensureDemoOwner(ctx context.Context, st account.Store, dataDir string) (demoOwner, error) {
	path := filepath.Join(dataDir, "demo-dashboard.json")
	var o demoOwner
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &o)
	}
	u, err := st.GetUser(ctx, demoOwnerEmail)
	if err != nil && !errors.Is(err, account.ErrNotFound) {
		return o, err
	}
	now := time.Now().UTC()
	if u == nil || o.Email != demoOwnerEmail || !dashboard.VerifyPassword(o.Password, u.PasswordHash) {
		o = demoOwner{Email: demoOwnerEmail, Password: account.NewSecret()[:16]}
		hash := dashboard.HashPassword(o.Password)
		if u == nil {
			err = st.CreateUser(ctx, account.User{Email: o.Email, PasswordHash: hash, VerifiedAt: &now, CreatedAt: now})
		} else {
			err = st.SetPassword(ctx, o.Email, hash)
		}
		if err != nil {
			return o, err
		}
		b, _ := json.MarshalIndent(o, "", "  ")
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return o, err
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return o, err
		}
	}
	err = st.AddMember(ctx, account.Member{OrganizerID: demo.OrganizerID, Email: o.Email, Role: account.Owner, AddedAt: now, AddedBy: "operator"})
	if err != nil && !errors.Is(err, account.ErrExists) {
		return o, err
	}
	return o, nil
}

// withDashboard serves the organizer dashboard under its path beside the API,
// on one port, as API Gateway routes /dashboard to its own Lambda on AWS.
func withDashboard(a *app.App, api http.Handler) http.Handler {
	d := dash.NewDashboard(a).Handler()
	p := a.Config.Dashboard.Path
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == p:
			http.Redirect(w, r, p+"/", http.StatusMovedPermanently)
		case strings.HasPrefix(r.URL.Path, p+"/"):
			d.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	})
}
