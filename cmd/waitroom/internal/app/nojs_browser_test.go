package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/internal/testkit/browsertest"
)

// TestNoJavaScriptInChromium: a visitor whose browser runs no script
// joins the demo's queue with the room page's form, waits on the status
// page that reloads itself, and ends at the shop once admitted. The
// demo's event has no challenge, so its page offers the form.
func TestNoJavaScriptInChromium(t *testing.T) {
	b := browsertest.Start(t)
	tab := b.NewTab(t, browsertest.WithPhone())
	if err := chromedp.Do(tab, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	})); err != nil {
		t.Fatalf("disabling scripts: %v", err)
	}
	d := startDemo(t, 0, 8*time.Second)

	browsertest.Navigate(t, tab, d.URL+"events/demo-concert?seats=2")
	// The page script would have retitled the tab and hidden nothing;
	// without it the <noscript> form is what the visitor sees.
	waitNoJS(t, tab, "the room page's no-script form", `!!document.querySelector("#wr-nojs-join button")`)
	if got := evalNoJS[string](t, tab, `document.title`); !strings.Contains(got, "Waiting room") {
		t.Fatalf("the title %q was changed: scripts ran", got)
	}
	if text := evalNoJS[string](t, tab, `document.body.innerText`); strings.Contains(text, "Joining the queue") {
		t.Fatalf("the page without scripts claims to be joining:\n%s", text)
	}
	browsertest.Screenshot(t, tab, "1-room-without-javascript")
	if err := chromedp.Do(tab, chromedp.Click("#wr-nojs-join button")); err != nil {
		t.Fatalf("pressing the join button: %v", err)
	}
	waitNoJS(t, tab, "the no-script status page",
		`location.pathname === "/_wr/nojs/status" && !!document.querySelector('meta[http-equiv="refresh"]')`)
	text := evalNoJS[string](t, tab, `document.body.innerText`)
	if !strings.Contains(text, "pre-queue") || !strings.Contains(text, "reloads by itself") {
		t.Fatalf("the status page says:\n%s", text)
	}
	if q := evalNoJS[string](t, tab, `location.search`); !strings.Contains(q, "return=%2Fevents%2Fdemo-concert%3Fseats%3D2") {
		t.Fatalf("the status page lost the return path: %s", q)
	}
	browsertest.Screenshot(t, tab, "2-status-without-javascript")
	// The page reloads itself through the draw to admission, and the
	// redirect takes the visitor back where they were going.
	waitNoJSFor(t, tab, 60*time.Second, "the shop after admission",
		`location.pathname === "/events/demo-concert" && location.search === "?seats=2" && document.title.includes("Choose your tickets")`)
	browsertest.Screenshot(t, tab, "3-shop-without-javascript")
}

// evalNoJS evaluates expr in the tab (DevTools evaluation runs where page
// scripts do not); it fails the test on an error.
func evalNoJS[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, browsertest.DefaultTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// waitNoJS is browsertest.WaitFor for a page whose scripts are off:
// chromedp's polling runs in the page, so the condition is evaluated
// from here, every 100 ms, across navigations.
func waitNoJS(t *testing.T, tab context.Context, what, cond string) {
	t.Helper()
	waitNoJSFor(t, tab, browsertest.DefaultTimeout, what, cond)
}

func waitNoJSFor(t *testing.T, tab context.Context, timeout time.Duration, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(tab, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		cancel()
		if err == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(tab, 5*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	t.Logf("page %s shows:\n%s", loc, text)
	browsertest.Screenshot(t, tab, "timeout-"+what)
	t.Fatalf("waiting for %s (%s): timed out", what, cond)
}
