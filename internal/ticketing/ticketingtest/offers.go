package ticketingtest

import (
	"context"
	"net/url"
	"sync"
	"testing"

	"tix/internal/ticketing"
)

// Offers stands in for the transfer offers' email (ticketing.TransferOffers):
// it keeps each transfer's accept link, as the recipient's inbox would. The
// email pipeline itself is proven by internal/app's end-to-end test.
type Offers struct {
	mu    sync.Mutex
	links map[string]string
	// Fail, when set, is the error of the next offers (the job not written).
	Fail error
}

// TransferOffer records the link.
func (o *Offers) TransferOffer(_ context.Context, tr *ticketing.Transfer, _, link string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.Fail != nil {
		return o.Fail
	}
	if o.links == nil {
		o.links = map[string]string{}
	}
	o.links[tr.ID] = link
	return nil
}

// Link is transfer id's accept link.
func (o *Offers) Link(t testing.TB, id string) *url.URL {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	u, err := url.Parse(o.links[id])
	if err != nil || u.Query().Get("token") == "" {
		t.Fatalf("no accept link for %s: %q", id, o.links[id])
	}
	return u
}

// Token is the secret of transfer id's accept link.
func (o *Offers) Token(t testing.TB, id string) string {
	t.Helper()
	return o.Link(t, id).Query().Get("token")
}

// AcceptURL is a deployment's accept link (app.TransferAcceptURL's shape).
func AcceptURL(id, token string) string {
	return "https://tix.example/v1/transfers/" + id + "/accept?token=" + url.QueryEscape(token)
}
