package emailjobs_test

import (
	"strings"
	"testing"

	"tix/internal/emailjobs"
)

// An account email's job keeps its single-use link only until the email is
// sent: reading the table afterwards finds no link.
func TestAccountEmail_SentJobKeepsNoLink(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	link := "https://tix.example/dashboard/reset/confirm?t=the-single-use-secret"
	if err := h.svc.AccountEmail(h.ctx, "org_l", "person@example.com", emailjobs.CauseAccountReset, link); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the reset email", func() bool { return len(h.rec.to("alert")) == 1 })
	m := h.rec.to("alert")[0]
	if !strings.Contains(m.Text, link) {
		t.Fatalf("the email does not carry the link:\n%s", m.Text)
	}
	// The consumer records the job as sent just after the provider accepted it.
	var j *emailjobs.Job
	h.waitFor("the job recorded as sent", func() bool {
		var err error
		j, err = h.a.Store.Emails.GetJob(h.ctx, m.Headers["X-Tix-Job"])
		return err == nil && j.Status.Final()
	})
	if j.Status != emailjobs.StatusSent || j.Alert == nil || j.Alert.Cause != emailjobs.CauseAccountReset {
		t.Fatalf("job %+v", j)
	}
	if j.Alert.URL != "" {
		t.Errorf("the sent job still holds the link %q", j.Alert.URL)
	}
}
