package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"tix/internal/clock"
)

// eventLogClient reads GET /v1/order-events with an sk key.
type eventLogClient struct {
	base, key string
	limit     int
	http      *http.Client
}

func newEventLogClient(base, key string, limit int) *eventLogClient {
	return &eventLogClient{base: base, key: key, limit: limit, http: &http.Client{Timeout: 30 * time.Second}}
}

// logEvent is one item of the log: its exact bytes (the webhook body) and
// what tixctl listen needs of it.
type logEvent struct {
	raw       []byte
	ID        string `json:"id"`
	Type      string `json:"type"`
	CreatedAt string `json:"created_at"`
	OrderID   string `json:"-"`
	created   time.Time
}

// logPage is one page of the log, newest first.
type logPage struct {
	events []logEvent
	next   string
}

// apiError is an error answer of the API: its status and contract error.
type apiError struct {
	status        int
	code, message string
}

func (e *apiError) Error() string {
	msg := fmt.Sprintf("the event log answered %d", e.status)
	if e.message != "" {
		msg += fmt.Sprintf(" %s: %s", e.code, e.message)
	}
	if e.status == http.StatusUnauthorized || e.status == http.StatusForbidden {
		msg += " (check --key: an sk_ key of the organizer with webhooks:manage, and --api)"
	}
	return msg
}

// serverTime reads one event of the log, checking the key, and returns the
// API's clock (its Date header; this machine's clock without one).
func (c *eventLogClient) serverTime(ctx context.Context) (time.Time, error) {
	res, _, err := c.get(ctx, url.Values{"limit": {"1"}})
	if err != nil {
		return time.Time{}, err
	}
	if t, err := http.ParseTime(res.Header.Get("Date")); err == nil {
		return t, nil
	}
	return time.Now(), nil
}

// page reads the events created at or after from, after cursor when given.
func (c *eventLogClient) page(ctx context.Context, from time.Time, cursor string) (logPage, error) {
	q := url.Values{"limit": {strconv.Itoa(c.limit)}, "created_after": {clock.Format(from)}}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	_, body, err := c.get(ctx, q)
	if err != nil {
		return logPage{}, err
	}
	var p struct {
		Data       []json.RawMessage `json:"data"`
		NextCursor *string           `json:"next_cursor"`
		HasMore    bool              `json:"has_more"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return logPage{}, fmt.Errorf("the event log answered something else than a page: %w", err)
	}
	var out logPage
	if p.HasMore && p.NextCursor != nil {
		out.next = *p.NextCursor
	}
	for _, raw := range p.Data {
		ev, err := parseLogEvent(raw)
		if err != nil {
			return logPage{}, err
		}
		out.events = append(out.events, ev)
	}
	return out, nil
}

func parseLogEvent(raw json.RawMessage) (logEvent, error) {
	var ev logEvent
	var order struct {
		Data struct {
			Order struct {
				ID string `json:"id"`
			} `json:"order"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil || json.Unmarshal(raw, &order) != nil || ev.ID == "" {
		return ev, fmt.Errorf("an event of the log is not an envelope: %.200s", raw)
	}
	var err error
	if ev.created, err = time.Parse(time.RFC3339, ev.CreatedAt); err != nil {
		return ev, fmt.Errorf("event %s: created_at %q: %w", ev.ID, ev.CreatedAt, err)
	}
	ev.raw, ev.OrderID = raw, order.Data.Order.ID
	return ev, nil
}

// get sends GET /order-events?q and returns the answer of a 200, else an
// *apiError (a network error as it is).
func (c *eventLogClient) get(ctx context.Context, q url.Values) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/order-events?"+q.Encode(), nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("User-Agent", "tixctl-listen")
	res, err := c.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return nil, nil, err
	}
	if res.StatusCode == http.StatusOK {
		return res, body, nil
	}
	ae := &apiError{status: res.StatusCode}
	var env struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil {
		ae.code, ae.message = env.Error.Code, env.Error.Message
	}
	return nil, nil, ae
}
