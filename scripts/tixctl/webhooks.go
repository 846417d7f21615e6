package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// The webhooks group: the dashboard's endpoint management (internal/webhook,
// endpoints.go), run straight against the store. The service answers bad
// input, unknown endpoints and conflicts with *ticketing.Error values, which
// the fail path prints with their code. The commands are here; what they
// print is in webhooks_output.go, how they reach the service in webhooks_setup.go.

func webhooksCreate(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("webhooks create", flag.ContinueOnError)
	org := fs.String("organizer", "", "organizer id")
	env := fs.String("env", "", "test or live")
	rawURL := fs.String("url", "", "the receiver's URL (https; test endpoints may use http to localhost)")
	var events listFlag
	fs.Var(&events, "events", "comma-separated event types (default: every order event)")
	description := fs.String("description", "", "a note for people")
	if err := parseNamed(fs, args, "organizer"); err != nil {
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
	o, err := st.Organizers.GetOrganizer(ctx, *org)
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
	if err := parseNamed(fs, args, "organizer"); err != nil {
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
	if _, err := st.Organizers.GetOrganizer(ctx, *org); err != nil {
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
