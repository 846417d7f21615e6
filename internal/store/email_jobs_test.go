package store_test

import (
	"context"
	"testing"
	"time"

	"tix/internal/emailjobs"
	"tix/internal/ticketing"
)

func ticketsJob(orderID string, now time.Time) *emailjobs.Job {
	return &emailjobs.Job{Subject: orderID, Name: "tickets", Kind: emailjobs.KindTickets, OrganizerID: salesOrg,
		Environment: ticketing.EnvTest, OrderID: orderID, Status: emailjobs.StatusPending, MaxAttempts: 3,
		NextAttemptAt: now, CreatedAt: now, UpdatedAt: now}
}

// An event's dispatch writes its email job in the same transaction; a second
// event that owes the same job (the order paid again, a late payment
// reinstating it) dispatches and leaves the job as it is.
func TestDispatchWritesTheEmailJobOnce(t *testing.T) {
	h := newHookEnv(t)
	ctx := context.Background()
	ev1, ev2 := h.paidEvent(t), h.paidEvent(t)
	now := h.clk.Now()
	if err := h.st.Webhooks.Dispatch(ctx, ev1.ID, nil, ticketsJob(ev1.Order.ID, now)); err != nil {
		t.Fatal(err)
	}
	j, err := h.st.Emails.GetJob(ctx, ev1.Order.ID+"/tickets")
	if err != nil || j.Version != 1 || j.Status != emailjobs.StatusPending {
		t.Fatalf("job after dispatch: %+v %v", j, err)
	}
	due, err := h.st.Emails.OverdueJobs(ctx, now.Add(time.Second), 10)
	if err != nil || len(due) != 1 || due[0].ID() != j.ID() {
		t.Fatalf("overdue jobs %+v %v, want the pending one", due, err)
	}
	j.Status = emailjobs.StatusSent
	if err := h.st.Emails.SaveJob(ctx, j, time.Time{}, false); err != nil {
		t.Fatal(err)
	}
	// ev2 owes the same job (as a second order.paid of ev1's order would).
	if err := h.st.Webhooks.Dispatch(ctx, ev2.ID, nil, ticketsJob(ev1.Order.ID, now), ticketsJob(ev2.Order.ID, now)); err != nil {
		t.Fatal(err)
	}
	if _, dispatched, err := h.st.Webhooks.GetOrderEvent(ctx, ev2.ID); err != nil || !dispatched {
		t.Fatalf("ev2 dispatched=%v %v", dispatched, err)
	}
	j, err = h.st.Emails.GetJob(ctx, ev1.Order.ID+"/tickets")
	if err != nil || j.Status != emailjobs.StatusSent || j.Version != 2 {
		t.Fatalf("the existing job changed: %+v %v", j, err)
	}
	if _, err := h.st.Emails.GetJob(ctx, ev2.Order.ID+"/tickets"); err != nil {
		t.Fatalf("ev2's own job: %v", err)
	}
	if due, _ := h.st.Emails.OverdueJobs(ctx, now.Add(time.Hour), 10); len(due) != 1 || due[0].Subject != ev2.Order.ID {
		t.Fatalf("overdue jobs %+v: a sent job left the due index?", due)
	}
	// A dispatched event dispatches no more.
	if n, err := h.st.Emails.CreateJobs(ctx, []*emailjobs.Job{ticketsJob(ev1.Order.ID, now)}); err != nil || n != 0 {
		t.Fatalf("CreateJobs of an existing job: %d %v", n, err)
	}
}

// Identity and contacts are set apart and read together; an unknown
// organizer is not found.
func TestIdentityAndContacts(t *testing.T) {
	h := newHookEnv(t)
	ctx := context.Background()
	if err := h.st.Organizers.CreateOrganizer(ctx, ticketing.Organizer{ID: salesOrg, Name: "Sales Org", CreatedAt: h.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.Emails.SetIdentity(ctx, salesOrg, map[string]string{"sender_name": "Hall Tickets", "language": "en", "reply_to": "help@hall.example"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.Emails.SetContacts(ctx, salesOrg, []string{"a@hall.example", "b@hall.example"}); err != nil {
		t.Fatal(err)
	}
	id, err := h.st.Emails.SetIdentity(ctx, salesOrg, map[string]string{"reply_to": ""})
	if err != nil || id.SenderName != "Hall Tickets" || id.Language != "en" || id.ReplyTo != "" || len(id.Contacts) != 2 || id.Name == "" {
		t.Fatalf("identity %+v %v", id, err)
	}
	if _, err := h.st.Emails.SetContacts(ctx, "org_nobody", nil); !ticketing.IsCode(err, ticketing.CodeNotFound) {
		t.Fatalf("unknown organizer: %v", err)
	}
	if _, err := h.st.Emails.GetIdentity(ctx, "org_nobody"); err != emailjobs.ErrNotFound {
		t.Fatalf("unknown organizer: %v", err)
	}
}
