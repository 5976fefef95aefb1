package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/browsertest"
)

// thresholdConfig is `waitroom serve` in front of one origin with a
// threshold-mode event open from the start: a short tranche and tick so
// that the test runs in seconds, a p95 target the slow origin misses.
const thresholdConfig = `
log: {level: warn}
serve:
  listen: 127.0.0.1:0
  keys:
    signing: {secret: %[1]s}
  cookies: {secure: never}
  rate_limits:                 # one address: the tabs, the load and the test's own polls
    per_ip: {rate: 1000, burst: 1000}
    per_prefix: {rate: 1000, burst: 1000}
admin:
  listen: ""
admission:
  data_dir: %[2]s
origins:
  - name: shop
    addresses: [%[3]s]
    health_check: {path: ""}
routes:
  - prefix: /shop/
    event: shop
events:
  - id: shop
    mode: threshold
    landing_path: /shop/
    tranche: 1s
    controller:
      tick: 500ms
      target_p95: 300ms
      initial_active: 4
      min_active: 3
      increase: 1
`

// slowOrigin is a site whose every answer waits delay; /…/done answers
// X-Waitroom-Complete (the visitor is done).
type slowOrigin struct {
	delay atomic.Int64 // ns
	srv   *httptest.Server
}

func startSlowOrigin(t *testing.T) *slowOrigin {
	o := &slowOrigin{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(o.delay.Load()))
		if strings.HasSuffix(r.URL.Path, "/done") {
			w.Header().Set("X-Waitroom-Complete", "1")
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Origin shop</title><h1 id="origin">origin:%s</h1>`, r.URL.Path)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// TestThresholdInChromium: on an idle origin the browser goes straight
// through to the origin; the origin slows down, the controller cuts the
// limit, and new visitors see the waiting room; the origin recovers, the
// queue drains in order, and the room passes visitors straight through
// again.
func TestThresholdInChromium(t *testing.T) {
	b := browsertest.Start(t)
	origin := startSlowOrigin(t)
	w, _, stopServe := runServe(t, fmt.Sprintf(thresholdConfig, randomHex(32), t.TempDir(), strings.TrimPrefix(origin.srv.URL, "http://")))
	t.Cleanup(stopServe)
	base := "http://" + w.Addr().String()
	atOrigin := func(path string) string {
		return `location.pathname === "` + path + `" && document.title === "Origin shop"`
	}
	inRoom := `!!document.getElementById("wr-headline")`
	waitEngine := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if cond() {
				return
			}
		}
		t.Fatalf("waiting for %s: figures %+v", what, w.Engine.Figures("shop"))
	}

	// 1. An idle origin: straight through, no waiting-room page at all.
	waitEngine("the first tick", func() bool { return w.Engine.Figures("shop").Slots > 0 })
	a := b.NewTab(t, browsertest.AsDesktopChrome())
	browsertest.Navigate(t, a, base+"/shop/a")
	browsertest.WaitFor(t, a, "the origin, straight through", atOrigin("/shop/a"))
	browsertest.Screenshot(t, a, "1-straight-through")

	// 2. The origin slows down under visitors let straight in: the
	// controller cuts the limit below what is in use and the room queues.
	origin.delay.Store(int64(800 * time.Millisecond))
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
			get := func(path string) {
				req, _ := http.NewRequest("GET", base+path, nil)
				req.Header.Set("User-Agent", fmt.Sprintf("Mozilla/5.0 (load %d)", i))
				if resp, err := c.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
			for !stop.Load() {
				get("/shop/load")
				// As a visitor would: one address shares the API's rate
				// limit with the browser tabs.
				time.Sleep(250 * time.Millisecond)
			}
			get("/shop/done") // done: out of the active count at once
		}()
	}
	t.Cleanup(func() { stop.Store(true); wg.Wait() })
	waitEngine("the limit cut, and the room full", func() bool {
		f := w.Engine.Figures("shop")
		return f.Last.LatencyP95 > 300*time.Millisecond && f.Slots == 0 && f.Limit < 4 && f.Limit <= f.Last.Active
	})
	bTab := b.NewTab(t, browsertest.AsDesktopChrome())
	browsertest.Navigate(t, bTab, base+"/shop/b")
	browsertest.WaitFor(t, bTab, "the waiting room under load", inRoom)
	browsertest.WaitFor(t, bTab, "a place in the queue", `document.getElementById("wr-position").textContent.trim() !== ""`)
	browsertest.Screenshot(t, bTab, "2-queued")
	cTab := b.NewTab(t, browsertest.AsDesktopChrome())
	browsertest.Navigate(t, cTab, base+"/shop/c")
	browsertest.WaitFor(t, cTab, "the waiting room for the next one", inRoom)
	browsertest.WaitFor(t, cTab, "a place behind the first", `document.getElementById("wr-position").textContent.trim() !== ""`)
	if f := w.Engine.Figures("shop"); !f.Queueing || f.Lanes["public"].Waiting < 2 {
		t.Fatalf("two visitors queued, figures %+v", f)
	}

	// 3. The origin recovers and the load leaves: the queue drains in
	// its order, then visitors pass straight through again. The order is
	// checked on what the engine tells each tab (c asked first: once c is
	// admitted, b, ahead of it, must be when asked after), and the tabs
	// move on to the origin by themselves.
	origin.delay.Store(0)
	stop.Store(true)
	wg.Wait()
	// A tab admitted by its own poll navigates to the origin, and may do
	// so while the test asks it: that answer is unknown ("") and asked
	// again (from the origin's page, the same host, the status still
	// answers).
	status := func(tab context.Context) string {
		s, err := browsertest.TryEval[string](tab, `(() => { const x = new XMLHttpRequest();
			x.open("GET", "/_wr/api/status?event=shop", false); x.send();
			return x.status === 200 ? JSON.parse(x.responseText).status : "http " + x.status })()`)
		if err != nil {
			t.Logf("asking a tab its status: %v (asked again)", err)
			return ""
		}
		return s
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		c, b := status(cTab), status(bTab)
		if c == "admitted" && b != "admitted" && b != "" {
			t.Fatalf("the second in line was admitted while the first was %q", b)
		}
		if b == "admitted" && c == "admitted" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue did not drain: b %q, c %q, figures %+v", b, c, w.Engine.Figures("shop"))
		}
	}
	browsertest.WaitFor(t, bTab, "the first in line at the origin", atOrigin("/shop/b"))
	browsertest.WaitFor(t, cTab, "the second in line at the origin", atOrigin("/shop/c"))
	browsertest.Screenshot(t, cTab, "3-admitted")
	// The three visitors finish (the origin says so): their places in
	// the limit are free at once, without waiting for them to go idle.
	for _, tab := range []context.Context{a, bTab, cTab} {
		browsertest.Navigate(t, tab, base+"/shop/done")
	}
	waitEngine("pass-through again", func() bool {
		f := w.Engine.Figures("shop")
		return !f.Queueing && f.Slots > 0
	})
	d := b.NewTab(t, browsertest.AsDesktopChrome())
	browsertest.Navigate(t, d, base+"/shop/d")
	browsertest.WaitFor(t, d, "the origin, straight through after the drain", atOrigin("/shop/d"))
	browsertest.Screenshot(t, d, "4-straight-through-again")
}
