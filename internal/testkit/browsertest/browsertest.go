package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// ExecPath is the browser the tests drive: Debian's chromium.
const ExecPath = "/usr/bin/chromium"

// Flags are the command-line switches Chromium starts with, besides
// --user-data-dir.
var Flags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--no-first-run",
}

// DefaultTimeout bounds WaitFor and each action of the helpers. It is a
// guard against a hung test, not a performance requirement: on a loaded
// CI machine a page can take seconds.
const DefaultTimeout = 20 * time.Second

// ArtifactsEnv names the environment variable with the directory that
// Screenshot writes to; os.TempDir()/waitroom-artifacts when unset.
const ArtifactsEnv = "WAITROOM_TEST_ARTIFACTS"

// Browser is one Chromium process for one test (and its subtests). It is
// safe for concurrent use: tabs from NewTab can run in parallel, each in
// its own goroutine.
type Browser struct {
	ctx     context.Context // the browser's chromedp context
	dataDir string
}

// Check returns an error telling how to get Chromium when ExecPath is
// missing.
func Check() error { return check(ExecPath) }

func check(path string) error {
	st, err := os.Stat(path)
	if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("browsertest: %s not found: run `make deps` (installs Debian's chromium)", path)
	}
	return nil
}

// AsPerson are Start's extra flags for a browser that stands for a
// person's: navigator.webdriver false, as in a Chrome nobody drives (a
// browser driven over the DevTools protocol says true, and no tab-level
// override turns that off). With AsDesktopChrome tabs, what the page's
// scripts see is a person's desktop Chrome.
var AsPerson = []string{"--disable-blink-features=AutomationControlled"}

// Start launches Chromium headless, with Flags and extra, and stops it
// when the test ends. A missing chromium fails the test.
func Start(t testing.TB, extra ...string) *Browser {
	t.Helper()
	if err := Check(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(ExecPath), chromedp.UserDataDir(dir)}
	for _, f := range Flags {
		opts = append(opts, chromedp.Flag(strings.TrimPrefix(f, "--"), true))
	}
	for _, f := range extra {
		name, value, ok := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if !ok {
			opts = append(opts, chromedp.Flag(name, true))
		} else {
			opts = append(opts, chromedp.Flag(name, value))
		}
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	var mu sync.Mutex
	done := false
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			t.Logf("chromium: "+format, args...)
		}
	}
	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithErrorf(logf))
	b := &Browser{ctx: ctx, dataDir: dir}
	// Registered after t.TempDir, so it runs before the directory is
	// removed: Chromium's helpers must be gone by then.
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		mu.Lock()
		done = true
		mu.Unlock()
		KillLeftovers(dir)
	})
	startCtx, stop := context.WithTimeout(ctx, DefaultTimeout)
	defer stop()
	// The first action starts the browser; its lifetime is ctx's, not
	// startCtx's (see chromedp's docs on a first Run with a timeout), so
	// run it on ctx and bound the wait separately.
	errc := make(chan error, 1)
	go func() { errc <- chromedp.Do(ctx) }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("browsertest: starting %s: %v", ExecPath, err)
		}
	case <-startCtx.Done():
		t.Fatalf("browsertest: %s did not start within %s", ExecPath, DefaultTimeout)
	}
	return b
}

// KillLeftovers kills the processes that still run with the browser
// user data directory dir (helpers can outlive the main process) and
// waits a little for them to go, so that the directory can be removed.
// Only processes of the browser started with dir name it.
func KillLeftovers(dir string) {
	want := []byte("--user-data-dir=" + dir)
	deadline := time.Now().Add(3 * time.Second)
	for quiet := 0; quiet < 3 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		found := 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil || !containsArg(cmd, want) {
				continue
			}
			found++
			syscall.Kill(pid, syscall.SIGKILL)
		}
		if found == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
}

// containsArg reports whether a NUL-separated command line has arg.
func containsArg(cmdline, arg []byte) bool {
	for _, a := range strings.Split(string(cmdline), "\x00") {
		if a == string(arg) {
			return true
		}
	}
	return false
}

// TabOption configures a tab from NewTab.
type TabOption func(*tabConfig)

type tabConfig struct {
	acceptLanguage string
	width, height  int64
	phone          bool
	allowErrors    bool
	desktopChrome  bool
}

// AsDesktopChrome makes the tab look like the desktop Chrome a person
// runs: the User-Agent and the client hints (Sec-CH-UA) without the
// "HeadlessChrome" marks headless Chromium sends by default, for the same
// version. Bot-defence tests use it for the person; a tab without it is
// the headless browser with a default profile.
func AsDesktopChrome() TabOption {
	return func(c *tabConfig) { c.desktopChrome = true }
}

// WithAcceptLanguage sends Accept-Language: v with every request of the
// tab (Chromium's own default is "en-US,en;q=0.9").
func WithAcceptLanguage(v string) TabOption {
	return func(c *tabConfig) { c.acceptLanguage = v }
}

// WithPhone emulates a phone: a 390×844 CSS-pixel portrait viewport at
// device scale 2, mobile layout and touch.
func WithPhone() TabOption {
	return func(c *tabConfig) { c.phone, c.width, c.height = true, 390, 844 }
}

// WithPhoneSize emulates a phone as WithPhone does, with a portrait
// viewport of w×h CSS pixels (360×740 is a common small Android phone).
func WithPhoneSize(w, h int64) TabOption {
	return func(c *tabConfig) { c.phone, c.width, c.height = true, w, h }
}

// WithViewport sets a desktop viewport of w×h CSS pixels.
func WithViewport(w, h int64) TabOption {
	return func(c *tabConfig) { c.phone, c.width, c.height = false, w, h }
}

// AllowJSErrors keeps uncaught JavaScript exceptions in the tab from
// failing the test (they are still logged).
func AllowJSErrors() TabOption {
	return func(c *tabConfig) { c.allowErrors = true }
}

// NewTab opens a tab in a fresh browser context (its own cookies, cache
// and storage, like a private window) and closes it when the test ends.
// The console of the tab goes to t.Logf; an uncaught exception fails the
// test at its end unless AllowJSErrors is given. Use the context with
// chromedp.Do and chromedp.Run, from one goroutine at a time.
func (b *Browser) NewTab(t testing.TB, opts ...TabOption) context.Context {
	t.Helper()
	var c tabConfig
	for _, o := range opts {
		o(&c)
	}
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		t.Fatalf("browsertest: opening a tab: %v", err)
	}
	var mu sync.Mutex
	var exceptions []string
	console := chromedp.Console(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for m, err := range console {
			if err != nil {
				return
			}
			where := ""
			if m.URL != "" {
				where = fmt.Sprintf(" (%s:%d)", m.URL, m.Line+1)
			}
			t.Logf("console.%s: %s%s", m.Type, m.Text, where)
			if m.IsException() {
				mu.Lock()
				exceptions = append(exceptions, m.Text+where)
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-watched
		mu.Lock()
		defer mu.Unlock()
		if len(exceptions) > 0 && !c.allowErrors {
			t.Errorf("browsertest: uncaught JavaScript exceptions in the tab:\n%s", strings.Join(exceptions, "\n"))
		}
	})
	var steps []chromedp.Action[chromedp.Void]
	if c.acceptLanguage != "" {
		steps = append(steps, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
				Headers: network.Headers{"Accept-Language": c.acceptLanguage},
			})
			return err
		}))
	}
	if c.desktopChrome {
		steps = append(steps, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			v, err := chromedp.Call(ctx, browser.GetVersion, cdp.Empty{})
			if err != nil {
				return err
			}
			ua := strings.ReplaceAll(v.UserAgent, "HeadlessChrome", "Chrome")
			full := strings.TrimPrefix(v.Product, "HeadlessChrome/")
			major, _, _ := strings.Cut(full, ".")
			brands := []*emulation.UserAgentBrandVersion{{Brand: "Chromium", Version: major},
				{Brand: "Google Chrome", Version: major}, {Brand: "Not_A Brand", Version: "24"}}
			_, err = chromedp.Call(ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
				UserAgent: ua, Platform: "Linux x86_64", AcceptLanguage: c.acceptLanguage,
				UserAgentMetadata: &emulation.UserAgentMetadata{Brands: brands, FullVersionList: brands,
					Platform: "Linux", PlatformVersion: "6.1.0", Architecture: "x86", Bitness: "64"}})
			return err
		}))
	}
	if c.width > 0 {
		vo := []chromedp.EmulateViewportOption{}
		if c.phone {
			vo = append(vo, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait)
		}
		steps = append(steps, chromedp.EmulateViewport(c.width, c.height, vo...))
	}
	if err := do(ctx, steps...); err != nil {
		t.Fatalf("browsertest: setting up the tab: %v", err)
	}
	return ctx
}

// do runs steps with DefaultTimeout on a tab that is already open.
func do(ctx context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	tctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	return chromedp.Do(tctx, steps...)
}

// Navigate loads url in the tab and waits for the load event; it fails
// the test on an error.
func Navigate(t testing.TB, ctx context.Context, url string) {
	t.Helper()
	if err := do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("browsertest: navigating to %s: %v", url, err)
	}
}

// Eval evaluates a JavaScript expression in the tab's page and returns
// its value decoded into T; it fails the test on an error or exception.
func Eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := TryEval[T](ctx, expr)
	if err != nil {
		t.Fatalf("browsertest: evaluating %s: %v", expr, err)
	}
	return v
}

// TryEval is Eval that returns the error instead of failing the test:
// for a page that may navigate away by itself while it is asked (the
// room's page, once admitted), where the caller asks again.
func TryEval[T any](ctx context.Context, expr string) (T, error) {
	tctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	return chromedp.Run(tctx, chromedp.Evaluate[T](expr))
}

// WaitFor waits until the JavaScript expression cond is truthy in the
// tab's page (checked every 50 ms, across navigations), for at most
// DefaultTimeout. On timeout it takes a screenshot named after what,
// logs the page's URL and text, and fails the test.
func WaitFor(t testing.TB, ctx context.Context, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(DefaultTimeout)
	var last error
	for time.Now().Before(deadline) {
		tctx, cancel := context.WithTimeout(ctx, time.Until(deadline))
		_, err := chromedp.Run(tctx, chromedp.Poll[chromedp.Void](cond,
			chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(time.Until(deadline))))
		cancel()
		if err == nil {
			return
		}
		last = err
		if ctx.Err() != nil {
			break
		}
		// A navigation destroys the page the poll ran in: poll again in
		// the new one.
		time.Sleep(50 * time.Millisecond)
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(dctx, chromedp.Location())
	text, _ := chromedp.Run(dctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	t.Logf("browsertest: page %s shows:\n%s", loc, text)
	if ctx.Err() == nil {
		Screenshot(t, ctx, "timeout-"+what)
	}
	t.Fatalf("browsertest: waiting for %s (%s): %v", what, cond, last)
}

// Screenshot writes a full-page PNG of the tab to
// <artifacts>/<test name>/<name>.png, where <artifacts> is
// $WAITROOM_TEST_ARTIFACTS or os.TempDir()/waitroom-artifacts, logs the
// path and returns it. The path is the same on every run, so the latest
// screenshot of a state is easy to find. It fails the test on an error.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	return ScreenshotIn(t, ctx, filepath.Join(ArtifactsDir(), safeName(t.Name())), name)
}

// ScreenshotIn is Screenshot into dir (e.g. t.ArtifactDir()).
func ScreenshotIn(t testing.TB, ctx context.Context, dir, name string) string {
	t.Helper()
	png, err := runTimeout(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("browsertest: screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	path := filepath.Join(dir, safeName(name)+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatalf("browsertest: %v", err)
	}
	t.Logf("screenshot %s: %s", name, path)
	return path
}

func runTimeout[T any](ctx context.Context, a chromedp.Action[T]) (T, error) {
	tctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	v, err := chromedp.Run(tctx, a)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer within %s: %w", DefaultTimeout, err)
	}
	return v, err
}

// ArtifactsDir is where Screenshot writes: $WAITROOM_TEST_ARTIFACTS, or
// os.TempDir()/waitroom-artifacts.
func ArtifactsDir() string {
	if d := os.Getenv(ArtifactsEnv); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "waitroom-artifacts")
}

// safeName turns a test or screenshot name into a path: subtests become
// subdirectories, anything but [A-Za-z0-9._-] becomes '_'.
func safeName(s string) string {
	parts := strings.Split(s, "/")
	for i, p := range parts {
		b := []byte(p)
		for j, c := range b {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
				b[j] = '_'
			}
		}
		if s := string(b); s == "" || s == "." || s == ".." {
			b = []byte("_")
		}
		parts[i] = string(b)
	}
	return filepath.Join(parts...)
}
