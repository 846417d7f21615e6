package webhook

import (
	"fmt"
	"time"
)

// Settings are the delivery schedule, health rules and limits. Every duration
// is configuration, so the local stack and tests can shorten them.
type Settings struct {
	// Schedule is the wait before each attempt: Schedule[0] before the first,
	// Schedule[i] between attempt i and i+1. Its length is max_attempts.
	Schedule []time.Duration
	// An endpoint that delivered within SilentAfter is disabled after
	// DisableFailures consecutive failed attempts spanning at least
	// DisableWindow; one that never delivered, or not within SilentAfter, after
	// DisableFailuresNew consecutive failures (contract section 3: sooner).
	DisableFailures    int
	DisableWindow      time.Duration
	DisableFailuresNew int
	SilentAfter        time.Duration
	// RotationOverlap is how long an old secret keeps signing after a rotation.
	RotationOverlap time.Duration
	// DomainRate and GlobalRate are outbound requests per second per receiving
	// host and in all; over them an attempt is postponed, never dropped.
	DomainRate, GlobalRate int
	// RedeliverDelay puts a redelivery behind the live events already queued.
	RedeliverDelay time.Duration
	// SweepGrace is how late an attempt (or an event's fan-out) may be before
	// the sweep takes its message for lost and sends it again.
	SweepGrace time.Duration
	// MaxEndpoints per organizer and environment.
	MaxEndpoints int
	// SweepBatch bounds the work of one sweep run per kind.
	SweepBatch int
	// A replay queues ReplayBatch events per page, ReplayPause apart, and its
	// attempts take at most ReplayShare of DomainRate and GlobalRate (replay.go).
	ReplayBatch int
	ReplayPause time.Duration
	ReplayShare float64
}

// DefaultSchedule is the contract's retry schedule (section 6, Delivery rule 1).
var DefaultSchedule = []time.Duration{0, time.Minute, 5 * time.Minute, 30 * time.Minute,
	2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 24 * time.Hour}

// DefaultSettings are the production values; docs/webhooks.md and docs/configuration.md document each.
var DefaultSettings = Settings{
	Schedule:           DefaultSchedule,
	DisableFailures:    20,
	DisableWindow:      24 * time.Hour,
	DisableFailuresNew: 5,
	SilentAfter:        72 * time.Hour,
	RotationOverlap:    24 * time.Hour,
	DomainRate:         25,
	GlobalRate:         500,
	RedeliverDelay:     2 * time.Second,
	SweepGrace:         time.Minute,
	MaxEndpoints:       16,
	SweepBatch:         500,
	ReplayBatch:        25,
	ReplayPause:        time.Second,
	ReplayShare:        0.5,
}

// disableReason tells whether an endpoint with this health is disabled now,
// and why (the reason is shown to the owner).
func (s Settings) disableReason(e *Endpoint, now time.Time) string {
	established := e.LastDeliveryAt != nil && now.Sub(*e.LastDeliveryAt) <= s.SilentAfter
	if !established {
		if e.ConsecutiveFailures >= s.DisableFailuresNew {
			if e.LastDeliveryAt == nil {
				return fmt.Sprintf("%d consecutive failed deliveries and none ever succeeded", e.ConsecutiveFailures)
			}
			return fmt.Sprintf("%d consecutive failed deliveries and no successful delivery since %s",
				e.ConsecutiveFailures, e.LastDeliveryAt.UTC().Format(time.RFC3339))
		}
		return ""
	}
	if e.ConsecutiveFailures >= s.DisableFailures && e.FailingSince != nil && now.Sub(*e.FailingSince) >= s.DisableWindow {
		return fmt.Sprintf("%d consecutive failed deliveries since %s", e.ConsecutiveFailures, e.FailingSince.UTC().Format(time.RFC3339))
	}
	return ""
}
