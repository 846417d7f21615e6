package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"tix/internal/clock"
	"tix/internal/ticketing"
)

// Endpoint management: the dashboard's actions, driven by tixctl. The errors
// are ticketing errors (invalid_request with param, not_found, conflict).

// NewEndpoint is what creating an endpoint takes.
type NewEndpoint struct {
	OrganizerID   string
	Environment   ticketing.Environment
	URL           string
	EnabledEvents []string // empty: every order event type
	Description   *string
}

// EndpointChange changes an endpoint; nil fields are left as they are.
type EndpointChange struct {
	URL           *string
	EnabledEvents []string
	Description   *string
}

// maxDescription is the longest endpoint description.
const maxDescription = 500

func checkEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return slices.Clone(EventTypes), nil
	}
	var out []string
	for _, e := range events {
		e = strings.TrimSpace(e)
		if !slices.Contains(EventTypes, e) && !slices.Contains(OptInEventTypes, e) {
			return nil, ticketing.Invalid("enabled_events", "unknown event type %q; use %s", e, strings.Join(append(slices.Clone(EventTypes), OptInEventTypes...), ", "))
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

func checkDescription(d *string) error {
	if d != nil && len([]rune(*d)) > maxDescription {
		return ticketing.Invalid("description", "description is longer than %d characters", maxDescription)
	}
	return nil
}

// checkURL validates an endpoint URL; loopback is allowed for test endpoints
// only when the Sender allows it (the local stack).
func (s *Service) checkURL(env ticketing.Environment, raw string) error {
	if err := ValidateURL(env == ticketing.EnvLive, s.Sender.AllowsLoopback(), raw); err != nil {
		return ticketing.Invalid("url", "%v", err)
	}
	return nil
}

// CreateEndpoint registers an endpoint. It receives nothing until verified.
// The returned secret is shown once; only its sealed form is stored.
func (s *Service) CreateEndpoint(ctx context.Context, in NewEndpoint) (*Endpoint, string, error) {
	if in.Environment != ticketing.EnvTest && in.Environment != ticketing.EnvLive {
		return nil, "", ticketing.Invalid("environment", "environment must be test or live")
	}
	if err := s.checkURL(in.Environment, in.URL); err != nil {
		return nil, "", err
	}
	events, err := checkEvents(in.EnabledEvents)
	if err != nil {
		return nil, "", err
	}
	if err := checkDescription(in.Description); err != nil {
		return nil, "", err
	}
	now := s.now()
	ep := &Endpoint{
		ID: "we_" + randomID(20), OrganizerID: in.OrganizerID, Environment: in.Environment,
		URL: in.URL, Status: EndpointActive, EnabledEvents: events, Description: in.Description,
		CreatedAt: now, UpdatedAt: now,
	}
	secret := NewSecret()
	if ep.Secret, err = s.Box.Seal(secret, ep.ID); err != nil {
		return nil, "", fmt.Errorf("seal the endpoint secret: %w", err)
	}
	if err := s.Store.CreateEndpoint(ctx, ep, s.Settings.MaxEndpoints); err != nil {
		if errors.Is(err, ErrTooManyEndpoints) {
			return nil, "", ticketing.Errorf(ticketing.CodeConflict, "organizer %s has %d %s endpoints already; delete one first",
				in.OrganizerID, s.Settings.MaxEndpoints, in.Environment)
		}
		return nil, "", err
	}
	return ep, secret, nil
}

// GetEndpoint reads one endpoint.
func (s *Service) GetEndpoint(ctx context.Context, id string) (*Endpoint, error) {
	ep, err := s.Store.GetEndpoint(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, ticketing.NotFound("webhook endpoint " + id)
	}
	return ep, err
}

// change reads an endpoint, applies f and writes it under the version read.
func (s *Service) change(ctx context.Context, id string, resetHealth bool, f func(ep *Endpoint, now time.Time) error) (*Endpoint, error) {
	ep, err := s.GetEndpoint(ctx, id)
	if err != nil {
		return nil, err
	}
	now := s.now()
	if err := f(ep, now); err != nil {
		return nil, err
	}
	ep.UpdatedAt = now
	if err := s.Store.UpdateEndpoint(ctx, ep, resetHealth); err != nil {
		if errors.Is(err, ErrStateChanged) {
			return nil, ticketing.Errorf(ticketing.CodeConflict, "endpoint %s changed meanwhile; try again", id)
		}
		if errors.Is(err, ErrNotFound) {
			return nil, ticketing.NotFound("webhook endpoint")
		}
		return nil, err
	}
	if resetHealth {
		ep.ConsecutiveFailures, ep.FailingSince = 0, nil
	}
	return ep, nil
}

// UpdateEndpoint changes URL, event types or description. A new URL must be
// verified again before it receives events (contract section 6).
func (s *Service) UpdateEndpoint(ctx context.Context, id string, ch EndpointChange) (*Endpoint, error) {
	return s.change(ctx, id, false, func(ep *Endpoint, now time.Time) error {
		if ch.URL != nil && *ch.URL != ep.URL {
			if err := s.checkURL(ep.Environment, *ch.URL); err != nil {
				return err
			}
			ep.URL, ep.Verified, ep.VerifiedAt = *ch.URL, false, nil
		}
		if ch.EnabledEvents != nil {
			events, err := checkEvents(ch.EnabledEvents)
			if err != nil {
				return err
			}
			ep.EnabledEvents = events
		}
		if ch.Description != nil {
			if err := checkDescription(ch.Description); err != nil {
				return err
			}
			ep.Description = ch.Description
			if *ch.Description == "" {
				ep.Description = nil
			}
		}
		return nil
	})
}

// RotateSecret issues a new secret; the old one keeps signing, beside the new
// one, for RotationOverlap. A second rotation within that time ends the
// oldest secret at once.
func (s *Service) RotateSecret(ctx context.Context, id string) (*Endpoint, string, error) {
	secret := NewSecret()
	ep, err := s.change(ctx, id, false, func(ep *Endpoint, now time.Time) error {
		sealed, err := s.Box.Seal(secret, ep.ID)
		if err != nil {
			return fmt.Errorf("seal the endpoint secret: %w", err)
		}
		ep.OldSecret, ep.SecretRotatedAt, ep.Secret = ep.Secret, &now, sealed
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return ep, secret, nil
}

// DisableEndpoint stops deliveries to an endpoint; its pending deliveries are skipped.
func (s *Service) DisableEndpoint(ctx context.Context, id string) (*Endpoint, error) {
	if ep, err := s.GetEndpoint(ctx, id); err != nil || ep.Status == EndpointDisabled {
		return ep, err
	}
	ep, err := s.change(ctx, id, false, func(ep *Endpoint, now time.Time) error {
		ep.Status, ep.DisabledAt, ep.DisabledReason = EndpointDisabled, &now, "disabled by the organizer"
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.skipPending(ctx, ep.ID, "endpoint disabled", s.now())
	return ep, nil
}

// EnableEndpoint re-enables a disabled endpoint with a clean failure count.
// Skipped and failed deliveries are not resent by this: redeliver them.
func (s *Service) EnableEndpoint(ctx context.Context, id string) (*Endpoint, error) {
	if ep, err := s.GetEndpoint(ctx, id); err != nil || ep.Status == EndpointActive {
		return ep, err
	}
	return s.change(ctx, id, true, func(ep *Endpoint, now time.Time) error {
		ep.Status, ep.DisabledAt, ep.DisabledReason = EndpointActive, nil, ""
		return nil
	})
}

// DeleteEndpoint removes an endpoint; its pending deliveries are skipped
// when their attempts come up.
func (s *Service) DeleteEndpoint(ctx context.Context, id string) error {
	ep, err := s.GetEndpoint(ctx, id)
	if err != nil {
		return err
	}
	if err := s.Store.DeleteEndpoint(ctx, ep); err != nil {
		switch {
		case errors.Is(err, ErrStateChanged):
			return ticketing.Errorf(ticketing.CodeConflict, "endpoint %s changed meanwhile; try again", id)
		case errors.Is(err, ErrNotFound):
			return ticketing.NotFound("webhook endpoint " + id)
		}
		return err
	}
	return nil
}

// SendResult is the outcome of a verify or test POST.
type SendResult struct {
	EnvelopeID string `json:"envelope_id"`
	StatusCode int    `json:"status_code"`
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	OK         bool   `json:"ok"`
}

func sendResult(id string, r Result, ok bool, err string) SendResult {
	return SendResult{EnvelopeID: id, StatusCode: r.StatusCode, DurationMS: r.Duration.Milliseconds(), OK: ok, Error: err}
}

// post signs and sends an envelope to an endpoint now, outside the queue.
func (s *Service) post(ctx context.Context, ep *Endpoint, typ string, data any) (string, Result, error) {
	now := s.now()
	env := Envelope{ID: "evt_" + randomID(24), Type: typ, APIVersion: APIVersion, CreatedAt: clock.Format(now),
		Data: data, Livemode: ep.Environment == ticketing.EnvLive}
	body, err := json.Marshal(env)
	if err != nil {
		return "", Result{}, err
	}
	secrets, err := s.secrets(ep, now)
	if err != nil {
		return "", Result{}, err
	}
	return env.ID, s.Sender.Post(ctx, ep.Environment == ticketing.EnvLive, ep.URL, body, SignAll(env.ID, now, body, secrets...)), nil
}

// VerifyEndpoint proves ownership: it sends endpoint.verify with a nonce,
// and the endpoint is verified when the receiver answers 2xx with a body
// containing the nonce (contract section 6, Ownership verification).
func (s *Service) VerifyEndpoint(ctx context.Context, id string) (*Endpoint, SendResult, error) {
	ep, err := s.GetEndpoint(ctx, id)
	if err != nil {
		return nil, SendResult{}, err
	}
	nonce := "vn_" + randomID(24)
	envID, res, err := s.post(ctx, ep, TypeEndpointVerify, map[string]string{"nonce": nonce})
	if err != nil {
		return nil, SendResult{}, err
	}
	switch {
	case !res.OK():
		return ep, sendResult(envID, res, false, res.ErrorText()), nil
	case !bytes.Contains(res.Body, []byte(nonce)):
		return ep, sendResult(envID, res, false, "the response body does not contain the nonce; answer 2xx with the nonce, e.g. {\"nonce\":\"...\"}"), nil
	}
	url := ep.URL
	ep, err = s.change(ctx, id, false, func(cur *Endpoint, now time.Time) error {
		if cur.URL != url {
			return ticketing.Errorf(ticketing.CodeConflict, "the endpoint's URL changed while verifying; verify again")
		}
		cur.Verified, cur.VerifiedAt = true, &now
		return nil
	})
	if err != nil {
		return nil, SendResult{}, err
	}
	return ep, sendResult(envID, res, true, ""), nil
}

// TestEndpoint sends webhook.test now, outside the queue. It is not a
// delivery: nothing is recorded and a failure does not count against the
// endpoint's health.
func (s *Service) TestEndpoint(ctx context.Context, id string) (SendResult, error) {
	ep, err := s.GetEndpoint(ctx, id)
	if err != nil {
		return SendResult{}, err
	}
	data := map[string]string{"endpoint_id": ep.ID, "message": "This is a test event from tix. It is not an order event."}
	envID, res, err := s.post(ctx, ep, TypeWebhookTest, data)
	if err != nil {
		return SendResult{}, err
	}
	why := ""
	if !res.OK() {
		why = res.ErrorText()
	}
	return sendResult(envID, res, res.OK(), why), nil
}

const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randomID is n random base62 characters (rejection sampling: no bias).
func randomID(n int) string {
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/4+4)
	for len(out) < n {
		if _, err := rand.Read(buf); err != nil {
			panic("crypto/rand failed: " + err.Error())
		}
		for _, c := range buf {
			if c < 248 && len(out) < n { // 248 = 4 * 62
				out = append(out, idAlphabet[c%62])
			}
		}
	}
	return string(out)
}
