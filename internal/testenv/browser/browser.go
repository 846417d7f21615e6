// Package browser gives tests a real headless Chromium (Debian's chromium
// package, which `make setup` installs) driven with chromedp: the API
// reference page's test uses it, and the dashboard's tests can. Like the
// emulators, a missing browser fails the test with what to do (never a skip).
package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// DefaultPath is where Debian's chromium package puts the browser;
// TIX_TEST_CHROMIUM names another.
const DefaultPath = "/usr/bin/chromium"

// Path is the Chromium the tests run: TIX_TEST_CHROMIUM, else DefaultPath.
// The test fails when it is not an executable file.
func Path(tb testing.TB) string {
	tb.Helper()
	p := os.Getenv("TIX_TEST_CHROMIUM")
	if p == "" {
		p = DefaultPath
	}
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		tb.Fatalf("no Chromium at %s: run `make setup` (it installs Debian's chromium with apt-get), "+
			"or set TIX_TEST_CHROMIUM to a Chromium or Chrome binary", p)
	}
	return p
}

// Browser is one fresh headless Chromium (its own profile directory) with
// one tab, stopped when the test ends. It records the page's failed requests
// and console errors.
type Browser struct {
	Ctx context.Context // the tab: pass it to chromedp.Run

	mu      sync.Mutex
	urls    map[network.RequestID]string
	failed  []Failure
	console []string
}

// Failure is a request of the page answered 4xx/5xx (Status) or not at all
// (Error; Blocked says why when the browser refused it, e.g. "csp").
type Failure struct {
	URL            string
	Status         int64
	Error, Blocked string
}

func (f Failure) String() string {
	if f.Status != 0 {
		return fmt.Sprintf("%s: %d", f.URL, f.Status)
	}
	return fmt.Sprintf("%s: %s %s", f.URL, f.Error, f.Blocked)
}

// flags are the launch flags that work as root in a container without a GPU
// (--no-sandbox), with no traffic of Chromium's own (updates, sync, QUIC).
func flags(tb testing.TB, path string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(tb.TempDir()),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1280, 900),
	}
}

// New starts Chromium for the test; everything it does must finish within
// timeout. extra adds launch flags (a fake camera, say) to the usual ones.
func New(tb testing.TB, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) *Browser {
	tb.Helper()
	path := Path(tb)
	ctx, cancelTimeout := context.WithTimeout(context.Background(), timeout)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(flags(tb, path), extra...)...)
	b := &Browser{urls: map[network.RequestID]string{}}
	tabCtx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithListener(b.record))
	tb.Cleanup(func() { cancelTab(); cancelAlloc(); cancelTimeout() })
	b.Ctx = tabCtx
	if err := chromedp.Do(tabCtx); err != nil { // starts the browser and its tab
		tb.Fatalf("start Chromium (%s): %v", path, err)
	}
	return b
}

func (b *Browser) record(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.urls[ev.RequestID] = ev.Request.URL
	case *network.EventResponseReceived:
		if ev.Response.Status >= 400 {
			b.failed = append(b.failed, Failure{URL: ev.Response.URL, Status: ev.Response.Status})
		}
	case *network.EventLoadingFailed:
		if !ev.Canceled {
			b.failed = append(b.failed, Failure{URL: b.urls[ev.RequestID], Error: ev.ErrorText, Blocked: string(ev.BlockedReason)})
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		b.console = append(b.console, msg)
	case *runtime.EventConsoleAPICalled:
		if string(ev.Type) == "error" {
			msg := "console.error:"
			for _, a := range ev.Args {
				msg += " " + string(a.Value) + a.Description
			}
			b.console = append(b.console, msg)
		}
	}
}

// Failed lists the page's requests answered 4xx/5xx or not at all.
func (b *Browser) Failed() []Failure {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Failure(nil), b.failed...)
}

// ConsoleErrors lists the page's uncaught exceptions and console.error calls.
func (b *Browser) ConsoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.console...)
}

// Screenshot saves the tab's viewport as build/screenshots/<test name>-<name>.png
// below the module root (gitignored; kept after the test for a person to look
// at) and returns its path.
func (b *Browser) Screenshot(tb testing.TB, name string) string {
	tb.Helper()
	png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.Fatalf("screenshot: %v", err)
	}
	dir := filepath.Join(moduleRoot(tb), "build", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	safe := regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(tb.Name()+"-"+name, "_")
	p := filepath.Join(dir, safe+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// moduleRoot is the nearest directory above the working directory (a test's
// package directory) holding go.mod.
func moduleRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Overflow is how many pixels the tab's page is wider than its viewport (0:
// nothing scrolls sideways, as a page on a phone should).
func (b *Browser) Overflow(tb testing.TB) int {
	tb.Helper()
	n, err := chromedp.Run(b.Ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`))
	if err != nil {
		tb.Fatalf("page width: %v", err)
	}
	return n
}
