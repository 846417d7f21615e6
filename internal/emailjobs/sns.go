package emailjobs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Suppression is an address to stop sending to, and why.
type Suppression struct {
	Address string
	Reason  string // bounce | complaint
	At      time.Time
}

// ParseSESNotification reads an SNS message from SES (an event publishing
// record or a classic notification, raw or inside the SNS envelope) and
// returns the addresses to suppress: every recipient of a permanent bounce
// and every complainer. Transient bounces and other events suppress nothing.
func ParseSESNotification(body []byte) ([]Suppression, error) {
	var env struct {
		Type    string `json:"Type"`
		Message string `json:"Message"`
	}
	if err := json.Unmarshal(body, &env); err == nil && env.Type == "Notification" && env.Message != "" {
		body = []byte(env.Message)
	}
	var n struct {
		NotificationType string `json:"notificationType"`
		EventType        string `json:"eventType"`
		Bounce           *struct {
			BounceType        string `json:"bounceType"`
			Timestamp         time.Time
			BouncedRecipients []struct {
				EmailAddress string `json:"emailAddress"`
			} `json:"bouncedRecipients"`
		} `json:"bounce"`
		Complaint *struct {
			Timestamp            time.Time
			ComplainedRecipients []struct {
				EmailAddress string `json:"emailAddress"`
			} `json:"complainedRecipients"`
		} `json:"complaint"`
	}
	if err := json.Unmarshal(body, &n); err != nil {
		return nil, fmt.Errorf("decode SES notification: %w", err)
	}
	typ := n.NotificationType
	if typ == "" {
		typ = n.EventType
	}
	var out []Suppression
	switch typ {
	case "Bounce":
		if n.Bounce == nil {
			return nil, fmt.Errorf("SES bounce without its bounce object")
		}
		if n.Bounce.BounceType != "Permanent" {
			return nil, nil
		}
		for _, r := range n.Bounce.BouncedRecipients {
			out = append(out, Suppression{Address: Normalize(r.EmailAddress), Reason: "bounce", At: n.Bounce.Timestamp})
		}
	case "Complaint":
		if n.Complaint == nil {
			return nil, fmt.Errorf("SES complaint without its complaint object")
		}
		for _, r := range n.Complaint.ComplainedRecipients {
			out = append(out, Suppression{Address: Normalize(r.EmailAddress), Reason: "complaint", At: n.Complaint.Timestamp})
		}
	}
	return out, nil
}

// Normalize is the suppression list's key of an address: trimmed, lower case.
func Normalize(addr string) string { return strings.ToLower(strings.TrimSpace(addr)) }

// Suppressor records suppressed addresses (store.Emails).
type Suppressor interface {
	Suppress(ctx context.Context, s Suppression) error
}

// ApplySESNotification is the SNS handler's work: it records every address an
// SES notification says to stop sending to and returns how many. A Lambda
// subscribed to the configuration set's SNS topic calls it with the SNS
// message body.
func ApplySESNotification(ctx context.Context, st Suppressor, body []byte) (int, error) {
	sups, err := ParseSESNotification(body)
	if err != nil {
		return 0, err
	}
	for i, s := range sups {
		if err := st.Suppress(ctx, s); err != nil {
			return i, err
		}
	}
	return len(sups), nil
}

// IsSESNotification reports whether a queue message is an SES event (raw, or
// in its SNS envelope) rather than one of tix's own messages.
func IsSESNotification(body []byte) bool {
	var m struct {
		Type             string           `json:"Type"`
		TopicArn         string           `json:"TopicArn"`
		NotificationType string           `json:"notificationType"`
		EventType        string           `json:"eventType"`
		Mail             *json.RawMessage `json:"mail"`
	}
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	return (m.Type == "Notification" && m.TopicArn != "") || ((m.NotificationType != "" || m.EventType != "") && m.Mail != nil)
}
