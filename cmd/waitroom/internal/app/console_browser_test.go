package app

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/internal/testkit/browsertest"
)

// consoleConfig is thresholdConfig with the admin listener on and its
// event in the default mode (always), whose max_new_per_minute (30)
// holds admissions well below what the load would take.
func consoleConfig(t *testing.T, origin, token string) string {
	text := strings.NewReplacer(
		"admin:\n  listen: \"\"\n", "admin:\n  listen: 127.0.0.1:0\n  token: "+token+"\n",
		"    mode: threshold\n", "    caps: {max_active: 500, max_new_per_minute: 30}\n",
		"initial_active: 4", "initial_active: 200",
	).Replace(fmt.Sprintf(thresholdConfig, randomHex(32), t.TempDir(), origin))
	for _, want := range []string{"token: ", "max_new_per_minute: 30", "initial_active: 200"} {
		if !strings.Contains(text, want) {
			t.Fatalf("thresholdConfig changed shape; consoleConfig has no %q", want)
		}
	}
	return text
}

// consoleLoad is visitors joining the room, polling their status and,
// once admitted, making a few requests at the origin, until stopped.
type consoleLoad struct {
	base     string
	stop     atomic.Bool
	wg       sync.WaitGroup
	admitted atomic.Int64
}

func (l *consoleLoad) run(workers int) {
	for i := range workers {
		l.wg.Go(func() {
			for n := 0; !l.stop.Load(); n++ {
				l.visit(fmt.Sprintf("Mozilla/5.0 (console load %d.%d)", i, n))
			}
		})
	}
}

func (l *consoleLoad) visit(ua string) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	call := func(method, path string, body []byte) string {
		req, _ := http.NewRequest(method, l.base+path, bytes.NewReader(body))
		req.Header.Set("User-Agent", ua)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.Do(req)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var st struct {
			Status string `json:"status"`
		}
		_ = json.Unmarshal(b, &st)
		return st.Status
	}
	st := call("POST", "/_wr/api/join", []byte(`{"event":"shop","return":"/shop/"}`))
	for st != "admitted" && !l.stop.Load() {
		if st == "" || st == "sold_out" || st == "closed" {
			return
		}
		time.Sleep(300 * time.Millisecond)
		st = call("GET", "/_wr/api/status?event=shop", nil)
	}
	if st != "admitted" {
		return
	}
	l.admitted.Add(1)
	for p := range 3 {
		call("GET", fmt.Sprintf("/shop/page%d", p), nil)
		time.Sleep(100 * time.Millisecond)
	}
	call("GET", "/shop/done", nil) // done: out of the active count
}

// artifactDir is where the test's screenshots go: t.ArtifactDir() when
// `go test -artifacts` keeps it, else browsertest's artifacts directory.
func artifactDir(t *testing.T) string {
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		return t.ArtifactDir()
	}
	return filepath.Join(browsertest.ArtifactsDir(), strings.ReplaceAll(t.Name(), "/", "_"))
}

// figure reads one of an event section's live figures on the dashboard.
func figure(event, key string) string {
	return `document.querySelector('section[data-event="` + event + `"] [data-f="` + key + `"]').textContent`
}

// TestConsoleInChromium: an operator signs in to the console through its
// form, sees the figures move while visitors join and are admitted,
// raises max_new_per_minute with the form and watches admitted/min
// follow, pauses admission and posts a notice that a waiting visitor's
// page then shows; axe-core finds no accessibility violations in the login page
// and the dashboard, at 1280 px and at a tablet's 820 px, where nothing
// overflows sideways.
func TestConsoleInChromium(t *testing.T) {
	b := browsertest.Start(t)
	origin := startSlowOrigin(t)
	token := randomHex(16)
	w, _, stopServe := runServe(t, consoleConfig(t, strings.TrimPrefix(origin.srv.URL, "http://"), token))
	t.Cleanup(stopServe)
	admin := "http://" + w.AdminAddr().String()
	shots := artifactDir(t)
	t.Logf("screenshots go to %s", shots)

	load := &consoleLoad{base: "http://" + w.Addr().String()}
	load.run(12)
	t.Cleanup(func() { load.stop.Store(true); load.wg.Wait() })

	tab := b.NewTab(t, browsertest.WithViewport(1280, 900))
	browsertest.Navigate(t, tab, admin+"/admin/")
	browsertest.WaitFor(t, tab, "the login form", `!!document.getElementById("token")`)
	axeClean(t, tab, "login page")
	signIn(t, tab, "not-the-admin-token")
	browsertest.WaitFor(t, tab, "the wrong token refused", `(document.getElementById("login-message") || {}).textContent === "That is not the admin token."`)
	signIn(t, tab, token)
	browsertest.WaitFor(t, tab, "the dashboard", `!!document.querySelector('section[data-event="shop"]')`)

	// The figures move: people queue, arrive and are admitted, the origin
	// is measured, the chart has points.
	num := func(key string) float64 {
		s := browsertest.Eval[string](t, tab, figure("shop", key))
		f, _ := strconv.ParseFloat(strings.Fields(s + " 0")[0], 64)
		return f
	}
	browsertest.WaitFor(t, tab, "live figures", `document.getElementById("live").textContent.startsWith("Live")`)
	moving := `(() => { const f = k => parseFloat(document.querySelector('section[data-event="shop"] [data-f="' + k + '"]').textContent) || 0;
		return f("queue") > 0 && f("arrivals_per_min") > 0 && f("admitted_per_min") > 0 && f("latency_p50_ms") > 0 &&
			document.querySelectorAll('section[data-event="shop"] svg[data-chart="queue"] polyline').length === 1 })()`
	waitLong(t, tab, "the figures moving under load", moving)
	// The cap binds: the controller says so, and admissions stay within it.
	waitLong(t, tab, "the controller paced by max_new_per_minute", figure("shop", "why")+`.includes("paced by the max_new_per_minute cap")`)
	before := map[string]float64{}
	for _, k := range []string{"queue", "arrivals_per_min", "admitted_per_min", "active", "target", "latency_p50_ms", "latency_p99_ms"} {
		before[k] = num(k)
	}
	t.Logf("under load, before the change: %v (the load saw %d admissions)", before, load.admitted.Load())
	if before["admitted_per_min"] > 30+5 {
		t.Fatalf("admitted %v/min with max_new_per_minute 30", before["admitted_per_min"])
	}
	browsertest.ScreenshotIn(t, tab, shots, "console-1280-under-load")

	// Pause admission, so that a visitor stays in the room, and post a
	// notice with the form: the visitor's page shows it.
	click := func(sel, flash string) {
		t.Helper()
		if err := chromedp.Do(tab, chromedp.Click(chromedp.CSS(sel))); err != nil {
			t.Fatal(err)
		}
		browsertest.WaitFor(t, tab, flash, `(document.getElementById("flash") || {}).textContent === "`+flash+`"`)
	}
	click(`form[data-toggle="pause"] button`, "Admission paused.")
	browsertest.WaitFor(t, tab, "the paused state shown", figure("shop", "state")+` === "paused"`)
	visitor := b.NewTab(t, browsertest.AsDesktopChrome())
	browsertest.Navigate(t, visitor, load.base+"/shop/notice")
	browsertest.WaitFor(t, visitor, "the waiting room", `!!document.getElementById("wr-headline")`)
	const notice = "Doors open at 8 pm. Bring your ID."
	if err := chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS(`#notice-shop`), notice)); err != nil {
		t.Fatal(err)
	}
	click(`form.notice button[type="submit"]`, "Notice posted.")
	browsertest.WaitFor(t, visitor, "the notice on the visitor's page",
		`(e => !!e && !e.hidden && e.textContent === "`+notice+`")(document.getElementById("wr-notice"))`)
	browsertest.ScreenshotIn(t, visitor, shots, "visitor-with-notice")
	click(`form[data-toggle="pause"] button`, "Admission resumed.")

	// Raise the pace with the caps form, as an operator would: keys into
	// the field, then the button.
	browsertest.Eval[bool](t, tab, `(document.getElementById("mn-shop").value = "", true)`)
	if err := chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS(`#mn-shop`), "600"),
		chromedp.Click(chromedp.CSS(`form.caps button[type="submit"]`))); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, tab, "the caps change confirmed", `(document.getElementById("flash") || {}).textContent === "Caps set; they apply from the next tick."`)
	if got := browsertest.Eval[string](t, tab, `document.getElementById("mn-shop").value`); got != "600" {
		t.Fatalf("the form shows max_new_per_minute %s after the change", got)
	}
	waitLong(t, tab, "admitted/min to follow the raised cap", `parseFloat(`+figure("shop", "admitted_per_min")+`) > 45`)
	after := num("admitted_per_min")
	t.Logf("admitted/min: %v with the cap at 30, %v after raising it to 600; the controller: %q", before["admitted_per_min"], after,
		browsertest.Eval[string](t, tab, figure("shop", "why")))
	axeClean(t, tab, "dashboard at 1280 px")
	browsertest.ScreenshotIn(t, tab, shots, "console-1280-after-caps")

	// A tablet: one column where two do not fit, nothing wider than the
	// screen, the same checks.
	tablet := b.NewTab(t, browsertest.WithViewport(820, 1180))
	browsertest.Navigate(t, tablet, admin+"/admin/")
	signIn(t, tablet, token)
	browsertest.WaitFor(t, tablet, "the dashboard on a tablet", `document.getElementById("live").textContent.startsWith("Live")`)
	if wide := browsertest.Eval[int](t, tablet, `document.documentElement.scrollWidth`); wide > 820 {
		t.Fatalf("the dashboard is %d px wide on an 820 px tablet", wide)
	}
	axeClean(t, tablet, "dashboard at 820 px")
	// The keyboard alone reaches every control, in the page's order.
	var order []string
	for range 24 {
		if err := chromedp.Do(tablet, chromedp.KeyEvent("\t")); err != nil {
			t.Fatal(err)
		}
		order = append(order, browsertest.Eval[string](t, tablet,
			`(e => e.id || e.textContent.trim())(document.activeElement)`))
	}
	at := 0
	for _, want := range []string{"Sign out", "Pause admission", "Mark sold out", "ma-shop", "mn-shop", "Set caps",
		"Configured caps", "mode-shop", "Switch mode", "Configured mode", "notice-shop", "Post notice"} {
		i := slices.Index(order[at:], want)
		if i < 0 {
			t.Fatalf("Tab does not reach %q after %v: the order is %q", want, order[:at], order)
		}
		at += i + 1
	}
	browsertest.ScreenshotIn(t, tablet, shots, "console-820-tablet")
}

// signIn types the token into the login form and submits it with the
// keyboard.
func signIn(t *testing.T, tab context.Context, token string) {
	t.Helper()
	if err := chromedp.Do(tab, chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), token+"\r")); err != nil {
		t.Fatal(err)
	}
}

// axeClean fails the test on any accessibility violation axe-core finds
// in the tab's page.
func axeClean(t *testing.T, tab context.Context, what string) {
	t.Helper()
	v := browsertest.Axe(t, tab)
	for _, x := range v {
		t.Errorf("%s: %s", what, x)
	}
	t.Logf("axe-core %s on the %s: %d violations", browsertest.AxeVersion, what, len(v))
}

// waitLong is WaitFor for what takes a sampling interval or a minute's
// figures to show: it waits for several of WaitFor's rounds.
func waitLong(t *testing.T, tab context.Context, what, cond string) {
	t.Helper()
	for range 5 {
		if ok, _ := browsertest.TryEval[bool](tab, cond); ok {
			return
		}
		ctx, cancel := context.WithTimeout(tab, browsertest.DefaultTimeout)
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(200*time.Millisecond)))
		cancel()
		if err == nil {
			return
		}
	}
	browsertest.WaitFor(t, tab, what, cond)
}
