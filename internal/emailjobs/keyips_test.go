package emailjobs_test

import (
	"testing"
	"time"

	"tix/internal/emailjobs"
)

// A secret key used from more distinct IPs in a day than the threshold
// alerts its owner once; repeated IPs do not count, and the IPs after the
// threshold raise no second alert.
func TestKeyUsedFromManyIPsAlertsOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if _, err := h.a.Store.Emails.SetContacts(h.ctx, "org_l", []string{"owner@example.com"}); err != nil {
		t.Fatal(err)
	}
	w := &emailjobs.IPWatch{Store: h.a.Store.Keys, Mail: h.svc, Max: 2}
	other := &emailjobs.IPWatch{Store: h.a.Store.Keys, Mail: h.svc, Max: 2} // a second process
	now := time.Now()
	for _, ip := range []string{"203.0.113.1", "203.0.113.1", "203.0.113.2"} {
		w.Seen(h.ctx, "org_l", "key_ips", ip, now)
		other.Seen(h.ctx, "org_l", "key_ips", ip, now)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(h.rec.to("alert")); n != 0 {
		t.Fatalf("%d alerts at the threshold", n)
	}
	for _, ip := range []string{"203.0.113.3", "203.0.113.4", "203.0.113.3"} {
		other.Seen(h.ctx, "org_l", "key_ips", ip, now)
	}
	h.waitFor("the alert", func() bool { return len(h.rec.to("alert")) >= 1 })
	time.Sleep(300 * time.Millisecond)
	alerts := h.rec.to("alert")
	if len(alerts) != 1 {
		t.Fatalf("%d alerts, want 1", len(alerts))
	}
	j, err := h.a.Store.Emails.GetJob(h.ctx, "org_l/alert."+emailjobs.CauseKeyManyIPs+".key_ips."+now.UTC().Format("2006-01-02")+".0")
	if err != nil || j.Alert.DistinctIPs != 3 {
		t.Fatalf("alert job %+v %v", j, err)
	}
}
