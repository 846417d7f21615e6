package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"tix/internal/auth"
	"tix/internal/store"
	"tix/internal/ticketing"
)

// createdKey is the one output that carries a secret.
type createdKey struct {
	Secret string `json:"secret"`
	auth.Key
}

// keyView is a stored key as listed: never its secret.
type keyView struct {
	auth.Key
	Status string `json:"status"` // active, revoked or expired
}

func viewOf(k auth.Key, now time.Time) keyView {
	v := keyView{Key: k, Status: k.Status(now)}
	if v.Scopes == nil {
		v.Scopes = []string{}
	}
	if v.AllowedOrigins == nil {
		v.AllowedOrigins = []string{}
	}
	if v.AllowedIPs == nil {
		v.AllowedIPs = []string{}
	}
	return v
}

func keysCreate(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("keys create", flag.ContinueOnError)
	org := fs.String("organizer", "", "organizer id")
	typ := fs.String("type", "", "sk (secret, servers) or pk (publishable, browsers)")
	env := fs.String("env", "", "test or live")
	var scopes, origins, ips, events listFlag
	fs.Var(&scopes, "scopes", "comma-separated scopes (default: the type's default set)")
	fs.Var(&events, "events", "a door key: the events it may check in (sk with check-in scopes only; repeatable or comma list)")
	fs.Var(&origins, "origin", "allowed browser origin (pk only; repeatable or comma list)")
	fs.Var(&ips, "ip", "allowed IP address or CIDR (sk only; repeatable or comma list)")
	expires := fs.String("expires", "", "expiry: RFC 3339 time or a duration like 720h")
	name := fs.String("name", "", "label")
	if err := parseNamed(fs, args, "organizer"); err != nil {
		return err
	}
	kt := auth.KeyType(*typ)
	if kt != auth.Secret && kt != auth.Publishable {
		return usagef("--type must be sk or pk")
	}
	environment := ticketing.Environment(*env)
	if !environment.Valid() {
		return usagef("--env must be test or live")
	}
	now := a.clock.Now()
	req := auth.KeyRequest{OrganizerID: *org, Type: kt, Environment: environment, Name: *name, Scopes: scopes, Origins: origins, IPs: ips, Events: events}
	if *expires != "" {
		at, err := parseExpiry(*expires, now)
		if err != nil {
			return err
		}
		req.ExpiresAt = &at
	}
	k, secret, hash, err := auth.NewKey(req, now)
	var bad *ticketing.Error
	if errors.As(err, &bad) {
		return usagef("--%s: %s", keyFlags[bad.Param], bad.Message)
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	o, err := st.Organizers.GetOrganizer(ctx, *org)
	if err != nil {
		return err
	}
	if environment == ticketing.EnvLive && !o.Verified {
		return fmt.Errorf("organizer %s is not verified: live keys need a verified organizer (tixctl organizers verify --id %s)", o.ID, o.ID)
	}
	if err := st.Keys.CreateKey(ctx, k, hash); err != nil {
		return err
	}
	return a.emit(createdKey{Secret: secret, Key: k}, func(w io.Writer) { printCreatedKey(w, k, secret) })
}

// keyFlags names the flag of each field auth.NewKey may refuse.
var keyFlags = map[string]string{"type": "type", "environment": "env", "name": "name", "scopes": "scopes",
	"origins": "origin", "ips": "ip", "expires_at": "expires", "events": "events"}

// printCreatedKey is the text output of keys create: the secret, shown once.
func printCreatedKey(w io.Writer, k auth.Key, secret string) {
	fmt.Fprintf(w, "Created %s %s key %s for %s.\n\n  %s\n\n", k.Environment, k.Type, k.ID, k.OrganizerID, secret)
	fmt.Fprintln(w, "This secret is shown once and cannot be shown again: store it now.")
	fmt.Fprintf(w, "scopes:  %s\n", strings.Join(k.Scopes, ", "))
	if len(k.Events) > 0 {
		fmt.Fprintf(w, "events:  %s\n", strings.Join(k.Events, ", "))
	}
	if len(k.AllowedOrigins) > 0 {
		fmt.Fprintf(w, "origins: %s\n", strings.Join(k.AllowedOrigins, ", "))
	}
	if len(k.AllowedIPs) > 0 {
		fmt.Fprintf(w, "ips:     %s\n", strings.Join(k.AllowedIPs, ", "))
	}
	if k.ExpiresAt != nil {
		fmt.Fprintf(w, "expires: %s\n", formatTime(k.ExpiresAt))
	}
}

// parseExpiry accepts an RFC 3339 time or a duration from now; it must be in the future.
func parseExpiry(s string, now time.Time) (time.Time, error) {
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		d, derr := time.ParseDuration(s)
		if derr != nil {
			return time.Time{}, usagef("--expires must be an RFC 3339 time (2026-12-31T23:59:59Z) or a duration (720h)")
		}
		at = now.Add(d)
	}
	at = at.UTC().Truncate(time.Second)
	if !at.After(now) {
		return time.Time{}, usagef("--expires must be in the future")
	}
	return at, nil
}

func keysList(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("keys list", flag.ContinueOnError)
	org := fs.String("organizer", "", "organizer id")
	if err := parseNamed(fs, args, "organizer"); err != nil {
		return err
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	if _, err := st.Organizers.GetOrganizer(ctx, *org); err != nil {
		return err
	}
	keys, err := st.Keys.ListKeys(ctx, *org)
	if err != nil {
		return err
	}
	now := a.clock.Now()
	views := make([]keyView, len(keys))
	for i, k := range keys {
		views[i] = viewOf(k, now)
	}
	return a.emit(views, func(w io.Writer) {
		if len(views) == 0 {
			fmt.Fprintf(w, "Organizer %s has no keys: tixctl keys create --organizer %s --type sk --env test\n", *org, *org)
			return
		}
		rows := make([][]string, len(views))
		for i, v := range views {
			bound := strings.Join(append(append([]string{}, v.AllowedOrigins...), v.AllowedIPs...), ",")
			if bound == "" {
				bound = "-"
			}
			rows[i] = []string{v.ID, string(v.Type) + "_" + string(v.Environment), "..." + v.Last4, v.Status, formatTime(v.ExpiresAt), bound, v.Name}
		}
		table(w, []string{"ID", "KIND", "LAST4", "STATUS", "EXPIRES", "BOUND TO", "NAME"}, rows)
	})
}

// keysRevoke revokes a key named by its id (--id or the argument) or by the
// key itself; --leaked records that it was found in public (--source: where)
// and alerts its owner as a secret scanning report does.
func keysRevoke(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("keys revoke", flag.ContinueOnError)
	id := fs.String("id", "", "key id (key_...)")
	leaked := fs.Bool("leaked", false, "the key was found in a public source: record it and alert the owner")
	source := fs.String("source", "", "with --leaked: the public URL where the key was found")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *source != "" && !*leaked {
		return usagef("--source is for --leaked: where the leaked key was found")
	}
	if *source != "" {
		if u, err := url.Parse(*source); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return usagef("--source must be the URL where the key was found, e.g. https://github.com/owner/repo/blob/<commit>/file")
		}
	}
	st, k, err := a.namedKey(ctx, *id, rest, "keys revoke")
	if err != nil {
		return err
	}
	rev := auth.Revocation{At: a.clock.Now()}
	if *leaked {
		if k.Type == auth.Publishable {
			return usagef("%s is a publishable key, public by design: a leak report does not revoke it (revoke it without --leaked to replace it)", k.ID)
		}
		rev.Reason, rev.Source = auth.RevokedLeaked, *source
	}
	k, _, err = st.Keys.RevokeKeyWith(ctx, k.ID, rev)
	if err != nil {
		return err
	}
	if *leaked {
		a.alertLeaked(ctx, st, k)
	} else {
		a.alertRevoked(ctx, st, k)
	}
	v := viewOf(*k, a.clock.Now())
	return a.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "Revoked key %s (%s_%s ...%s) at %s; it stops authenticating within TIX_KEY_CACHE_TTL (10 s by default).\n",
			v.ID, v.Type, v.Environment, v.Last4, formatTime(v.RevokedAt))
		if v.RevokeReason != rev.Reason || v.LeakSource != rev.Source {
			fmt.Fprintf(w, "It was revoked before; the first revocation stays (reason %s, source %s).\n", dash(v.RevokeReason), dash(v.LeakSource))
		}
	})
}

// keysShow shows one key, named by its id or by the key itself: never the key.
func keysShow(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("keys show", flag.ContinueOnError)
	id := fs.String("id", "", "key id (key_...)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	_, k, err := a.namedKey(ctx, *id, rest, "keys show")
	if err != nil {
		return err
	}
	v := viewOf(*k, a.clock.Now())
	return a.emit(v, func(w io.Writer) { printKey(w, v) })
}

// namedKey reads the one key a command names, with --id or one argument: a
// key id, or the key itself (looked up by its hash).
func (a *app) namedKey(ctx context.Context, id string, rest []string, cmd string) (*store.Store, *auth.Key, error) {
	ref := id
	if id == "" && len(rest) == 1 {
		ref = rest[0]
	}
	if ref == "" || len(rest) > 1 || (id != "" && len(rest) > 0) {
		return nil, nil, usagef("%s takes one key: its id (key_...) or the key itself", cmd)
	}
	st, err := a.store(ctx)
	if err != nil {
		return nil, nil, err
	}
	if _, _, ok := auth.ParseSecret(ref); !ok {
		k, err := st.Keys.KeyByID(ctx, ref)
		return st, k, err
	}
	k, err := st.Keys.LookupKey(ctx, auth.Hash(ref))
	if errors.Is(err, auth.ErrUnknownKey) {
		return nil, nil, ticketing.NotFound("the key given")
	}
	return st, k, err
}

// printKey is the text output of keys show.
func printKey(w io.Writer, v keyView) {
	fmt.Fprintf(w, "Key %s (%s_%s ...%s) of %s: %s\n", v.ID, v.Type, v.Environment, v.Last4, v.OrganizerID, v.Status)
	rows := [][2]string{{"name", dash(v.Name)}, {"scopes", strings.Join(v.Scopes, ", ")},
		{"origins", dash(strings.Join(v.AllowedOrigins, ", "))}, {"ips", dash(strings.Join(v.AllowedIPs, ", "))},
		{"created", formatTime(&v.CreatedAt)}, {"expires", formatTime(v.ExpiresAt)}, {"revoked", formatTime(v.RevokedAt)}}
	if v.RevokedAt != nil {
		reason := v.RevokeReason
		if reason == "" {
			reason = "by the operator"
		}
		rows = append(rows, [2]string{"reason", reason}, [2]string{"source", dash(v.LeakSource)})
	}
	for _, r := range rows {
		fmt.Fprintf(w, "  %-8s %s\n", r[0]+":", r[1])
	}
}

// dash is s, or "-" when empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// keysSetBudget sets the budgets an operator gives a key ahead of an on-sale;
// the flags given replace the key's figures, the others stay, 0 returns one to
// the service's default.
func keysSetBudget(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("keys set-budget", flag.ContinueOnError)
	id := fs.String("id", "", "key id (key_...)")
	reads := fs.Int("reads", 0, "sk: the key's requests per window (all but order and hold creation); pk: the key's ceiling, all clients together")
	writes := fs.Int("writes", 0, "sk: the key's order and hold creations per window; pk: the key's ceiling, all clients together")
	ipReads := fs.Int("ip-reads", 0, "pk only: each client network's requests per window")
	ipWrites := fs.Int("ip-writes", 0, "pk only: each client network's order and hold creations per window")
	if err := parseNamed(fs, args, "id"); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if len(set) == 1 {
		return usagef("give at least one of --reads, --writes, --ip-reads, --ip-writes")
	}
	for name, v := range map[string]int{"reads": *reads, "writes": *writes, "ip-reads": *ipReads, "ip-writes": *ipWrites} {
		if v < 0 {
			return usagef("--%s must be 0 (the default) or more", name)
		}
	}
	st, err := a.store(ctx)
	if err != nil {
		return err
	}
	k, err := st.Keys.SetKeyRateLimits(ctx, *id, func(k auth.Key) (*auth.RateLimits, error) {
		if k.Type != auth.Publishable && (set["ip-reads"] || set["ip-writes"]) {
			return nil, usagef("--ip-reads and --ip-writes are for publishable (pk) keys; a secret key has one budget per key")
		}
		rl := auth.RateLimits{}
		if k.RateLimits != nil {
			rl = *k.RateLimits
		}
		for name, f := range map[string]struct {
			dst *int
			v   int
		}{
			"reads": {&rl.Reads, *reads}, "writes": {&rl.Writes, *writes}, "ip-reads": {&rl.IPReads, *ipReads}, "ip-writes": {&rl.IPWrites, *ipWrites},
		} {
			if set[name] {
				*f.dst = f.v
			}
		}
		if rl == (auth.RateLimits{}) {
			return nil, nil
		}
		return &rl, nil
	})
	if err != nil {
		return err
	}
	v := viewOf(*k, a.clock.Now())
	return a.emit(v, func(w io.Writer) { printBudgets(w, v) })
}

// printBudgets is the text output of keys set-budget.
func printBudgets(w io.Writer, v keyView) {
	rl := auth.RateLimits{}
	if v.RateLimits != nil {
		rl = *v.RateLimits
	}
	fig := func(n int) string {
		if n == 0 {
			return "default"
		}
		return fmt.Sprint(n)
	}
	fmt.Fprintf(w, "Budgets of key %s (%s_%s ...%s), per rate-limit window (TIX_RATE_WINDOW, 1 min by default):\n", v.ID, v.Type, v.Environment, v.Last4)
	if v.Type == auth.Publishable {
		fmt.Fprintf(w, "  each client (IPv4 address or IPv6 /64): reads %s, order and hold creations %s\n", fig(rl.IPReads), fig(rl.IPWrites))
		fmt.Fprintf(w, "  the key's ceiling, all clients together: reads %s, order and hold creations %s\n", fig(rl.Reads), fig(rl.Writes))
	} else {
		fmt.Fprintf(w, "  reads %s, order and hold creations %s\n", fig(rl.Reads), fig(rl.Writes))
	}
	fmt.Fprintln(w, "Running functions apply them within TIX_KEY_CACHE_TTL (10 s by default); default = the service's TIX_RATE_* setting.")
}
