package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"tix/internal/emailjobs"
	"tix/internal/webhook"
)

// Deliveries is the webhook.Queue over the deliveries queue: fan-out and
// attempt messages. A delay over MaxDelay is clamped; the message carries its
// due time, and webhook.Service.HandleMessage sends an early one on again.
type Deliveries struct {
	// send is Client.Send; tests replace it.
	send func(ctx context.Context, queueName string, body []byte, delay time.Duration) error
}

var _ webhook.Queue = (*Deliveries)(nil)

// NewDeliveries returns the deliveries-queue sender over c.
func NewDeliveries(c *Client) *Deliveries { return &Deliveries{send: c.Send} }

// Send puts m on the deliveries queue after delay (at most MaxDelay).
func (d *Deliveries) Send(ctx context.Context, m webhook.Message, delay time.Duration) error {
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode deliveries message: %w", err)
	}
	return d.send(ctx, DeliveriesQueue, body, min(MaxDelay, max(0, delay)))
}

// SendEmail puts an email job's message on the deliveries queue (its kind
// "email" tells it from the webhook messages) after delay (at most MaxDelay).
func (d *Deliveries) SendEmail(ctx context.Context, m emailjobs.Message, delay time.Duration) error {
	body, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode email message: %w", err)
	}
	return d.send(ctx, DeliveriesQueue, body, min(MaxDelay, max(0, delay)))
}

var _ emailjobs.Queue = (*Deliveries)(nil)
