package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// ErrUnknownQueue is returned for a queue that is not one of tix's queues or
// that does not exist (EnsureQueues has not created it).
var ErrUnknownQueue = errors.New("unknown queue")

// Message is one received SQS message.
type Message struct {
	ID            string
	Body          []byte
	ReceiptHandle string // what Delete takes
	ReceiveCount  int    // 1 on the first delivery; MaxReceives sends it to the DLQ
}

// known reports whether name is one of tix's queues or their DLQs.
func known(name string) bool {
	for _, q := range Queues {
		if name == q || name == DLQ(q) {
			return true
		}
	}
	return false
}

// url resolves a queue's URL with GetQueueUrl once and caches it.
func (c *Client) url(ctx context.Context, name string) (string, error) {
	if !known(name) {
		return "", fmt.Errorf("%w %q: want one of %v or their DLQs", ErrUnknownQueue, name, Queues)
	}
	c.mu.Lock()
	e, ok := c.urls[name]
	if !ok {
		e = &queueURL{}
		c.urls[name] = e
	}
	c.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.url != "" {
		return e.url, nil
	}
	out, err := c.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(c.QueueName(name))})
	if err != nil {
		if _, missing := errors.AsType[*types.QueueDoesNotExist](err); missing {
			return "", fmt.Errorf("%w %q: queue %s does not exist: %v", ErrUnknownQueue, name, c.QueueName(name), err)
		}
		return "", fmt.Errorf("resolve queue %s: %w", c.QueueName(name), err)
	}
	e.url = aws.ToString(out.QueueUrl)
	return e.url, nil
}

// delaySeconds is the DelaySeconds sent for a delay: rounded up to whole
// seconds and clamped to [0, MaxDelay], which AWS enforces and fauxqs does not.
func delaySeconds(d time.Duration) int32 {
	if d <= 0 {
		return 0
	}
	if d >= MaxDelay {
		return int32(MaxDelay / time.Second)
	}
	return int32((d + time.Second - 1) / time.Second)
}

// Send puts body on a queue, to be delivered after delay (clamped to
// [0, MaxDelay], rounded up to whole seconds). SQS carries text: body must be
// valid UTF-8.
func (c *Client) Send(ctx context.Context, queueName string, body []byte, delay time.Duration) error {
	u, err := c.url(ctx, queueName)
	if err != nil {
		return err
	}
	if !utf8.Valid(body) {
		return fmt.Errorf("send to %s: body is not valid UTF-8", queueName)
	}
	_, err = c.sqs.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:     aws.String(u),
		MessageBody:  aws.String(string(body)),
		DelaySeconds: delaySeconds(delay),
	})
	if err != nil {
		return fmt.Errorf("send to %s: %w", c.QueueName(queueName), err)
	}
	return nil
}

// Receive takes up to maxMessages messages (1..10) from a queue, long-polling for up
// to wait (0..20 s, whole seconds). A received message is invisible to other
// receivers for the queue's visibility timeout, then comes back unless deleted.
func (c *Client) Receive(ctx context.Context, queueName string, maxMessages int, wait time.Duration) ([]Message, error) {
	u, err := c.url(ctx, queueName)
	if err != nil {
		return nil, err
	}
	n := int32(min(10, max(1, maxMessages))) // SQS takes 1..10
	waitSec := int32(min(20, max(0, (wait+time.Second-1)/time.Second)))
	out, err := c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(u),
		MaxNumberOfMessages:         n,
		WaitTimeSeconds:             waitSec,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
	})
	if err != nil {
		return nil, fmt.Errorf("receive from %s: %w", c.QueueName(queueName), err)
	}
	msgs := make([]Message, 0, len(out.Messages))
	for _, m := range out.Messages {
		count, _ := strconv.Atoi(m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
		msgs = append(msgs, Message{
			ID:            aws.ToString(m.MessageId),
			Body:          []byte(aws.ToString(m.Body)),
			ReceiptHandle: aws.ToString(m.ReceiptHandle),
			ReceiveCount:  count,
		})
	}
	return msgs, nil
}

// Delete removes a handled message from a queue.
func (c *Client) Delete(ctx context.Context, queueName, receiptHandle string) error {
	u, err := c.url(ctx, queueName)
	if err != nil {
		return err
	}
	if _, err := c.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(u), ReceiptHandle: aws.String(receiptHandle)}); err != nil {
		return fmt.Errorf("delete from %s: %w", c.QueueName(queueName), err)
	}
	return nil
}

// Consume polling settings.
const (
	consumeWait    = 2 * time.Second // long poll
	consumeBatch   = 10
	consumeBackoff = time.Second // after a failed receive
	deleteTimeout  = 10 * time.Second
)

// Consume polls a queue until ctx is done, handling each batch of messages
// concurrently: a message is deleted when handle returns nil and otherwise left
// to come back after the visibility timeout (and, after MaxReceives, to go to
// the DLQ). Errors are logged with log/slog. It is the local runner's stand-in
// for the Lambda SQS trigger. It returns nil when ctx is done, or an error at
// once if the queue is unknown.
func (c *Client) Consume(ctx context.Context, queueName string, handle func(context.Context, Message) error) error {
	if _, err := c.url(ctx, queueName); err != nil {
		return err
	}
	log := slog.Default().With("queue", c.QueueName(queueName))
	for ctx.Err() == nil {
		msgs, err := c.Receive(ctx, queueName, consumeBatch, consumeWait)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			log.ErrorContext(ctx, "receive messages", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(consumeBackoff):
			}
			continue
		}
		var wg sync.WaitGroup
		for _, m := range msgs {
			wg.Go(func() { c.consumeOne(ctx, log, queueName, m, handle) })
		}
		wg.Wait()
	}
	return nil
}

func (c *Client) consumeOne(ctx context.Context, log *slog.Logger, queueName string, m Message, handle func(context.Context, Message) error) {
	log = log.With("message_id", m.ID, "receive_count", m.ReceiveCount)
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("handler panicked: %v", r)
			}
		}()
		return handle(ctx, m)
	}()
	if err != nil {
		log.ErrorContext(ctx, "handle message; it will be redelivered", "err", err, "dead_letter_after", MaxReceives)
		return
	}
	// A handled message is deleted even if ctx ended meanwhile: otherwise the
	// work would be done twice.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
	defer cancel()
	if err := c.Delete(dctx, queueName, m.ReceiptHandle); err != nil {
		log.ErrorContext(ctx, "delete handled message", "err", err)
	}
}
