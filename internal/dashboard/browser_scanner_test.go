package dashboard_test

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	qrcode "github.com/skip2/go-qrcode"

	"tix/internal/testenv"
	"tix/internal/testenv/browser"
	"tix/internal/ticketing"
)

// writeQRVideo writes a Y4M video (what Chromium's fake camera plays, in a
// loop) of payload's QR code, rendered by the encoder the ticket email uses
// (skip2/go-qrcode, medium error correction), black on white, centred.
func writeQRVideo(t *testing.T, path, payload string) {
	t.Helper()
	q, err := qrcode.New(payload, qrcode.Medium)
	if err != nil {
		t.Fatal(err)
	}
	const w, h = 640, 480
	bm := q.Bitmap() // with its quiet zone
	px := (h - 20) / len(bm)
	x0, y0 := (w-px*len(bm))/2, (h-px*len(bm))/2
	luma := make([]byte, w*h)
	for i := range luma {
		luma[i] = 235
	}
	for r, row := range bm {
		for c, dark := range row {
			if !dark {
				continue
			}
			for y := y0 + r*px; y < y0+(r+1)*px; y++ {
				for x := x0 + c*px; x < x0+(c+1)*px; x++ {
					luma[y*w+x] = 16
				}
			}
		}
	}
	chroma := make([]byte, w*h/2) // U and V planes of 4:2:0, grey
	for i := range chroma {
		chroma[i] = 128
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	out := bufio.NewWriter(f)
	_, _ = out.WriteString("YUV4MPEG2 W640 H480 F10:1 Ip A1:1 C420jpeg\n")
	for range 10 {
		_, _ = out.WriteString("FRAME\n")
		_, _ = out.Write(luma)
		_, _ = out.Write(chroma)
	}
	if err := out.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// emulatedNetwork are the parameters of DevTools' Network.emulateNetworkConditions,
// Chromium's "Offline" switch (cdproto has only its successor, whose
// parameters this Chromium does not take yet).
type emulatedNetwork struct {
	Offline            bool    `json:"offline"`
	Latency            float64 `json:"latency"`
	DownloadThroughput float64 `json:"downloadThroughput"`
	UploadThroughput   float64 `json:"uploadThroughput"`
}

// setOffline takes the tab offline (its requests fail, navigator.onLine is
// false) or back online.
func setOffline(t *testing.T, b *browser.Browser, offline bool) {
	t.Helper()
	emulate := cdp.Command[emulatedNetwork, cdp.Empty]{Method: "Network.emulateNetworkConditions"}
	if _, err := chromedp.Call(b.Ctx, emulate, emulatedNetwork{Offline: offline, DownloadThroughput: -1, UploadThroughput: -1}); err != nil {
		t.Fatalf("network emulation: %v", err)
	}
}

func dataset(t *testing.T, b *browser.Browser, name string) string {
	t.Helper()
	return text0(t, b, `document.getElementById("scanner").dataset.`+name+` || ""`)
}

func strconvQuote(s string) string { return strconv.Quote(s) }

func text0(t *testing.T, b *browser.Browser, js string) string {
	t.Helper()
	s, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return s
}

// In a real Chromium whose camera is a video of a real ticket's QR code
// (issued and paid on DynamoDB Local, signed, rendered as its email renders
// it): sign the scanner in with a door key, start the camera: the ticket is
// admitted, then, still in view, already admitted. Offline (the network
// emulated away), the camera shows another ticket of the order: it is
// admitted from the downloaded list and queued; back online the queue is
// uploaded and the server holds that admission. Every page passes axe-core.
func TestBrowser_ScannerCameraOnlineThenOffline(t *testing.T) {
	d := newScannerDoor(t)
	hall := d.seatedEvent(t)
	o, seats := d.seatedOrder(t, hall, 2)
	_, codes := d.codes(t, o)
	var first, second string
	for n := range codes {
		if first == "" {
			first = n
		} else {
			second = n
		}
	}
	d.key, d.secret = d.newKey(t, []string{"checkins:write"}, []string{hall.ID})
	d.event = hall
	video := filepath.Join(t.TempDir(), "camera.y4m")
	writeQRVideo(t, video, codes[first])
	b := browser.New(t, 4*time.Minute,
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.Flag("use-file-for-fake-video-capture", video))

	run(t, b, "sign-in form", chromedp.Navigate(d.url("/lang/en?back=/dashboard/scanner/")), chromedp.WaitVisible("#key"))
	checkPage(t, b, "scanner-signin")
	run(t, b, "sign in", chromedp.SendKeys("#key", d.secret), chromedp.Submit("#key"), chromedp.WaitVisible("#camera-toggle"))
	testenv.WaitFor(t, 20*time.Second, "the page ready", func() bool { return dataset(t, b, "ready") == "true" })
	run(t, b, "name the gate", chromedp.SendKeys("#gate", "north"))
	text0(t, b, `(() => { const e = document.getElementById("event"); e.value = `+strconvQuote(d.event.ID)+`;
		e.dispatchEvent(new Event("change")); document.getElementById("gate").dispatchEvent(new Event("change")); return ""; })()`)
	testenv.WaitFor(t, 20*time.Second, "the admission list of 2", func() bool { return dataset(t, b, "list") == "2" })
	checkPage(t, b, "scanner")

	run(t, b, "start the camera", chromedp.Click("#camera-toggle"))
	testenv.WaitFor(t, 20*time.Second, "admitted", func() bool { return dataset(t, b, "last") == ticketing.ResultAdmitted })
	if got := text(t, b, "#result"); !strings.Contains(got, "Admitted") || !strings.Contains(got, first) ||
		!strings.Contains(got, "Seat "+seats[first]) {
		t.Errorf("the answer: %q", got)
	}
	t.Logf("screenshot: %s", b.Screenshot(t, "admitted"))
	// Held in view, the ticket is not scanned again; shown again, it is.
	time.Sleep(4 * time.Second)
	if got := dataset(t, b, "last"); got != ticketing.ResultAdmitted {
		t.Errorf("a ticket held in view was scanned again: %s", got)
	}
	run(t, b, "show it again", chromedp.Click("#camera-toggle"), chromedp.Click("#camera-toggle"))
	testenv.WaitFor(t, 20*time.Second, "already admitted", func() bool { return dataset(t, b, "last") == ticketing.ResultAlreadyAdmitted })
	if got := text(t, b, "#result"); !strings.Contains(got, "Already admitted") || !strings.Contains(got, "gate north") {
		t.Errorf("the answer: %q", got)
	}
	checkPage(t, b, "already-admitted")
	run(t, b, "stop the camera", chromedp.Click("#camera-toggle"))

	// Offline: the camera now shows the order's other ticket.
	writeQRVideo(t, video, codes[second])
	setOffline(t, b, true)
	testenv.WaitFor(t, 10*time.Second, "offline", func() bool { return dataset(t, b, "net") == "offline" })
	run(t, b, "start the camera", chromedp.Click("#camera-toggle"))
	testenv.WaitFor(t, 20*time.Second, "admitted offline", func() bool {
		return dataset(t, b, "last") == ticketing.ResultAdmitted && strings.Contains(text(t, b, "#result"), second)
	})
	if got := text(t, b, "#result"); !strings.Contains(got, "offline") || !strings.Contains(got, "Seat "+seats[second]) {
		t.Errorf("the offline answer: %q", got)
	}
	testenv.WaitFor(t, 5*time.Second, "1 scan waiting", func() bool { return dataset(t, b, "pending") == "1" })
	t.Logf("screenshot: %s", b.Screenshot(t, "offline-admitted"))
	run(t, b, "stop the camera", chromedp.Click("#camera-toggle"))
	// A scan the server will refuse (older than it takes) waits beside it:
	// it must hold up no other scan.
	inject := `new Promise((ok, fail) => { const rq = indexedDB.open("tix-scanner"); rq.onsuccess = () => {
		const tx = rq.result.transaction("scans", "readwrite");
		tx.objectStore("scans").put({client_scan_id: "scn-old:000001", code: ` + strconv.Quote(codes[first]) + `,
			scanned_at: "2020-01-01T00:00:00Z", gate: "north", door: ` + strconv.Quote(hall.ID) + `, synced: 0});
		tx.oncomplete = () => ok(""); tx.onerror = () => fail(tx.error); }; })`
	if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[string](inject, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("queue an old scan: %v", err)
	}
	// Offline, an altered code (another seat) does not verify.
	altered := strings.Replace(codes[first], `"seat_id":"`, `"seat_id":"x`, 1)
	run(t, b, "type an altered code", chromedp.SetValue("#manual-code", altered), chromedp.Click("#manual button"))
	testenv.WaitFor(t, 10*time.Second, "invalid", func() bool { return dataset(t, b, "last") == ticketing.ResultInvalid })
	// Still offline, the page opens again from its service worker, with its list and queue.
	run(t, b, "reload offline", chromedp.Reload(), chromedp.WaitVisible("#camera-toggle"))
	testenv.WaitFor(t, 10*time.Second, "the kept list and queue", func() bool {
		return dataset(t, b, "list") == "2" && dataset(t, b, "pending") == "2" && dataset(t, b, "net") == "offline"
	})
	if sw := text0(t, b, `navigator.serviceWorker.controller ? navigator.serviceWorker.controller.scriptURL : ""`); !strings.HasSuffix(sw, "/dashboard/scanner/sw.js") {
		t.Errorf("the offline page's service worker: %q", sw)
	}
	t.Logf("screenshot: %s", b.Screenshot(t, "offline-reloaded"))
	run(t, b, "sign out with a scan unsent", chromedp.Click(".signout button"))
	testenv.WaitFor(t, 10*time.Second, "the refusal", func() bool { return strings.Contains(text(t, b, "#result"), "Send the scans first") })
	st := d.stats(t)
	if st.Admitted != 1 {
		t.Errorf("while the scanner is offline the server counts %d admitted, want 1", st.Admitted)
	}

	setOffline(t, b, false)
	testenv.WaitFor(t, 30*time.Second, "the queue sent", func() bool {
		return dataset(t, b, "pending") == "0" && dataset(t, b, "synced") == "1" && dataset(t, b, "refused") == "1"
	})
	if st := d.stats(t); st.Admitted != 2 || st.Gates["north"] != 2 {
		t.Errorf("after the sync the server counts %+v, want 2 admitted at north", st)
	}
	res, err := d.a.CheckIns.Scan(d.ctx, ticketing.Tenant{OrganizerID: d.org, Environment: ticketing.EnvTest},
		ticketing.Scan{Code: second, Gate: "api", KeyID: d.key.ID})
	if err != nil || res.Result != ticketing.ResultAlreadyAdmitted || res.CheckIn.Gate != "north" {
		t.Errorf("the offline ticket on the server: %+v %v", res, err)
	}
	checkPage(t, b, "synced")
	phoneWidth(t, b)
	run(t, b, "Russian", chromedp.Click(`a[lang="ru"]`), chromedp.WaitVisible(`html[lang="ru"]`))
	if got := text(t, b, "main"); !strings.Contains(got, "Включить камеру") {
		t.Errorf("the Russian page: %q", got)
	}
	checkPage(t, b, "scanner-ru")
}

func (d *scannerDoor) stats(t *testing.T) *ticketing.CheckInStats {
	t.Helper()
	st, err := d.a.CheckIns.Stats(d.ctx, ticketing.Tenant{OrganizerID: d.org, Environment: ticketing.EnvTest}, d.event.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// hallCatalog is a seated event: Chamber Hall, row A of four seats.
const hallCatalog = `{"events": [{"ref": "hall", "status": "published", "title": "Chamber Hall", "city": "Moscow",
  "venue": "Small Hall", "starts_at": "2030-04-01T19:00:00+03:00", "ends_at": "2030-04-01T22:00:00+03:00",
  "timezone": "Europe/Moscow", "tiers": [{"ref": "stalls", "name": "Stalls", "price": 300000, "zone": "stalls"}],
  "seating": {"width": 400, "height": 300, "zones": [{"ref": "stalls", "name": "Stalls", "type": "seated",
    "primary_tier": "stalls", "rows": [{"row": "A", "seats": 4, "x": 50, "y": 60, "dx": 20}]}]}}]}`

// seatedEvent imports Chamber Hall (beside Jazz Night) and returns it with its map.
func (d *scannerDoor) seatedEvent(t *testing.T) *ticketing.Event {
	t.Helper()
	c := d.client()
	d.harness.signIn(c, "door-owner@example.com", password)
	if p := d.upload(c, "/o/"+d.org+"/test/catalog", "hall.json", hallCatalog); p.status != http.StatusOK {
		t.Fatalf("catalog: %d", p.status)
	}
	page, err := d.a.Store.Catalog.ListEvents(d.ctx, ticketing.EventQuery{OrganizerID: d.org, Environment: ticketing.EnvTest, Limit: 5, Scope: ticketing.ScopeAll, Q: "Chamber"})
	if err != nil || len(page.Events) != 1 {
		t.Fatalf("Chamber Hall: %v %v", page, err)
	}
	e, err := d.a.Store.Catalog.GetEventWithSeating(d.ctx, d.org, page.Events[0].Event.ID, ticketing.EnvTest)
	if err != nil || e.Seating == nil {
		t.Fatalf("Chamber Hall's map: %v", err)
	}
	return e
}

// seatedOrder holds the event's first n seats and pays an order of them; it
// returns the order and each ticket's seat label.
func (d *scannerDoor) seatedOrder(t *testing.T, e *ticketing.Event, n int) (*ticketing.Order, map[string]string) {
	t.Helper()
	var ids []string
	for _, z := range e.Seating.Zones {
		for _, st := range z.Seats {
			if len(ids) < n {
				ids = append(ids, st.ID)
			}
		}
	}
	c := ticketing.Caller{Tenant: ticketing.Tenant{OrganizerID: d.org, Environment: ticketing.EnvTest}, KeyID: "key_dash"}
	hold, err := d.a.Sales.Holds.CreateHold(d.ctx, c, "", ticketing.HoldRequest{EventID: &e.ID, SeatIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	var rids []string
	for _, st := range hold.Seats {
		rids = append(rids, st.ReservationID)
	}
	email := "seated@example.com"
	res, err := d.a.Sales.Orders.CreateOrder(d.ctx, c, "seated-"+e.ID, ticketing.OrderRequest{Buyer: &ticketing.BuyerInput{Email: &email}, SeatReservationIDs: &rids})
	if err != nil {
		t.Fatal(err)
	}
	o, err := d.a.Sales.Orders.Simulate(d.ctx, c.Tenant, res.Order.ID, ticketing.OutcomePaid)
	if err != nil {
		t.Fatal(err)
	}
	seats := map[string]string{}
	for _, tk := range o.Tickets {
		if tk.Seat != nil {
			seats[tk.Number] = tk.Seat.Label
		}
	}
	if len(seats) != n {
		t.Fatalf("the order's seats: %+v", o.Tickets)
	}
	return o, seats
}
