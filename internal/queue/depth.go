package queue

import (
	"context"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Depth counts a queue's messages that are not yet deleted: visible, in flight
// (received, being handled) and delayed. Zero means nothing is waiting and no
// consumer is still handling one of its messages.
func (c *Client) Depth(ctx context.Context, queueName string) (int, error) {
	u, err := c.url(ctx, queueName)
	if err != nil {
		return 0, err
	}
	out, err := c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(u),
		AttributeNames: []types.QueueAttributeName{
			types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
			types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
		},
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, v := range out.Attributes {
		k, err := strconv.Atoi(v)
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, nil
}
