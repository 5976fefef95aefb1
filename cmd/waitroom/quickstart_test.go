package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/browsertest"
	"github.com/waitroom/waitroom/internal/testkit/proctest"
)

// pythonSite runs `python3 -m http.server` on a free loopback port (it
// picks one itself and says which) serving a home page and a checkout/
// directory, the plainest origin there is: it answers 404 on /healthz.
func pythonSite(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 (the quickstart's plain origin) is missing: run make deps: %v", err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "checkout"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("<h1>home page of the origin</h1>\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "checkout", "index.html"), []byte("<h1>checkout page of the origin</h1>\n"), 0o644)
	cmd := exec.Command(py, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard // one line per request
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	port := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`port (\d+)`)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				port <- m[1]
				break
			}
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case p := <-port:
		return "http://127.0.0.1:" + p
	case <-time.After(15 * time.Second):
		t.Fatal("python3 -m http.server did not say its port")
		return ""
	}
}

// quickstartProc is a running `waitroom serve --origin ...`.
type quickstartProc struct {
	p      *proctest.Proc
	url    string // the visitors' listener
	admin  string // the admin API
	banner string // what it printed before it listened
}

var adminURLRe = regexp.MustCompile(`admin API: (http://\S+)/ `)

// startQuickstart runs waitroom serve with args plus --listen on a free
// port (retried if another process takes it first) and --admin on any
// free loopback port, and waits until it listens.
func startQuickstart(t *testing.T, args ...string) *quickstartProc {
	t.Helper()
	bin, err := buildWaitroom()
	if err != nil {
		t.Fatal(err)
	}
	var qp *quickstartProc
	err = proctest.OnFreePorts("waitroom serve --origin", 5, func(port int) error {
		listen := fmt.Sprintf("127.0.0.1:%d", port)
		cmd := exec.Command(bin, append([]string{"serve", "--listen", listen, "--admin", "127.0.0.1:0"}, args...)...)
		log := &logWatch{want: []byte("waitroom listening"), seen: make(chan struct{})}
		var stderr lockedBuffer
		// The buffer first: once log sees "waitroom listening", the
		// banner before it must already be in stderr.
		cmd.Stderr = io.MultiWriter(&stderr, log)
		p, err := proctest.Start(cmd, proctest.Wait{Name: "waitroom", Addr: listen, Timeout: 20 * time.Second,
			Log: stderr.String})
		if err != nil {
			return err
		}
		select {
		case <-log.seen:
		case <-time.After(20 * time.Second):
			p.Kill()
			return fmt.Errorf("no \"waitroom listening\": %s", stderr.String())
		}
		banner := stderr.String()
		m := adminURLRe.FindStringSubmatch(banner)
		if m == nil {
			p.Kill()
			return proctest.Permanent(fmt.Errorf("no admin URL in %q", banner))
		}
		qp = &quickstartProc{p: p, url: "http://" + listen, admin: m[1], banner: banner}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { qp.p.Stop(syscall.SIGTERM, 10*time.Second) })
	return qp
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// browser is a visitor with a cookie jar who sends what a browser sends.
type browser struct{ c *http.Client }

func newBrowser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{c: &http.Client{Jar: jar, Timeout: 15 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *browser) do(t *testing.T, method, u, accept, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36")
	req.Header.Set("Accept", accept)
	req.Header.Set("Accept-Language", "en")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(data)
}

const acceptHTML = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// visitCheckout is the first visitor going to /checkout/ as the page
// would: straight to the origin when the room lets them through, else
// joining with the API and polling until admitted, then the page again.
// It returns how long that took and whether the room queued them.
func visitCheckout(t *testing.T, b *browser, base string) (time.Duration, bool) {
	t.Helper()
	start := time.Now()
	status, _, body := b.do(t, "GET", base+"/checkout/", acceptHTML, "")
	if status == 200 && strings.Contains(body, "checkout page of the origin") {
		return time.Since(start), false
	}
	if status != 200 || !strings.Contains(body, `id="wr-config"`) {
		t.Fatalf("first visit to /checkout/: %d\n%s", status, body)
	}
	var st struct {
		Status         string  `json:"status"`
		RefreshSeconds float64 `json:"refresh_seconds"`
		Redirect       *string `json:"redirect"`
	}
	status, _, body = b.do(t, "POST", base+"/_wr/api/join", "application/json", `{"event":"site","return":"/checkout/"}`)
	if status != 200 || json.Unmarshal([]byte(body), &st) != nil {
		t.Fatalf("join: %d %s", status, body)
	}
	for st.Status != "admitted" {
		if time.Since(start) > time.Minute {
			t.Fatalf("not admitted after a minute: %s", body)
		}
		time.Sleep(time.Duration(min(max(st.RefreshSeconds, 0.2), 2) * float64(time.Second)))
		status, _, body = b.do(t, "GET", base+"/_wr/api/status?event=site", "application/json", "")
		if status != 200 || json.Unmarshal([]byte(body), &st) != nil {
			t.Fatalf("status: %d %s", status, body)
		}
	}
	if st.Redirect == nil || *st.Redirect != "/checkout/" {
		t.Fatalf("admitted with redirect %v", st.Redirect)
	}
	status, _, body = b.do(t, "GET", base+*st.Redirect, acceptHTML, "")
	if status != 200 || !strings.Contains(body, "checkout page of the origin") {
		t.Fatalf("admitted visit: %d %s", status, body)
	}
	return time.Since(start), true
}

func fileMode(t *testing.T, path string) os.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// TestFiveMinutesToProtected does exactly what the README's quickstart
// says, against python3 -m http.server: waitroom serve --origin URL
// --gate /checkout/ with no configuration file, then a visitor.
func TestFiveMinutesToProtected(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	origin := pythonSite(t)
	data := filepath.Join(t.TempDir(), "data")
	args := []string{"--origin", origin, "--gate", "/checkout/", "--data-dir", data}
	wr := startQuickstart(t, args...)

	// The secrets were made, kept private, and the token printed once.
	if m := fileMode(t, data); m != 0o700 {
		t.Errorf("data directory mode %04o, want 0700", m)
	}
	secrets := map[string]string{}
	for _, f := range []string{"signing.key", "admin.token", "challenge.key"} {
		if m := fileMode(t, filepath.Join(data, f)); m != 0o600 {
			t.Errorf("%s mode %04o, want 0600", f, m)
		}
		b, err := os.ReadFile(filepath.Join(data, f))
		if err != nil {
			t.Fatal(err)
		}
		secrets[f] = strings.TrimSpace(string(b))
		if len(secrets[f]) != 64 {
			t.Errorf("%s holds %d characters, want 64 hex digits", f, len(secrets[f]))
		}
	}
	token := secrets["admin.token"]
	if !strings.Contains(wr.banner, "admin token (shown this once): "+token) {
		t.Errorf("the first start does not show the admin token:\n%s", wr.banner)
	}
	if strings.Contains(wr.banner, secrets["signing.key"]) {
		t.Error("the signing key was printed")
	}
	adminGet := func(base, token string) int {
		req, _ := http.NewRequest("GET", base+"/admin/v1/events/site", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := adminGet(wr.admin, token); code != 200 {
		t.Errorf("admin API with the printed token: %d", code)
	}
	if u, _ := url.Parse(wr.admin); u == nil || u.Hostname() != "127.0.0.1" {
		t.Errorf("the admin API is on %s, not loopback", wr.admin)
	}

	// An ungated path reaches the origin.
	b := newBrowser(t)
	if status, _, body := b.do(t, "GET", wr.url+"/", acceptHTML, ""); status != 200 || !strings.Contains(body, "home page of the origin") {
		t.Fatalf("GET /: %d %s", status, body)
	}
	// The first visitor on the idle site reaches the checkout.
	took, queued := visitCheckout(t, b, wr.url)
	t.Logf("first visitor on an idle site reached /checkout/ at the origin in %v (queued: %v)", took.Round(time.Millisecond), queued)
	// Threshold mode on an idle site: straight through, in the one
	// request. The bound is generous (a loaded CI box); the figure is in
	// the log.
	if queued {
		t.Errorf("the first visitor on an idle site was sent to the waiting room")
	}
	if took > 10*time.Second {
		t.Errorf("the first visitor took %v", took)
	}
	// A second visitor, in Chromium: straight through as well while the
	// site is idle (or, if the room queued, the page's own JavaScript
	// joins, polls and brings them to the checkout).
	br := browsertest.Start(t)
	tab := br.NewTab(t, browsertest.AsDesktopChrome())
	start := time.Now()
	browsertest.Navigate(t, tab, wr.url+"/checkout/")
	browsertest.WaitFor(t, tab, "the checkout", `document.body && document.body.innerText.includes("checkout page of the origin")`)
	t.Logf("a second visitor in Chromium reached /checkout/ at the origin in %v", time.Since(start).Round(time.Millisecond))

	// The origin answers 404 on /healthz; it stays in rotation all the
	// same (a TCP check by default), well past three check intervals.
	if testing.Verbose() {
		t.Log("waiting out three health-check intervals")
	}
	time.Sleep(16 * time.Second)
	if status, _, body := b.do(t, "GET", wr.url+"/checkout/", acceptHTML, ""); status != 200 || !strings.Contains(body, "checkout page of the origin") {
		t.Fatalf("after the health checks: %d %s", status, body)
	}

	// A restart reuses the secrets: same files, same token (not printed
	// again), and the pass from the first run still opens the checkout.
	wr.p.Stop(syscall.SIGTERM, 10*time.Second)
	wr2 := startQuickstart(t, args...)
	for f, want := range secrets {
		b, err := os.ReadFile(filepath.Join(data, f))
		if err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s changed across a restart", f)
		}
	}
	if strings.Contains(wr2.banner, "shown this once") || strings.Contains(wr2.banner, token) {
		t.Errorf("the second start prints the token again:\n%s", wr2.banner)
	}
	if code := adminGet(wr2.admin, token); code != 200 {
		t.Errorf("admin API with the first run's token: %d", code)
	}
	if queued {
		// JSON: without a pass this would be 401, not the origin's page.
		if status, _, body := b.do(t, "GET", wr2.url+"/checkout/", "application/json", ""); status != 200 || !strings.Contains(body, "checkout page of the origin") {
			t.Fatalf("the first run's pass after a restart: %d %s", status, body)
		}
	}
}

// TestQuickstartOriginDown: with the origin not running, a browser gets
// the friendly 502 page with Retry-After at once, and an API client JSON.
func TestQuickstartOriginDown(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	wr := startQuickstart(t, "--origin", "http://"+dead, "--gate", "/checkout/", "--data-dir", t.TempDir())
	b := newBrowser(t)
	start := time.Now()
	status, h, body := b.do(t, "GET", wr.url+"/", acceptHTML, "")
	took := time.Since(start)
	if status != 502 || h.Get("Retry-After") == "" || !strings.Contains(body, "The site is not answering") {
		t.Fatalf("browser: %d %v\n%s", status, h, body)
	}
	if took > 5*time.Second {
		t.Errorf("the 502 took %v", took)
	}
	// What a person sees: the page in Chromium, which retries by itself.
	tab := browsertest.Start(t).NewTab(t, browsertest.WithAcceptLanguage("de"))
	browsertest.Navigate(t, tab, wr.url+"/")
	browsertest.WaitFor(t, tab, "the German down page", `document.querySelector("h1") && document.querySelector("h1").textContent === "Die Seite antwortet gerade nicht"`)
	browsertest.Screenshot(t, tab, "origin-down-de")
	status, h, body = b.do(t, "GET", wr.url+"/", "application/json", "")
	if status != 502 || h.Get("Retry-After") == "" || !strings.Contains(body, `"error":"origin_unavailable"`) {
		t.Fatalf("API client: %d %v %s", status, h, body)
	}
}

// TestInitPassesCheckConfig: waitroom init writes a file that
// check-config accepts once its two secrets are exported, refuses
// without them (naming them), and is not overwritten without --force.
func TestInitPassesCheckConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin, err := buildWaitroom()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "waitroom.yaml")
	run := func(env []string, args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if x, ok := err.(*exec.ExitError); ok {
			code = x.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	}
	initArgs := []string{"init", "--origin", "http://127.0.0.1:3000", "--gate", "/checkout/", "--gate", "/events/", "-o", file}
	if code, _, stderr := run(nil, initArgs...); code != 0 || !strings.Contains(stderr, "waitroom check-config -c "+file) {
		t.Fatalf("init: %d %s", code, stderr)
	}
	if m := fileMode(t, file); m&0o022 != 0 {
		t.Errorf("the file is writable by others: %04o", m)
	}
	secrets := []string{"WAITROOM_SIGNING_SECRET=" + randomHex(t), "WAITROOM_ADMIN_TOKEN=" + randomHex(t),
		"WAITROOM_CHALLENGE_SECRET=" + randomHex(t)}
	if code, stdout, stderr := run(secrets, "check-config", "-c", file); code != 0 || !strings.HasPrefix(stdout, "configuration is valid") {
		t.Fatalf("check-config: %d %s %s", code, stdout, stderr)
	} else if !strings.Contains(stdout, "/checkout/") {
		t.Errorf("the route table does not show the gate:\n%s", stdout)
	}
	if code, _, stderr := run(nil, "check-config", "-c", file); code != 1 ||
		!strings.Contains(stderr, "WAITROOM_SIGNING_SECRET is not set") || !strings.Contains(stderr, "WAITROOM_ADMIN_TOKEN is not set") ||
		!strings.Contains(stderr, "WAITROOM_CHALLENGE_SECRET is not set") {
		t.Fatalf("check-config without the secrets: %d %s", code, stderr)
	}
	os.WriteFile(file, []byte("# mine\n"), 0o644)
	if code, _, stderr := run(nil, initArgs...); code != 1 || !strings.Contains(stderr, "exists") {
		t.Fatalf("init over a file: %d %s", code, stderr)
	}
	if b, _ := os.ReadFile(file); string(b) != "# mine\n" {
		t.Fatal("init overwrote a file without --force")
	}
	if code, _, _ := run(nil, append(initArgs, "--force")...); code != 0 {
		t.Fatalf("init --force: %d", code)
	}
	if code, _, stderr := run(nil, "serve", "-c", file, "--origin", "http://127.0.0.1:3000", "--gate", "/x/"); code != 2 || !strings.Contains(stderr, "use one") {
		t.Fatalf("serve -c with --origin: %d %s", code, stderr)
	}
}

func randomHex(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
