package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	tixapp "tix/internal/app"
	"tix/internal/config"
	"tix/internal/store"
	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// The webhooks group: the dashboard's endpoint management (internal/webhook,
// endpoints.go), run straight against the store. The service answers bad
// input, unknown endpoints and conflicts with *ticketing.Error values, which
// the fail path prints with their code.

// endpointView is an endpoint as tixctl prints it: every field, null when
// unset, and never a secret (the sealed secrets stay in the store).
type endpointView struct {
	ID                  string     `json:"id"`
	OrganizerID         string     `json:"organizer_id"`
	Environment         string     `json:"environment"`
	URL                 string     `json:"url"`
	Status              string     `json:"status"`
	EnabledEvents       []string   `json:"enabled_events"`
	Description         *string    `json:"description"`
	Verified            bool       `json:"verified"`
	VerifiedAt          *time.Time `json:"verified_at"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	LastDeliveryAt      *time.Time `json:"last_delivery_at"`
	LastAttemptAt       *time.Time `json:"last_attempt_at"`
	FailingSince        *time.Time `json:"failing_since"`
	DisabledAt          *time.Time `json:"disabled_at"`
	DisabledReason      *string    `json:"disabled_reason"`
	SecretRotatedAt     *time.Time `json:"secret_rotated_at"`
	CreatedAt           time.Time  `json:"created_at"`
	UpdatedAt           time.Time  `json:"updated_at"`
}

func endpointViewOf(e *webhook.Endpoint) endpointView {
	v := endpointView{
		ID: e.ID, OrganizerID: e.OrganizerID, Environment: string(e.Environment), URL: e.URL, Status: string(e.Status),
		EnabledEvents: e.EnabledEvents, Description: e.Description, Verified: e.Verified, VerifiedAt: e.VerifiedAt,
		ConsecutiveFailures: e.ConsecutiveFailures, LastDeliveryAt: e.LastDeliveryAt, LastAttemptAt: e.LastAttemptAt,
		FailingSince: e.FailingSince, DisabledAt: e.DisabledAt, SecretRotatedAt: e.SecretRotatedAt,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
	}
	if v.EnabledEvents == nil {
		v.EnabledEvents = []string{}
	}
	if e.DisabledReason != "" {
		reason := e.DisabledReason
		v.DisabledReason = &reason
	}
	return v
}

// endpointWithSecret is the output of create and rotate-secret, the only
// ones that carry a secret: the plaintext, shown once.
type endpointWithSecret struct {
	Secret string `json:"secret"`
	// PreviousSecretSignsUntil (rotate-secret): the old secret signs beside
	// the new one until then.
	PreviousSecretSignsUntil *time.Time `json:"previous_secret_signs_until,omitempty"`
	endpointView
}

// localDynamo tells whether tixctl talks to a DynamoDB that is not AWS (the
// local stack): only there may the public local keyring be used.
func (a *app) localDynamo() bool {
	if a.endpoint == "" {
		return false
	}
	u, err := url.Parse(a.endpoint)
	if err != nil {
		return false
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return host != "" && !strings.HasSuffix(host, ".amazonaws.com") && !strings.HasSuffix(host, ".amazonaws.com.cn")
}

// webhookConfig reads the webhook settings from the environment as the
// Lambdas do (config.Load), with what tixctl can default: the cursor secret
// (config.Load wants one; tixctl never uses it) and, on the local stack only,
// the local keyring.
func (a *app) webhookConfig() (config.Config, error) {
	local := a.localDynamo()
	if !local && strings.TrimSpace(os.Getenv("TIX_WEBHOOK_KEYRING")) == "" {
		return config.Config{}, errors.New("TIX_WEBHOOK_KEYRING is not set: against AWS, tixctl seals and opens webhook secrets " +
			"with the deployed stack's keyring; export TIX_WEBHOOK_KEYRING with the value the Lambdas have " +
			"(the local keyring is used only with a local --endpoint)")
	}
	getenv := func(name string) string {
		if v := os.Getenv(name); strings.TrimSpace(v) != "" {
			return v
		}
		switch name {
		case "TIX_CURSOR_SECRET":
			return "tixctl-does-not-use-the-cursor-secret"
		case "TIX_WEBHOOK_KEYRING":
			if local {
				return config.LocalKeyring
			}
		}
		return ""
	}
	return config.Load(getenv)
}

// webhooks builds the webhook service over tixctl's store. The queue is nil:
// the management actions (create, update, rotate, disable, enable, delete,
// verify, test) never enqueue; verify and test POST at once, outside the
// queue. Fan-out, attempts and redelivery do, and tixctl does not run them.
func (a *app) webhooks(ctx context.Context) (*webhook.Service, *store.Store, config.Config, error) {
	cfg, err := a.webhookConfig()
	if err != nil {
		return nil, nil, cfg, err
	}
	st, err := a.store(ctx)
	if err != nil {
		return nil, nil, cfg, err
	}
	svc, err := tixapp.NewWebhooks(cfg, st, nil, a.clock)
	if err != nil {
		return nil, nil, cfg, err
	}
	if a.localDynamo() {
		// The local stack delivers from this machine; a deployed one from Lambda,
		// where loopback is the runtime API.
		tixapp.AllowLoopbackWebhooks(svc, cfg)
	}
	return svc, st, cfg, nil
}

// flagNames maps the service's error params to tixctl's flags.
var flagNames = map[string]string{"url": "url", "enabled_events": "events", "description": "description", "environment": "env"}

// namingFlag rewrites an invalid_request of the service so that it names the
// flag (and, for --url, the value) at fault; code and param are kept.
func namingFlag(err error, rawURL string) error {
	var te *ticketing.Error
	if !errors.As(err, &te) || te.Code != ticketing.CodeInvalidRequest || flagNames[te.Param] == "" {
		return err
	}
	named := *te
	named.Message = "--" + flagNames[te.Param] + ": " + te.Message
	if te.Param == "url" && rawURL != "" {
		shown := rawURL
		if len(shown) > 120 {
			shown = shown[:120] + "..."
		}
		named.Message = fmt.Sprintf("--url %s: %s", strconv.Quote(shown), te.Message)
	}
	return &named
}

// endpointID is the one positional argument of the commands on one endpoint.
func endpointID(rest []string) (string, error) {
	switch {
	case len(rest) == 0:
		return "", usagef("give the endpoint ID (we_...)")
	case len(rest) > 1:
		return "", usagef("unexpected argument %q", rest[1])
	case strings.TrimSpace(rest[0]) == "":
		return "", usagef("the endpoint ID is empty")
	}
	return rest[0], nil
}

// parseEndpointArgs parses the flags of a command on one endpoint and its ID.
func parseEndpointArgs(fs *flag.FlagSet, args []string) (string, error) {
	rest, err := parseFlags(fs, args)
	if err != nil {
		return "", err
	}
	return endpointID(rest)
}

func eventsText(events []string) string {
	if len(events) == 0 {
		return "-"
	}
	return strings.Join(events, ", ")
}

func durationText(ms int64) string { return strconv.FormatInt(ms, 10) + " ms" }

// outcome is a SendResult in a few words: "HTTP 200 in 12 ms", "HTTP 200 in
// 3 ms: the response body does not contain the nonce..." or "no response after
// 3 ms: connection refused".
func outcome(r webhook.SendResult) string {
	if r.StatusCode > 0 {
		s := fmt.Sprintf("HTTP %d in %s", r.StatusCode, durationText(r.DurationMS))
		if r.Error != "" && r.Error != "HTTP "+strconv.Itoa(r.StatusCode) {
			s += ": " + r.Error
		}
		return s
	}
	return fmt.Sprintf("no response after %s: %s", durationText(r.DurationMS), r.Error)
}

// shortDuration prints 24h rather than 24h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// namingEndpoint names the endpoint in the service's not_found, which does not
// ("webhook endpoint not found"), as tixctl's other not-found errors do.
func namingEndpoint(err error, id string) error {
	var te *ticketing.Error
	if !errors.As(err, &te) || te.Code != ticketing.CodeNotFound {
		return err
	}
	named := *te
	named.Message = fmt.Sprintf("webhook endpoint %s not found", id)
	return &named
}

func printEndpoint(w io.Writer, v endpointView) {
	rows := [][2]string{
		{"url", v.URL},
		{"environment", v.Environment},
		{"organizer", v.OrganizerID},
	}
	status := v.Status
	if v.DisabledAt != nil {
		status += " since " + formatTime(v.DisabledAt)
		if v.DisabledReason != nil {
			status += ": " + *v.DisabledReason
		}
	}
	rows = append(rows, [2]string{"status", status})
	if v.Verified {
		rows = append(rows, [2]string{"verified", "yes, at " + formatTime(v.VerifiedAt)})
	} else {
		rows = append(rows, [2]string{"verified", "no: it receives no order events until tixctl webhooks verify " + v.ID})
	}
	rows = append(rows, [2]string{"events", eventsText(v.EnabledEvents)})
	if v.Description != nil {
		rows = append(rows, [2]string{"description", *v.Description})
	}
	failures := strconv.Itoa(v.ConsecutiveFailures) + " consecutive"
	if v.FailingSince != nil {
		failures += ", failing since " + formatTime(v.FailingSince)
	}
	rows = append(rows,
		[2]string{"failures", failures},
		[2]string{"last delivery", formatTime(v.LastDeliveryAt)},
		[2]string{"last attempt", formatTime(v.LastAttemptAt)},
		[2]string{"secret rotated", formatTime(v.SecretRotatedAt)},
		[2]string{"created", formatTime(&v.CreatedAt)},
	)
	for _, r := range rows {
		fmt.Fprintf(w, "  %-15s %s\n", r[0]+":", r[1])
	}
}

func webhooksCreate(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("webhooks create", flag.ContinueOnError)
	org := fs.String("organizer", "", "organizer id")
	env := fs.String("env", "", "test or live")
	rawURL := fs.String("url", "", "the receiver's URL (https; test endpoints may use http to localhost)")
	var events listFlag
	fs.Var(&events, "events", "comma-separated event types (default: every order event)")
	description := fs.String("description", "", "a note for people")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := noPositional(rest); err != nil {
		return err
	}
	if err := required("organizer", *org); err != nil {
		return err
	}
	environment := ticketing.Environment(*env)
	if !environment.Valid() {
		return usagef("--env must be test or live")
	}
	if err := required("url", *rawURL); err != nil {
		return err
	}
	svc, st, _, err := a.webhooks(ctx)
	if err != nil {
		return err
	}
	o, err := st.GetOrganizer(ctx, *org)
	if err != nil {
		return err
	}
	if environment == ticketing.EnvLive && !o.Verified {
		return fmt.Errorf("organizer %s is not verified: live webhook endpoints, like live keys, need a verified organizer (tixctl organizers verify --id %s)", o.ID, o.ID)
	}
	in := webhook.NewEndpoint{OrganizerID: *org, Environment: environment, URL: *rawURL, EnabledEvents: events}
	if *description != "" {
		in.Description = description
	}
	ep, secret, err := svc.CreateEndpoint(ctx, in)
	if err != nil {
		return namingFlag(err, *rawURL)
	}
	out := endpointWithSecret{Secret: secret, endpointView: endpointViewOf(ep)}
	return a.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "Created %s webhook endpoint %s for %s: %s\n\n  %s\n\n", ep.Environment, ep.ID, ep.OrganizerID, ep.URL, secret)
		fmt.Fprintf(w, "This signing secret is shown once and cannot be shown again: store it now (receivers check the %s header with it).\n", webhook.SignatureHeader)
		fmt.Fprintf(w, "events: %s\n", eventsText(ep.EnabledEvents))
		fmt.Fprintf(w, "The endpoint receives no order events until it is verified. Next: tixctl webhooks verify %s\n", ep.ID)
	})
}

func webhooksList(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("webhooks list", flag.ContinueOnError)
	org := fs.String("organizer", "", "organizer id")
	env := fs.String("env", "", "test or live (default: both)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := noPositional(rest); err != nil {
		return err
	}
	if err := required("organizer", *org); err != nil {
		return err
	}
	envs := []ticketing.Environment{ticketing.EnvTest, ticketing.EnvLive}
	if *env != "" {
		e := ticketing.Environment(*env)
		if !e.Valid() {
			return usagef("--env must be test or live")
		}
		envs = []ticketing.Environment{e}
	}
	svc, st, _, err := a.webhooks(ctx)
	if err != nil {
		return err
	}
	if _, err := st.GetOrganizer(ctx, *org); err != nil {
		return err
	}
	views := []endpointView{}
	for _, e := range envs {
		eps, err := svc.Endpoints(ctx, *org, e)
		if err != nil {
			return err
		}
		for _, ep := range eps {
			views = append(views, endpointViewOf(ep))
		}
	}
	return a.emit(views, func(w io.Writer) {
		if len(views) == 0 {
			fmt.Fprintf(w, "Organizer %s has no webhook endpoints: tixctl webhooks create --organizer %s --env test --url URL\n", *org, *org)
			return
		}
		rows := make([][]string, len(views))
		for i, v := range views {
			status := v.Status
			if v.DisabledReason != nil {
				status += " (" + *v.DisabledReason + ")"
			}
			rows[i] = []string{v.ID, v.Environment, strconv.FormatBool(v.Verified), strconv.Itoa(v.ConsecutiveFailures),
				formatTime(v.LastDeliveryAt), v.URL, status}
		}
		table(w, []string{"ID", "ENV", "VERIFIED", "FAILURES", "LAST DELIVERY", "URL", "STATUS"}, rows)
	})
}

func webhooksShow(ctx context.Context, a *app, args []string) error {
	svc, id, err := a.endpointCommand(ctx, "webhooks show", args)
	if err != nil {
		return err
	}
	ep, err := svc.GetEndpoint(ctx, id)
	return a.emitEndpoint(ep, err, id, func(w io.Writer, v endpointView) {
		fmt.Fprintf(w, "Webhook endpoint %s\n", v.ID)
		printEndpoint(w, v)
	})
}

func webhooksUpdate(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("webhooks update", flag.ContinueOnError)
	rawURL := fs.String("url", "", "new URL (the endpoint must then be verified again)")
	var events listFlag
	fs.Var(&events, "events", "comma-separated event types, replacing the current ones")
	description := fs.String("description", "", `new description ("" removes it)`)
	id, err := parseEndpointArgs(fs, args)
	if err != nil {
		return err
	}
	var ch webhook.EndpointChange
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "url":
			ch.URL = rawURL
		case "events":
			ch.EnabledEvents = append([]string{}, events...)
		case "description":
			ch.Description = description
		}
	})
	if ch.URL == nil && ch.EnabledEvents == nil && ch.Description == nil {
		return usagef("nothing to change: give --url, --events or --description")
	}
	if ch.EnabledEvents != nil && len(ch.EnabledEvents) == 0 {
		return usagef("--events needs at least one event type (%s)", strings.Join(webhook.EventTypes, ", "))
	}
	svc, _, _, err := a.webhooks(ctx)
	if err != nil {
		return err
	}
	before, err := svc.GetEndpoint(ctx, id)
	if err != nil {
		return namingEndpoint(err, id)
	}
	ep, err := svc.UpdateEndpoint(ctx, id, ch)
	if err != nil {
		return namingEndpoint(namingFlag(err, *rawURL), id)
	}
	urlChanged := ep.URL != before.URL
	v := endpointViewOf(ep)
	return a.emit(v, func(w io.Writer) {
		fmt.Fprintf(w, "Updated webhook endpoint %s.\n", v.ID)
		printEndpoint(w, v)
		if urlChanged {
			fmt.Fprintf(w, "The URL changed, so the endpoint is no longer verified and receives no order events until it is verified again: tixctl webhooks verify %s\n", v.ID)
		}
	})
}

// verifyOutput is the result of webhooks verify.
type verifyOutput struct {
	Verified bool               `json:"verified"`
	Result   webhook.SendResult `json:"result"`
	Endpoint endpointView       `json:"endpoint"`
}

func webhooksVerify(ctx context.Context, a *app, args []string) error {
	svc, id, err := a.endpointCommand(ctx, "webhooks verify", args)
	if err != nil {
		return err
	}
	ep, res, err := svc.VerifyEndpoint(ctx, id)
	if err != nil {
		return namingEndpoint(err, id)
	}
	if !res.OK {
		what := outcome(res)
		if !strings.Contains(what, "nonce") {
			what += "; the receiver must answer 2xx with a body containing data.nonce of the envelope"
		}
		if ep.Verified {
			return fmt.Errorf("verification of %s (%s) failed (envelope %s): %s. The endpoint is still verified from %s",
				ep.ID, ep.URL, res.EnvelopeID, what, formatTime(ep.VerifiedAt))
		}
		return fmt.Errorf("endpoint %s (%s) is not verified (envelope %s): %s", ep.ID, ep.URL, res.EnvelopeID, what)
	}
	out := verifyOutput{Verified: ep.Verified, Result: res, Endpoint: endpointViewOf(ep)}
	return a.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "Sent %s to %s (envelope %s): %s.\n", webhook.TypeEndpointVerify, ep.URL, res.EnvelopeID, outcome(res))
		if ep.Status == webhook.EndpointActive {
			fmt.Fprintf(w, "Endpoint %s is verified: it receives %s events now.\n", ep.ID, eventsText(ep.EnabledEvents))
		} else {
			fmt.Fprintf(w, "Endpoint %s is verified, but disabled: it receives order events once enabled (tixctl webhooks enable %s).\n", ep.ID, ep.ID)
		}
	})
}

func webhooksRotateSecret(ctx context.Context, a *app, args []string) error {
	id, err := parseEndpointArgs(flag.NewFlagSet("webhooks rotate-secret", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	svc, _, cfg, err := a.webhooks(ctx)
	if err != nil {
		return err
	}
	ep, secret, err := svc.RotateSecret(ctx, id)
	if err != nil {
		return namingEndpoint(err, id)
	}
	overlap := cfg.Webhooks.SecretOverlap
	out := endpointWithSecret{Secret: secret, endpointView: endpointViewOf(ep)}
	if ep.SecretRotatedAt != nil && overlap > 0 {
		until := ep.SecretRotatedAt.Add(overlap)
		out.PreviousSecretSignsUntil = &until
	}
	return a.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "Rotated the signing secret of webhook endpoint %s (%s).\n\n  %s\n\n", ep.ID, ep.URL, secret)
		fmt.Fprintln(w, "This secret is shown once and cannot be shown again: store it now.")
		if out.PreviousSecretSignsUntil != nil {
			fmt.Fprintf(w, "The previous secret keeps signing beside the new one (two v1 values in %s) for TIX_WEBHOOK_SECRET_OVERLAP (%s here; 24h by default), until %s:\n",
				webhook.SignatureHeader, shortDuration(overlap), formatTime(out.PreviousSecretSignsUntil))
			fmt.Fprintln(w, "move the receiver to the new secret before then. A second rotation within that time ends the previous secret at once.")
		} else {
			fmt.Fprintln(w, "TIX_WEBHOOK_SECRET_OVERLAP is 0: the previous secret stopped signing at once.")
		}
	})
}

func webhooksDisable(ctx context.Context, a *app, args []string) error {
	svc, id, err := a.endpointCommand(ctx, "webhooks disable", args)
	if err != nil {
		return err
	}
	ep, err := svc.DisableEndpoint(ctx, id)
	return a.emitEndpoint(ep, err, id, func(w io.Writer, v endpointView) {
		fmt.Fprintf(w, "Disabled webhook endpoint %s (%s) at %s: it receives nothing and its pending deliveries are skipped.\n", v.ID, v.URL, formatTime(v.DisabledAt))
		fmt.Fprintf(w, "Enable it again with tixctl webhooks enable %s.\n", v.ID)
	})
}

func webhooksEnable(ctx context.Context, a *app, args []string) error {
	svc, id, err := a.endpointCommand(ctx, "webhooks enable", args)
	if err != nil {
		return err
	}
	ep, err := svc.EnableEndpoint(ctx, id)
	return a.emitEndpoint(ep, err, id, func(w io.Writer, v endpointView) {
		fmt.Fprintf(w, "Enabled webhook endpoint %s (%s) with a clean failure count.\n", v.ID, v.URL)
		if !v.Verified {
			fmt.Fprintf(w, "It is not verified, so it receives no order events until tixctl webhooks verify %s.\n", v.ID)
		}
		fmt.Fprintln(w, "Deliveries skipped or failed meanwhile are not resent by this: redeliver them (POST /webhook-deliveries/{id}/redeliver).")
	})
}

// testOutput is the result of webhooks test.
type testOutput struct {
	EndpointID string `json:"endpoint_id"`
	URL        string `json:"url"`
	webhook.SendResult
}

func webhooksTest(ctx context.Context, a *app, args []string) error {
	svc, id, err := a.endpointCommand(ctx, "webhooks test", args)
	if err != nil {
		return err
	}
	ep, err := svc.GetEndpoint(ctx, id)
	if err != nil {
		return namingEndpoint(err, id)
	}
	res, err := svc.TestEndpoint(ctx, id)
	if err != nil {
		return namingEndpoint(err, id)
	}
	if !res.OK {
		return fmt.Errorf("the receiver of %s (%s) did not acknowledge %s (envelope %s): %s; it must answer 2xx. "+
			"Nothing was recorded and the endpoint's health is unchanged", ep.ID, ep.URL, webhook.TypeWebhookTest, res.EnvelopeID, outcome(res))
	}
	out := testOutput{EndpointID: ep.ID, URL: ep.URL, SendResult: res}
	return a.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "Sent %s to %s (envelope %s): %s. The receiver acknowledged it.\n", webhook.TypeWebhookTest, ep.URL, res.EnvelopeID, outcome(res))
		fmt.Fprintln(w, "A test is not a delivery: nothing was recorded and the endpoint's health is unchanged.")
	})
}

func webhooksDelete(ctx context.Context, a *app, args []string) error {
	svc, id, err := a.endpointCommand(ctx, "webhooks delete", args)
	if err != nil {
		return err
	}
	if err := svc.DeleteEndpoint(ctx, id); err != nil {
		return namingEndpoint(err, id)
	}
	out := struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}{id, true}
	return a.emit(out, func(w io.Writer) {
		fmt.Fprintf(w, "Deleted webhook endpoint %s; its pending deliveries are skipped when their attempts come up.\n", id)
	})
}

// endpointCommand parses the arguments of a command that takes one endpoint
// id and builds the webhook service.
func (a *app) endpointCommand(ctx context.Context, name string, args []string) (*webhook.Service, string, error) {
	id, err := parseEndpointArgs(flag.NewFlagSet(name, flag.ContinueOnError), args)
	if err != nil {
		return nil, "", err
	}
	svc, _, _, err := a.webhooks(ctx)
	if err != nil {
		return nil, "", err
	}
	return svc, id, nil
}

// emitEndpoint prints the endpoint an action returned (human: the text
// output), or the action's error naming the endpoint.
func (a *app) emitEndpoint(ep *webhook.Endpoint, err error, id string, human func(w io.Writer, v endpointView)) error {
	if err != nil {
		return namingEndpoint(err, id)
	}
	v := endpointViewOf(ep)
	return a.emit(v, func(w io.Writer) { human(w, v) })
}
