package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"tix/internal/testenv/lambdaenv"
)

// SES's bounce reaches the deliveries queue through the configuration set's
// SNS topic (in its SNS envelope): the deliver function puts the address on
// the suppression list, within what its role allows.
func TestHandler_SESBounceSuppressesTheAddress(t *testing.T) {
	env := lambdaenv.New(t)
	env.EnableEmail()
	env.Record()
	bounce := `{"notificationType":"Bounce","bounce":{"bounceType":"Permanent","timestamp":"2026-11-23T10:00:00Z",` +
		`"bouncedRecipients":[{"emailAddress":"Gone@Example.com"}]},"mail":{"messageId":"m-1"}}`
	body, _ := json.Marshal(map[string]string{"Type": "Notification", "TopicArn": "arn:aws:sns:eu-central-1:123456789012:tix-ses", "Message": bounce})
	res, err := handler(env.App)(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "ses-1", Body: string(body)}}})
	if err != nil || len(res.BatchItemFailures) != 0 {
		t.Fatalf("handler: %+v %v", res, err)
	}
	env.CheckAccess(t, "deliver")
	if ok, err := env.App.Store.Emails.Suppressed(context.Background(), "gone@example.com"); err != nil || !ok {
		t.Fatalf("suppressed: %v %v, want the bounced address on the list", ok, err)
	}
}
