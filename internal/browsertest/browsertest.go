// Package browsertest opens pages in a real headless Chromium for tests,
// through chromedp, and records what a page did: console messages,
// uncaught exceptions, log entries (such as CSP violations), JavaScript
// dialogs and every request URL.
//
// Chromium is looked up on PATH (chromium, chromium-browser,
// google-chrome). When it is missing the test is skipped with an
// installation hint, or failed when the environment variable CI is "true",
// as redistest does for redis-server. scripts/test.sh installs Debian's
// chromium.
package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/keyreg/keyreg/internal/testenv"
)

// Timeout bounds one browser session: a guard against a hung browser, not a
// way to wait for anything.
const Timeout = 60 * time.Second

// ExecPath returns the path of Chromium on PATH, skipping or failing the
// test when there is none.
func ExecPath(t testing.TB) string {
	t.Helper()
	return testenv.LookPath(t, "chromium not found on PATH; install it (apt-get install chromium)",
		"chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
}

// Browser is one headless Chromium with one tab.
type Browser struct {
	ctx context.Context

	mu   sync.Mutex
	rec  Record
	seen map[network.RequestID]bool
}

// Record is what the pages of a Browser did since the last Reset.
type Record struct {
	Console  []string // console API calls: type and text
	Errors   []string // uncaught exceptions, console errors, error and warning log entries
	Dialogs  []string // alert, confirm and prompt messages
	Requests []string // the URL of every request
}

// New starts Chromium for t (headless, no sandbox, as in a container run by
// root) and stops it when t ends.
func New(t testing.TB) *Browser {
	t.Helper()
	bin := ExecPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", "new"),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")),
		chromedp.WindowSize(1280, 900),
	)
	base, cancelTimeout := context.WithTimeout(context.Background(), Timeout)
	actx, cancelAlloc := chromedp.NewExecAllocator(base, opts...)
	b := &Browser{seen: map[network.RequestID]bool{}}
	ctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithListener(b.listen))
	b.ctx = ctx
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
		cancelTimeout()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium %s: %v", bin, err)
	}
	for _, err := range []error{
		call(ctx, network.Enable, network.EnableParams{}),
		call(ctx, log.Enable, cdp.Empty{}),
		call(ctx, runtime.Enable, cdp.Empty{}),
		call(ctx, page.Enable, page.EnableParams{}),
	} {
		if err != nil {
			t.Fatalf("chromium: enabling events: %v", err)
		}
	}
	return b
}

func call[P, R any](ctx context.Context, cmd cdp.Command[P, R], p P) error {
	_, err := chromedp.Call(ctx, cmd, p)
	return err
}

// listen records an event. It runs in the tab's message loop, so it only
// takes notes; the one command it needs (dismissing a dialog) runs on
// another goroutine.
func (b *Browser) listen(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		s := string(e.Type) + ":"
		for _, a := range e.Args {
			if a == nil {
				continue
			}
			if len(a.Value) > 0 {
				s += " " + string(a.Value)
			} else if a.Description != "" {
				s += " " + a.Description
			}
		}
		b.rec.Console = append(b.rec.Console, s)
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			b.rec.Errors = append(b.rec.Errors, "console "+s)
		}
	case *runtime.EventExceptionThrown:
		s := "exception: "
		if d := e.ExceptionDetails; d != nil {
			s += d.Text
			if d.Exception != nil {
				s += " " + d.Exception.Description
			}
		}
		b.rec.Errors = append(b.rec.Errors, s)
	case *log.EventEntryAdded:
		if en := e.Entry; en != nil && (en.Level == log.EntryLevelError || en.Level == log.EntryLevelWarning) {
			b.rec.Errors = append(b.rec.Errors, "log "+string(en.Source)+": "+en.Text+" "+en.URL)
		}
	case *page.EventJavascriptDialogOpening:
		b.rec.Dialogs = append(b.rec.Dialogs, string(e.Type)+": "+e.Message)
		go func() { _ = call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false}) }()
	case *network.EventRequestWillBeSent:
		if e.Request != nil && (!b.seen[e.RequestID] || e.RedirectResponse != nil) {
			b.seen[e.RequestID] = true
			b.rec.Requests = append(b.rec.Requests, e.Request.URL)
		}
	}
}

// Scripts turns JavaScript on or off for the pages loaded next.
func (b *Browser) Scripts(t testing.TB, on bool) {
	t.Helper()
	if err := call(b.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
}

// Do runs chromedp actions in the browser's tab.
func (b *Browser) Do(t testing.TB, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		t.Fatalf("chromium: %v", err)
	}
}

// Eval evaluates a JavaScript expression in the page and returns its value.
func Eval[T any](t testing.TB, b *Browser, expr string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("chromium: evaluating %s: %v", expr, err)
	}
	return v
}

// Open loads the file at path (made absolute) and waits for its load event.
// It returns how long the navigation took as seen from here, and the page's
// own figure from the Navigation Timing API (load event end, in ms since the
// navigation started).
func (b *Browser) Open(t testing.TB, path string) (took time.Duration, loadMS float64) {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	b.Do(t, chromedp.Navigate("file://"+abs))
	took = time.Since(start)
	loadMS = Eval[float64](t, b, `(function(){var n=performance.getEntriesByType("navigation")[0];return n?n.loadEventEnd:-1})()`)
	return took, loadMS
}

// Screenshot saves a PNG of the viewport (or of the whole page, when full)
// to path.
func (b *Browser) Screenshot(t testing.TB, path string, full bool) {
	t.Helper()
	act := chromedp.CaptureScreenshot()
	if full {
		act = chromedp.FullScreenshot(100)
	}
	png, err := chromedp.Run(b.ctx, act)
	if err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Record returns a copy of what the pages did so far. It first makes a
// round trip through the page, so the events of the actions run before it
// have arrived.
func (b *Browser) Record(t testing.TB) Record {
	t.Helper()
	Eval[int](t, b, `1`)
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.rec
	r.Console = append([]string(nil), r.Console...)
	r.Errors = append([]string(nil), r.Errors...)
	r.Dialogs = append([]string(nil), r.Dialogs...)
	r.Requests = append([]string(nil), r.Requests...)
	return r
}

// Reset forgets the record.
func (b *Browser) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rec = Record{}
	b.seen = map[network.RequestID]bool{}
}
