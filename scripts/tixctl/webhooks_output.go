package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"tix/internal/ticketing"
	"tix/internal/webhook"
)

// What the webhooks group prints: the endpoint view (never a secret), its
// text form, and the service's errors reworded to name tixctl's flags.

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
