package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/bench/internal/cleanup"
	"github.com/waitroom/waitroom/bench/internal/procstat"
	"github.com/waitroom/waitroom/internal/testkit/browsertest"
)

// xvfb is a virtual X display for the fan's headful Chromium.
type xvfb struct {
	cmd     *exec.Cmd
	display string
}

// startXvfb starts Xvfb on a free display, or returns nil and why not.
func startXvfb() (*xvfb, string) {
	path, err := exec.LookPath("Xvfb")
	if err != nil {
		return nil, "Xvfb is not installed (Debian's xvfb; `make deps` installs it)"
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err.Error()
	}
	cmd := exec.Command(path, "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err.Error()
	}
	w.Close()
	x := &xvfb{cmd: cmd}
	cleanup.AtExit(x.stop)
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case d := <-line:
		if d == "" {
			x.stop()
			return nil, "Xvfb did not start"
		}
		x.display = ":" + d
		return x, ""
	case <-time.After(10 * time.Second):
		x.stop()
		return nil, "Xvfb did not give a display within 10s"
	}
}

func (x *xvfb) stop() {
	if x == nil || x.cmd == nil || x.cmd.Process == nil {
		return
	}
	syscall.Kill(-x.cmd.Process.Pid, syscall.SIGTERM)
	x.cmd.Wait()
	x.cmd = nil
}

// browserConf is how one Chromium is started.
type browserConf struct {
	headless  bool   // browsertest's headless switches; else a normal window
	display   string // X display of a headful browser
	userAgent string // --user-agent, or the browser's own
	// person: started as a person's Chrome is, without the switch that
	// tells pages a program drives it (browsertest.AsPerson): its
	// navigator.webdriver is false. Only the fan's browser; the bots keep
	// what a driven Chromium says.
	person bool
	proxy  string // host:port of the CONNECT proxy requests go through
	bypass string // host:port that skips the proxy (the CAPTCHA stub: a third party)
	spki   string // the certificate Chromium trusts (and only it)
}

// browser is one running Chromium.
type browser struct {
	ctx    context.Context
	cancel func()
	dir    string
	pid    int
}

func startBrowser(c browserConf) (*browser, error) {
	dir, err := os.MkdirTemp("", "bench-bots-chromium-")
	if err != nil {
		return nil, err
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(browsertest.ExecPath), chromedp.UserDataDir(dir)}
	flags := browsertest.Flags
	if !c.headless {
		// A person's browser: a window, the GPU process as Chromium
		// chooses; background networking off as for the headless ones
		// (nothing to reach offline, and no noise in the CPU figures).
		flags = []string{"--no-sandbox", "--disable-background-networking", "--disable-component-update",
			"--disable-sync", "--no-first-run", "--no-default-browser-check", "--password-store=basic",
			"--window-size=1280,800"}
		opts = append(opts, chromedp.Env("DISPLAY="+c.display))
	}
	if c.person {
		flags = append(slices.Clone(flags), browsertest.AsPerson...)
	}
	for _, f := range flags {
		k, v, ok := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if ok {
			opts = append(opts, chromedp.Flag(k, v))
		} else {
			opts = append(opts, chromedp.Flag(k, true))
		}
	}
	if c.userAgent != "" {
		opts = append(opts, chromedp.Flag("user-agent", c.userAgent))
	}
	if c.proxy != "" {
		opts = append(opts, chromedp.Flag("proxy-server", "http://"+c.proxy),
			chromedp.Flag("proxy-bypass-list", "<-loopback>;"+c.bypass))
	}
	opts = append(opts, chromedp.Flag("ignore-certificate-errors-spki-list", c.spki))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	b := &browser{ctx: ctx, dir: dir}
	b.cancel = func() {
		cancel()
		cancelAlloc()
		browsertest.KillLeftovers(dir)
		os.RemoveAll(dir)
	}
	cleanup.AtExit(b.close)
	sctx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- chromedp.Do(ctx) }()
	select {
	case err := <-errc:
		if err != nil {
			b.close()
			return nil, fmt.Errorf("starting %s: %w", browsertest.ExecPath, err)
		}
	case <-sctx.Done():
		b.close()
		return nil, fmt.Errorf("%s did not start within 30s", browsertest.ExecPath)
	}
	if p := chromedp.FromContext(ctx).Browser.Process(); p != nil {
		b.pid = p.Pid
	}
	return b, nil
}

func (b *browser) close() {
	if b.cancel != nil {
		b.cancel()
		b.cancel = nil
	}
}

// cpu is the CPU time the browser's processes have used so far.
func (b *browser) cpu() time.Duration { return procstat.TreeCPU(b.pid) }

// tab is a tab in a fresh browser context (its own cookies and cache, as
// a private window) that sees the answers of the waiting room's API.
type tab struct {
	ctx    context.Context
	cancel func()
	mu     sync.Mutex
	urls   map[network.RequestID]apiSeen
	done   chan apiSeen
}

// apiSeen is an answer of the API the page received.
type apiSeen struct {
	id     network.RequestID
	url    string
	status int
}

func (b *browser) newTab(apiPrefix string) (*tab, error) {
	t := &tab{urls: map[network.RequestID]apiSeen{}, done: make(chan apiSeen, 64)}
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext(), chromedp.WithListener(func(ev any) {
		switch ev := ev.(type) {
		case *network.EventResponseReceived:
			if strings.Contains(ev.Response.URL, apiPrefix) {
				t.mu.Lock()
				t.urls[ev.RequestID] = apiSeen{id: ev.RequestID, url: ev.Response.URL, status: int(ev.Response.Status)}
				t.mu.Unlock()
			}
		case *network.EventLoadingFinished:
			t.mu.Lock()
			s, ok := t.urls[ev.RequestID]
			t.mu.Unlock()
			if ok {
				select {
				case t.done <- s:
				default:
				}
			}
		}
	}))
	t.ctx, t.cancel = ctx, cancel
	// The first action opens the tab, for the lifetime of the context it
	// runs on: ctx itself, not one with a timeout.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		return nil, err
	}
	return t, nil
}

func (t *tab) close() { t.cancel() }

// body fetches the body of an answer the tab received.
func (t *tab) body(s apiSeen) string {
	ctx, cancel := context.WithTimeout(t.ctx, 10*time.Second)
	defer cancel()
	r, err := chromedp.Call(ctx, network.GetResponseBody, network.GetResponseBodyParams{RequestID: s.id})
	if err != nil {
		return ""
	}
	return string(r.Body)
}

func (t *tab) navigate(url string) error {
	ctx, cancel := context.WithTimeout(t.ctx, 30*time.Second)
	defer cancel()
	return chromedp.Do(ctx, chromedp.Navigate(url))
}

// fetchJS is what room.js's request() does, as an expression taking the
// method, the URL and the JSON body (or null): the same fetch options, so
// the same headers.
const fetchJS = `(function (method, url, body, referrer) {
	var init = {method: method, headers: {Accept: "application/json"}, credentials: "same-origin", cache: "no-store"};
	if (referrer) init.referrer = referrer;
	if (body) { init.headers["Content-Type"] = "application/json"; init.body = body; }
	return fetch(url, init).then(function (r) {
		return r.text().then(function (t) { return {status: r.status, body: t}; });
	}, function (e) { return {status: 0, body: String(e)}; });
})`

// fetch runs a request from the page, as its own script would.
func (t *tab) fetch(method, path string, body []byte) (int, []byte, error) {
	return t.fetchFrom("", method, path, body)
}

// fetchFrom is fetch with the Referer of a page of the same origin
// (referrer), as if that page sent it.
func (t *tab) fetchFrom(referrer, method, path string, body []byte) (int, []byte, error) {
	var b any
	if body != nil {
		b = string(body)
	}
	args, _ := json.Marshal([]any{method, path, b, referrer})
	ctx, cancel := context.WithTimeout(t.ctx, 30*time.Second)
	defer cancel()
	r, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}](fetchJS+".apply(null, "+string(args)+")", chromedp.EvalAwaitPromise))
	if err != nil {
		return 0, nil, err
	}
	if r.Status == 0 {
		return 0, nil, fmt.Errorf("fetch: %s", r.Body)
	}
	return r.Status, []byte(r.Body), nil
}

func (t *tab) clearCookies() error {
	ctx, cancel := context.WithTimeout(t.ctx, 10*time.Second)
	defer cancel()
	_, err := chromedp.Call(ctx, network.ClearBrowserCookies, cdp.Empty{})
	return err
}

func (t *tab) eval(expr string) (string, error) {
	ctx, cancel := context.WithTimeout(t.ctx, 10*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[string](expr))
}

// clientReport is what the page's client.js would send in the join's
// "client" object now (JSON), or "" when the page has none.
func (t *tab) clientReport() string {
	v, err := t.eval(`typeof waitroomClient === "function" ? JSON.stringify(waitroomClient()) : ""`)
	if err != nil {
		return ""
	}
	return v
}

// loadScript adds a script element for src to the page, as room.js
// loads the solver, and waits for it.
func (t *tab) loadScript(src string) error {
	args, _ := json.Marshal(src)
	ctx, cancel := context.WithTimeout(t.ctx, 30*time.Second)
	defer cancel()
	r, err := chromedp.Run(ctx, chromedp.Evaluate[string](`new Promise(function (resolve) {
		var el = document.createElement("script");
		el.src = `+string(args)+`;
		el.onload = function () { resolve(""); };
		el.onerror = function () { resolve("loading the script failed"); };
		document.head.appendChild(el);
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	if r != "" {
		return fmt.Errorf("%s: %s", src, r)
	}
	return nil
}

// solveJS runs the page's own solver (pow.js, the WASM engines in its
// workers) on a challenge made up by the bench, and resolves to the
// hashes done and the engine.
const solveJS = `(function (c) {
	return new Promise(function (resolve) {
		var h = 0, engine = "";
		waitroomSolve(c, function (f, info) {
			if (info && info.hashes > 0) h = info.hashes;
			if (info && info.engine) engine = info.engine;
		}).then(function () { resolve({hashes: h, engine: engine, err: ""}); },
			function (e) { resolve({hashes: h, engine: engine, err: String(e)}); });
	});
})`

// solve runs the page's solver on a challenge of its own and returns the
// hashes it did and its engine.
func (t *tab) solve(challenge map[string]any, timeout time.Duration) (float64, string, error) {
	args, _ := json.Marshal(challenge)
	ctx, cancel := context.WithTimeout(t.ctx, timeout)
	defer cancel()
	r, err := chromedp.Run(ctx, chromedp.Evaluate[struct {
		Hashes float64 `json:"hashes"`
		Engine string  `json:"engine"`
		Err    string  `json:"err"`
	}](solveJS+"("+string(args)+")", chromedp.EvalAwaitPromise))
	if err != nil {
		return 0, "", err
	}
	if r.Err != "" {
		return r.Hashes, r.Engine, fmt.Errorf("%s", r.Err)
	}
	return r.Hashes, r.Engine, nil
}
