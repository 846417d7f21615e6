// Package queue is the SQS adapter: the only package that imports the SQS SDK.
package queue

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"tix/internal/awscfg"
)

// MaxDelay is SQS's longest message delay. fauxqs accepts more; this adapter
// refuses it, so that code working locally works on AWS.
const MaxDelay = 900 * time.Second

// Names of tix's queues: each work queue has a dead-letter queue.
const (
	DeliveriesQueue = "deliveries"
	TimersQueue     = "timers" // ticketing.Timer messages; see Timers
)

// Queues are the work queues the local stack and the CDK stack create.
var Queues = []string{DeliveriesQueue, TimersQueue}

// DLQ names the dead-letter queue of a queue.
func DLQ(name string) string { return name + "-dlq" }

// MaxReceives is how many times a message is received before it goes to the DLQ.
const MaxReceives = 5

// Client is an SQS client bound to a queue name prefix (tix-<stage> on AWS).
// It is safe for concurrent use.
type Client struct {
	sqs    *sqs.Client
	prefix string

	mu   sync.Mutex
	urls map[string]*queueURL // by short name
}

// queueURL is one queue's URL, resolved once: its lock is held while resolving,
// so that concurrent first uses make one GetQueueUrl call; a failure is not
// cached.
type queueURL struct {
	mu  sync.Mutex
	url string
}

// Open builds an SQS client; a local endpoint gets dummy static credentials.
func Open(ctx context.Context, region, endpoint, prefix string) (*Client, error) {
	cfg, err := awscfg.Load(ctx, region, endpoint)
	if err != nil {
		return nil, err
	}
	c := sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	return &Client{sqs: c, prefix: prefix, urls: map[string]*queueURL{}}, nil
}

// QueueName is the full name of a queue.
func (c *Client) QueueName(name string) string { return c.prefix + "-" + name }

// EnsureQueues creates every work queue and its dead-letter queue if absent and
// returns their URLs by short name. Creating an existing queue with the same
// attributes is a no-op in SQS.
func (c *Client) EnsureQueues(ctx context.Context) (map[string]string, error) {
	urls := map[string]string{}
	for _, q := range Queues {
		dlq, err := c.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(c.QueueName(DLQ(q)))})
		if err != nil {
			return nil, fmt.Errorf("create queue %s: %w", c.QueueName(DLQ(q)), err)
		}
		attrs, err := c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl: dlq.QueueUrl, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
		})
		if err != nil {
			return nil, fmt.Errorf("read queue %s: %w", c.QueueName(DLQ(q)), err)
		}
		redrive := fmt.Sprintf(`{"deadLetterTargetArn":%q,"maxReceiveCount":"%s"}`, attrs.Attributes["QueueArn"], strconv.Itoa(MaxReceives))
		out, err := c.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{
			QueueName:  aws.String(c.QueueName(q)),
			Attributes: map[string]string{"RedrivePolicy": redrive, "VisibilityTimeout": "60"},
		})
		if err != nil {
			return nil, fmt.Errorf("create queue %s: %w", c.QueueName(q), err)
		}
		urls[q], urls[DLQ(q)] = aws.ToString(out.QueueUrl), aws.ToString(dlq.QueueUrl)
	}
	c.mu.Lock()
	for name, u := range urls {
		c.urls[name] = &queueURL{url: u}
	}
	c.mu.Unlock()
	return urls, nil
}
