package emailjobs_test

import (
	"testing"
	"time"

	"tix/internal/emailjobs"
)

// A publishable key's ceiling refusing requests alerts its owner once per key
// and day, however many processes see it and whatever the bucket; another
// key, or the next day, alerts again.
func TestKeyCeilingAlertsOncePerKeyAndDay(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.a.Store.Emails.SetContacts(h.ctx, "org_l", []string{"owner@example.com"}); err != nil {
		t.Fatal(err)
	}
	a, b := &emailjobs.CeilingWatch{Mail: h.svc}, &emailjobs.CeilingWatch{Mail: h.svc} // two processes
	now := time.Now()
	for range 3 {
		a.CeilingHit(h.ctx, "org_l", "key_flood", "write", 6000, now)
		b.CeilingHit(h.ctx, "org_l", "key_flood", "read", 60000, now)
	}
	h.waitFor("the alert", func() bool { return len(h.rec.to("alert")) >= 1 })
	time.Sleep(300 * time.Millisecond)
	if n := len(h.rec.to("alert")); n != 1 {
		t.Fatalf("%d alerts for one key and day, want 1", n)
	}
	j, err := h.a.Store.Emails.GetJob(h.ctx, "org_l/alert."+emailjobs.CauseKeyCeiling+".key_flood."+now.UTC().Format("2006-01-02")+".0")
	if err != nil || j.Alert.KeyID != "key_flood" || j.Alert.Limit == 0 || j.Alert.Bucket == "" {
		t.Fatalf("alert job %+v %v", j, err)
	}
	b.CeilingHit(h.ctx, "org_l", "key_other", "write", 6000, now)
	a.CeilingHit(h.ctx, "org_l", "key_flood", "write", 6000, now.Add(24*time.Hour))
	h.waitFor("two more alerts", func() bool { return len(h.rec.to("alert")) >= 3 })
}
