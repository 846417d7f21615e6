package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// Defaults of tixctl listen: make run's API and a poll every second.
const (
	defaultAPIURL      = "http://127.0.0.1:8080/v1"
	defaultListenEvery = time.Second
	// listenLookback is how far behind the newest event seen each poll reads
	// the log again: an event written a moment after another with an earlier
	// created_at is still found (the seen ids keep it from repeating).
	listenLookback = 5 * time.Second
	// listenMaxBackoff bounds the wait between polls after errors.
	listenMaxBackoff = 30 * time.Second
	// forwardAttempts is how often one event is POSTed before moving on.
	forwardAttempts = 3
)

// listenOptions are the flags of tixctl listen.
type listenOptions struct {
	api, key, forwardTo, secret string
	since                       time.Time // zero: from now
	events                      map[string]bool
	every                       time.Duration
	pageSize                    int
}

// listen follows the organizer's event log through the API (GET
// /v1/order-events with an sk key) and forwards each new event to a local
// URL, signed as a webhook with a secret it prints: stripe listen for tix.
func listen(ctx context.Context, a *app, args []string) error {
	o, err := parseListen(args, a.clock.Now())
	if err != nil {
		return err
	}
	l := newListener(a, o)
	if err := l.start(ctx); err != nil {
		return err
	}
	return l.follow(ctx)
}

// parseListen reads and checks the flags of tixctl listen.
func parseListen(args []string, now time.Time) (listenOptions, error) {
	fs := flag.NewFlagSet("listen", flag.ContinueOnError)
	var o listenOptions
	var since string
	var events listFlag
	fs.StringVar(&o.forwardTo, "forward-to", "", "the local URL each event is POSTed to")
	fs.StringVar(&o.api, "api", pickEnv("TIX_API_URL", defaultAPIURL), "the API's base URL, /v1 included")
	fs.StringVar(&o.key, "key", pickEnv("TIX_API_KEY", ""), "an sk_ key with webhooks:manage")
	fs.StringVar(&o.secret, "secret", "", "the whsec_ secret to sign with (default: a new one)")
	fs.StringVar(&since, "since", "", "forward events since this RFC 3339 time or this long ago (default: from now)")
	fs.Var(&events, "events", "only these event types (comma list)")
	fs.DurationVar(&o.every, "interval", defaultListenEvery, "how often the log is read")
	fs.IntVar(&o.pageSize, "page-size", 100, "events per request of the log (1-100)")
	if err := parseNamed(fs, args, "forward-to"); err != nil {
		return o, err
	}
	if err := o.check(events, since, now); err != nil {
		return o, err
	}
	if o.secret == "" {
		o.secret = webhook.NewSecret()
	}
	return o, nil
}

// check validates the options and fills since and events.
func (o *listenOptions) check(events []string, since string, now time.Time) error {
	if u, err := url.Parse(o.forwardTo); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--forward-to must be an http(s) URL, such as http://127.0.0.1:9000/hooks")
	}
	if u, err := url.Parse(o.api); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--api must be the API's base URL, such as %s", defaultAPIURL)
	}
	o.api = strings.TrimRight(o.api, "/")
	if typ, _, ok := auth.ParseSecret(o.key); !ok || typ != auth.Secret {
		return usagef("--key (or TIX_API_KEY) must be an sk_ key with webhooks:manage: tixctl keys create --type sk prints one")
	}
	if o.secret != "" && !strings.HasPrefix(o.secret, webhook.SecretPrefix) {
		return usagef("--secret must start with %s", webhook.SecretPrefix)
	}
	if o.every <= 0 || o.pageSize < 1 || o.pageSize > 100 {
		return usagef("--interval must be positive and --page-size 1-100")
	}
	for _, t := range events {
		if t != ticketing.EventOrderPaid && t != ticketing.EventOrderCancelled && t != ticketing.EventOrderRefunded {
			return usagef("--events takes %s, %s or %s, not %q", ticketing.EventOrderPaid, ticketing.EventOrderCancelled, ticketing.EventOrderRefunded, t)
		}
		if o.events == nil {
			o.events = map[string]bool{}
		}
		o.events[t] = true
	}
	return o.parseSince(since, now)
}

// parseSince takes an RFC 3339 time or a duration back from now.
func (o *listenOptions) parseSince(since string, now time.Time) error {
	if since == "" {
		return nil
	}
	at, err := time.Parse(time.RFC3339, since)
	if err != nil {
		d, derr := time.ParseDuration(since)
		if derr != nil || d < 0 {
			return usagef("--since must be an RFC 3339 time (2026-11-25T10:00:00Z) or a duration back from now (1h)")
		}
		at = now.Add(-d)
	}
	o.since = at.UTC().Truncate(time.Second)
	return nil
}

// listener is one run of tixctl listen.
type listener struct {
	a      *app
	o      listenOptions
	log    *eventLogClient
	sender *webhook.Sender
	out    *listenOutput
	floor  time.Time            // events created before it are never forwarded
	newest time.Time            // the newest created_at seen
	seen   map[string]time.Time // ids read at or after newest-lookback

	forwarded, failed int
}

func newListener(a *app, o listenOptions) *listener {
	return &listener{a: a, o: o, log: newEventLogClient(o.api, o.key, o.pageSize),
		// The target is the developer's own receiver: loopback and private addresses are allowed.
		sender: webhook.NewSender(webhook.SenderOptions{AllowLoopback: true, AllowPrivate: true, UserAgent: "tixctl-listen"}),
		out:    &listenOutput{a: a}, seen: map[string]time.Time{}}
}

// start reads the log once (checking the key): without --since, what is
// already there is taken as seen, so only events from now on are forwarded.
func (l *listener) start(ctx context.Context) error {
	now, err := l.log.serverTime(ctx)
	var ae *apiError
	if err != nil && !errors.As(err, &ae) {
		return fmt.Errorf("reading the event log at %s: %w (is the API running there? make run serves %s; else set --api)", l.o.api, err, defaultAPIURL)
	}
	if err != nil {
		return err
	}
	l.floor = l.o.since
	if l.floor.IsZero() {
		l.floor = now.UTC().Truncate(time.Second)
	}
	l.newest = l.floor
	if l.o.since.IsZero() {
		if _, err := l.collect(ctx); err != nil {
			return err
		}
	}
	return l.out.ready(listenReady{Kind: "ready", Secret: l.o.secret, ForwardTo: l.o.forwardTo,
		API: l.o.api, Since: clock.Format(l.floor)})
}

// follow polls the log until ctx ends (Ctrl-C), forwarding what is new;
// errors back off, doubling the wait up to listenMaxBackoff.
func (l *listener) follow(ctx context.Context) error {
	wait := l.o.every
	if !l.o.since.IsZero() {
		wait = 0 // the events since --since go out at once
	}
	for {
		select {
		case <-ctx.Done():
			return l.out.stopped(l.forwarded, l.failed)
		case <-time.After(wait):
		}
		evs, err := l.collect(ctx)
		switch {
		case ctx.Err() != nil:
			return l.out.stopped(l.forwarded, l.failed)
		case fatalLogError(err):
			return err
		case err != nil:
			wait = min(max(2*wait, l.o.every), listenMaxBackoff)
			l.out.pollError(err, wait)
			continue
		}
		wait = l.o.every
		for _, ev := range evs {
			if ctx.Err() != nil {
				break
			}
			l.forward(ctx, ev)
		}
	}
}

// collect walks the log from newest-lookback (never before floor) and returns
// the events not seen yet, oldest first; they are marked seen only when the
// whole walk succeeded, so a failed walk is simply repeated.
func (l *listener) collect(ctx context.Context) ([]logEvent, error) {
	from := l.newest.Add(-listenLookback)
	if from.Before(l.floor) {
		from = l.floor
	}
	var fresh []logEvent
	inWalk := map[string]bool{}
	cursor := ""
	for {
		page, err := l.log.page(ctx, from, cursor)
		if err != nil {
			return nil, err
		}
		for _, ev := range page.events {
			if _, ok := l.seen[ev.ID]; ok || inWalk[ev.ID] || ev.created.Before(l.floor) {
				continue
			}
			inWalk[ev.ID] = true
			fresh = append(fresh, ev)
		}
		if page.next == "" {
			break
		}
		cursor = page.next
	}
	for _, ev := range fresh {
		l.seen[ev.ID] = ev.created
		if ev.created.After(l.newest) {
			l.newest = ev.created
		}
	}
	for id, at := range l.seen {
		if at.Before(l.newest.Add(-listenLookback)) {
			delete(l.seen, id)
		}
	}
	// The log is newest first; forward in the order the events happened.
	for i, j := 0, len(fresh)-1; i < j; i, j = i+1, j-1 {
		fresh[i], fresh[j] = fresh[j], fresh[i]
	}
	return fresh, nil
}

// forward POSTs one event to the local URL, signed both ways with the
// listener's secret, up to forwardAttempts times, and reports it.
func (l *listener) forward(ctx context.Context, ev logEvent) {
	if l.o.events != nil && !l.o.events[ev.Type] {
		return
	}
	var res webhook.Result
	attempts := 0
	for attempts < forwardAttempts {
		attempts++
		res = l.sender.Post(ctx, false, l.o.forwardTo, ev.raw, webhook.SignAll(ev.ID, l.a.clock.Now(), ev.raw, l.o.secret))
		if res.OK() || ctx.Err() != nil || attempts == forwardAttempts {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(attempts) * time.Second):
		}
	}
	if res.OK() {
		l.forwarded++
	} else {
		l.failed++
	}
	l.out.forwarded(ev, res, attempts)
}

// fatalLogError: the log refused the key or the query; polling again will not help.
func fatalLogError(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.status >= 400 && ae.status < 500 && ae.status != 429 && ae.status != 408
}
