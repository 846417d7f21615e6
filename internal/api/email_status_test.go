package api_test

import (
	"context"
	"testing"

	"tix/internal/auth"
	"tix/internal/clock"
	"tix/internal/emailjobs"
	"tix/internal/emailrender"
	"tix/internal/emailsend"
	"tix/internal/ticketing"
)

// GET /orders/{id} shows the buyer's email jobs to a secret key with
// orders:read (beside buyer), and to no one else.
func TestOrderRead_EmailStatus(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	skStatus, _ := h.key(orgA, auth.Secret, withScopes(auth.ScopeOrdersStatus))
	svc := &emailjobs.Service{Store: h.st.Emails, Orders: h.st.Orders, Events: h.st.Catalog, Clock: h.clk, Settings: emailjobs.DefaultSettings}
	h.srv.Email = svc

	o := h.mustOrder(sk, "mail-1", gaBody("evt_concert_ga", 1))
	id := o["id"].(string)
	got := h.get("/v1/orders/"+id, sk).json(t)
	if e, ok := got["email"].([]any); !ok || len(e) != 0 {
		t.Fatalf("email of a pending order: %v", got["email"])
	}
	now := h.clk.Now()
	if _, err := h.st.Emails.CreateJobs(context.Background(), []*emailjobs.Job{{Subject: id, Name: "tickets", Kind: emailjobs.KindTickets,
		OrganizerID: orgA, Environment: ticketing.EnvTest, OrderID: id, Status: emailjobs.StatusPending, MaxAttempts: 5,
		NextAttemptAt: now, CreatedAt: now}}); err != nil {
		t.Fatal(err)
	}
	got = h.get("/v1/orders/"+id, sk).json(t)
	e, _ := got["email"].([]any)
	if len(e) != 1 {
		t.Fatalf("email %v", got["email"])
	}
	if j := e[0].(map[string]any); j["kind"] != "tickets" || j["status"] != "pending" || j["sent_at"] != nil {
		t.Errorf("email job %v", j)
	}
	// Sent: sent_at in the API's timestamp format.
	j, err := h.st.Emails.GetJob(context.Background(), id+"/tickets")
	if err != nil {
		t.Fatal(err)
	}
	j.Status, j.SentAt, j.Attempts = emailjobs.StatusSent, &now, 1
	if err := h.st.Emails.SaveJob(context.Background(), j, now, false); err != nil {
		t.Fatal(err)
	}
	got = h.get("/v1/orders/"+id, sk).json(t)
	if j := got["email"].([]any)[0].(map[string]any); j["status"] != "sent" || j["sent_at"] != clock.Format(now) {
		t.Errorf("sent job %v, want sent_at %s", j, clock.Format(now))
	}
	if got := h.get("/v1/orders/"+id, skStatus).json(t); got["email"] != nil || got["buyer"] != nil {
		t.Errorf("a key without orders:read sees %v", got)
	}
}

// A test-mode order's tickets to an address that is none of the organizer's
// own are skipped: GET /orders/{id} says so (status skipped, reason
// test_mode, no error), and nothing is sent.
func TestOrderRead_EmailSkippedInTestModeSaysWhy(t *testing.T) {
	h := newHarness(t)
	h.seedCatalog()
	sk, _ := h.key(orgA, auth.Secret)
	sent := 0
	svc := &emailjobs.Service{Store: h.st.Emails, Orders: h.st.Orders, Events: h.st.Catalog, Clock: h.clk, Settings: emailjobs.DefaultSettings, Renderer: emailrender.TextRenderer{},
		Sender: senderFunc(func() { sent++ })}
	h.srv.Email = svc
	o := h.mustOrder(sk, "mail-skip", gaBody("evt_concert_ga", 1))
	id := o["id"].(string)
	if r := h.simulate(sk, id, ""); r.StatusCode != 200 {
		t.Fatalf("simulate-payment: %d %s", r.StatusCode, r.body)
	}
	now := h.clk.Now()
	if _, err := h.st.Emails.CreateJobs(context.Background(), []*emailjobs.Job{{Subject: id, Name: "tickets", Kind: emailjobs.KindTickets,
		OrganizerID: orgA, Environment: ticketing.EnvTest, OrderID: id, Status: emailjobs.StatusPending, MaxAttempts: 5,
		NextAttemptAt: now, CreatedAt: now}}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Handle(context.Background(), emailjobs.Message{Kind: emailjobs.KindEmail, JobID: id + "/tickets", Due: now}); err != nil {
		t.Fatal(err)
	}
	got := h.get("/v1/orders/"+id, sk).json(t)
	e, _ := got["email"].([]any)
	if len(e) != 1 || sent != 0 {
		t.Fatalf("email %v, %d sent", got["email"], sent)
	}
	if j := e[0].(map[string]any); j["status"] != "skipped" || j["reason"] != "test_mode" || j["last_error"] != nil || j["sent_at"] != nil {
		t.Errorf("a stranger's test-mode email: %v, want skipped with reason test_mode", j)
	}
}

// senderFunc is a mail sender that calls f and sends nothing.
type senderFunc func()

func (f senderFunc) Send(context.Context, emailsend.Message) (string, error) { f(); return "x", nil }
