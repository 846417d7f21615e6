package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"tix/internal/dashboard"
	"tix/internal/dashboard/account"
	"tix/internal/emailjobs"
)

// invitation is the output of organizers invite: the link is the secret
// (it works once, until expires_at).
type invitation struct {
	OrganizerID string    `json:"organizer_id"`
	Email       string    `json:"email"`
	Role        string    `json:"role"`
	Link        string    `json:"link"`
	ExpiresAt   time.Time `json:"expires_at"`
	Emailed     bool      `json:"emailed"`
}

// organizersInvite invites a person into an organizer's dashboard with a
// role, as an owner does on the Team page: the link is printed for the
// operator and written as an email job (sent by the stack's sweep when it
// sends email).
func organizersInvite(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("organizers invite", flag.ContinueOnError)
	id := fs.String("id", "", "organizer id")
	addr := fs.String("email", "", "the person's email address")
	role := fs.String("role", string(account.Owner), "owner, developer, support or viewer")
	base := fs.String("dashboard-url", "http://127.0.0.1:8080/dashboard", "the dashboard's URL (on AWS: the stack's ApiBaseUrl followed by /dashboard)")
	noEmail := fs.Bool("no-email", false, "only print the link; write no email job")
	if err := parseNamed(fs, args, "id", "email"); err != nil {
		return err
	}
	to := account.NormalizeEmail(*addr)
	r := account.Role(*role)
	switch {
	case !emailjobs.ValidAddress(to):
		return usagef("--email %q is not an email address", *addr)
	case !r.Valid():
		return usagef("--role must be owner, developer, support or viewer")
	case !strings.HasPrefix(*base, "https://") && !strings.HasPrefix(*base, "http://"):
		return usagef("--dashboard-url must be an http(s) URL such as https://api.example/v1/dashboard")
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	if _, err := st.Organizers.GetOrganizer(ctx, *id); err != nil {
		return err
	}
	now := a.clock.Now()
	ttl := dashboard.DefaultSettings.InviteTTL
	secret, err := dashboard.Invite(ctx, st.Accounts(), now, ttl, *id, to, r, "operator")
	if err != nil {
		return err
	}
	out := invitation{OrganizerID: *id, Email: to, Role: string(r), Link: strings.TrimRight(*base, "/") + "/invite?t=" + secret, ExpiresAt: now.UTC().Add(ttl)}
	if !*noEmail {
		if err := a.mailer(st).AccountEmail(ctx, *id, to, emailjobs.CauseMemberInvite, out.Link); err != nil {
			slog.Warn("the invitation email job was not written; give the person the link", "error", err)
		} else {
			out.Emailed = true
		}
	}
	return a.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "Invited %s into %s as %s. The link works once, until %s:\n\n  %s\n\n", to, *id, r, formatTime(&out.ExpiresAt), out.Link)
		if out.Emailed {
			fmt.Fprintln(w, "An email with the link is queued: the stack's sweep sends it within a minute or two when it sends email.")
		}
		fmt.Fprintln(w, "The person opens it, sets a password (or confirms theirs) and is signed in.")
	})
}
