package emailtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// MailDev reads the local SMTP sink's inbox through its HTTP API.
type MailDev struct {
	URL string // e.g. http://127.0.0.1:1080
}

// Raw waits up to timeout for a message to address `to` and returns its raw
// source. More than one message to the address is an error: each contract
// case sends to an address of its own.
func (d MailDev) Raw(ctx context.Context, to string, timeout time.Duration) ([]byte, error) {
	deadline := time.Now().Add(timeout)
	for {
		ids, err := d.ids(ctx, to)
		if err != nil {
			return nil, err
		}
		if len(ids) > 1 {
			return nil, fmt.Errorf("maildev: %d messages to %s, want one", len(ids), to)
		}
		if len(ids) == 1 {
			return d.get(ctx, "/api/email/"+url.PathEscape(ids[0])+"/source")
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("maildev: no message to %s within %s", to, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// RawAll waits up to timeout until the inbox holds at least n messages to
// address to and returns the source of each, oldest first.
func (d MailDev) RawAll(ctx context.Context, to string, n int, timeout time.Duration) ([][]byte, error) {
	deadline := time.Now().Add(timeout)
	for {
		ids, err := d.ids(ctx, to)
		if err != nil {
			return nil, err
		}
		if len(ids) >= n {
			out := make([][]byte, len(ids))
			for i, id := range ids {
				if out[i], err = d.get(ctx, "/api/email/"+url.PathEscape(id)+"/source"); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("maildev: %d messages to %s within %s, want %d", len(ids), to, timeout, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Count is how many messages the inbox holds for address to.
func (d MailDev) Count(ctx context.Context, to string) (int, error) {
	ids, err := d.ids(ctx, to)
	return len(ids), err
}

func (d MailDev) ids(ctx context.Context, to string) ([]string, error) {
	body, err := d.get(ctx, "/api/email?to.address="+url.QueryEscape(to))
	if err != nil {
		return nil, err
	}
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("maildev: email list: %w", err)
	}
	ids := make([]string, len(list))
	for i, e := range list {
		ids[i] = e.ID
	}
	return ids, nil
}

func (d MailDev) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.URL+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("maildev at %s (is it running? make test starts it): %w", d.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("maildev GET %s: %s: %s", path, resp.Status, body)
	}
	return body, nil
}
