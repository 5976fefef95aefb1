package app

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

// attackConfig is `waitroom serve` with defaults but for serve.max_in_flight
// (small, so that the test fills every class's share) and the origin's
// in-flight limit; no device binding, so that the test can mint a pass.
const attackConfig = `
log: {level: error}
serve:
  listen: 127.0.0.1:0
  keys:
    signing: {secret: %[1]s}
  cookies: {secure: never}
  binding: []
  shutdown_grace: 1s
  max_in_flight: 800
admin:
  listen: ""
admission:
  data_dir: %[2]s
origins:
  - name: shop
    addresses: [%[3]s]
    max_conns: 200
    max_conn_wait: 0s
    health_check: {disabled: true}
routes:
  - prefix: /upload/
    action: pass
  - prefix: /show/
    event: show
events:
  - id: show
    on_sale_at: %[4]s
    landing_path: /show/
`

// onSale is the test event's on-sale moment: a minute ago, so that the
// engine has few tranches to catch up on.
func onSale() string { return time.Now().Add(-time.Minute).UTC().Format(time.RFC3339) }

// raiseNoFile lifts the soft descriptor limit to the hard one: the attack
// holds thousands of sockets at both ends.
func raiseNoFile(t *testing.T, need uint64) {
	t.Helper()
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		t.Fatal(err)
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			t.Fatal(err)
		}
	}
	if l.Cur < need {
		t.Skipf("RLIMIT_NOFILE is %d, the attack needs about %d descriptors", l.Cur, need)
	}
}

// TestSurvivesConnectionFloods: 600 stalled chunked uploads on a pass
// route (half of them after a first chunk, so that they reach the
// origin), 500 slowloris connections (a head never finished) and 400 idle
// connections at once, from four addresses. During them, an admitted
// visitor's request (valid pass, gated route) and a join are each answered
// within 2 s, the issue's own requirement.
func TestSurvivesConnectionFloods(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1500 connections")
	}
	raiseNoFile(t, 8000)

	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // an upload stalls with its client
		fmt.Fprint(w, "origin:"+r.URL.Path)
	}))
	defer origin.Close()

	secret := netguardSecret()
	w, cfg, stop := runServe(t, fmt.Sprintf(attackConfig, secret, t.TempDir(), strings.TrimPrefix(origin.URL, "http://"), onSale()))
	defer stop()
	addr := w.Addr().String()

	keys, err := cfg.Serve.Keys.Keyring()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	pass, err := keys.SignPass(admission.Pass{ID: admission.NewPassID(), Event: "show",
		Visitor: admission.NewVisitorID(), Lane: "main", Number: 1,
		IssuedAt: now.Add(-time.Second).Truncate(time.Second), ExpiresAt: now.Add(10 * time.Minute).Truncate(time.Second)})
	if err != nil {
		t.Fatal(err)
	}

	// The attack, from 127.0.0.2 to 127.0.0.5 (each under the default
	// per-client limit); the visitor comes from 127.0.0.1.
	var mu sync.Mutex
	var conns []net.Conn
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}()
	attack := func(i int, first string) error {
		d := net.Dialer{Timeout: 10 * time.Second,
			LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%4))}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return err
		}
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		if first != "" {
			c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			_, err = io.WriteString(c, first)
		}
		return err
	}
	flood := func(n int, head string) {
		t.Helper()
		var wg sync.WaitGroup
		errc := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := attack(i, head); err != nil {
					errc <- err
				}
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatalf("attack connection: %v", err)
		}
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("never: %s", what)
			}
		}
	}
	// 300 uploads send a first chunk and stall: they fill the share of the
	// origin's in-flight limit (and of its connections) that anonymous
	// traffic may use, 200 less the 25% reserved for admitted visitors;
	// the other 150 are shed.
	o := w.origins[0]
	flood(300, "POST /upload/big HTTP/1.1\r\nHost: shop\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nfirs\r\n")
	waitUntil("150 anonymous requests in flight to the origin, 150 shed", func() bool {
		return o.AnonymousInFlight() == 150 && gauge(t, w, "waitroom_origin_reserve_shed_total", "") == 150
	})
	// 300 more send only their head: they hold no origin slot, and fill
	// what is left of the anonymous share of serve.max_in_flight (800 less
	// 25% for admitted visitors and 25% for the waiting room).
	flood(300, "POST /upload/big HTTP/1.1\r\nHost: shop\r\nTransfer-Encoding: chunked\r\n\r\n")
	flood(500, "GET /show/ HTTP/1.1\r\nHost: shop\r\nUser-Agent: slow\r\nX-Slow: a")
	flood(400, "")
	waitUntil("400 anonymous requests in flight", func() bool { return gauge(t, w, "waitroom_in_flight", "anonymous") == 400 })
	if n := o.AnonymousInFlight(); n != 150 {
		t.Fatalf("anonymous requests at the origin: %d, want 150 (those without a body must not take a slot)", n)
	}
	t.Logf("attack in place after %v", time.Since(now))

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	timed := func(req *http.Request) (int, string, time.Duration) {
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), time.Since(start)
	}

	// An admitted visitor on the gated route.
	req, _ := http.NewRequest("GET", "http://"+addr+"/show/seats", nil)
	req.AddCookie(&http.Cookie{Name: "wr_pass_show", Value: pass})
	status, body, took := timed(req)
	if status != 200 || body != "origin:/show/seats" {
		t.Fatalf("admitted visitor: %d %q", status, body)
	}
	if took > 2*time.Second {
		t.Fatalf("admitted visitor answered after %v, want within 2 s", took)
	}
	t.Logf("admitted visitor answered in %v", took)
	// A join.
	req, _ = http.NewRequest("POST", "http://"+addr+"/_wr/api/join", strings.NewReader(`{"event":"show"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Mozilla/5.0 (netguard test)")
	status, body, took = timed(req)
	if status != 200 {
		t.Fatalf("join: %d %s", status, body)
	}
	if took > 2*time.Second {
		t.Fatalf("join answered after %v, want within 2 s", took)
	}
	t.Logf("join answered in %v", took)
	// An anonymous upload now finds the anonymous shares full: 503, not a
	// hang.
	req, _ = http.NewRequest("POST", "http://"+addr+"/upload/x", strings.NewReader("data"))
	if status, body, _ := timed(req); status != 503 {
		t.Fatalf("anonymous upload during the flood: %d %s", status, body)
	}

	// The defences were exercised, not skirted.
	if got := gauge(t, w, "waitroom_origin_reserve_shed_total", ""); got != 150 {
		t.Errorf("%v anonymous requests held off the origin's reserved share, want 150", got)
	}
	if got := gauge(t, w, "waitroom_in_flight_refused_total", "anonymous"); got < 51 {
		t.Errorf("%v anonymous requests refused by serve.max_in_flight, want at least 51", got)
	}
}

// TestHeadAndBodyTimeouts: a head that never completes and a body that
// stalls after its first chunk are cut off with 408 and their connections
// closed, while the server stays up.
func TestHeadAndBodyTimeouts(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, "origin")
	}))
	defer origin.Close()
	text := fmt.Sprintf(attackConfig, netguardSecret(), t.TempDir(),
		strings.TrimPrefix(origin.URL, "http://"), onSale())
	text = strings.Replace(text, "  max_in_flight: 800\n",
		"  header_timeout: 300ms\n  body_timeout: 300ms\n  body_min_rate: 1000000\n", 1)
	text = strings.Replace(text, "admin:\n  listen: \"\"\n",
		"admin:\n  listen: 127.0.0.1:0\n  token: netguard-admin-token-0123\n  max_connections: 2\n", 1)
	w, _, stop := runServe(t, text)
	defer stop()
	addr := w.Addr().String()

	for _, tc := range []struct{ name, send, phase string }{
		{"slowloris head", "GET /upload/a HTTP/1.1\r\nHost: shop\r\nX-Slow: a", "head"},
		{"stalled body", "POST /upload/a HTTP/1.1\r\nHost: shop\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nfirs\r\n", "body"},
		{"stalled declared body", "POST /upload/a HTTP/1.1\r\nHost: shop\r\nContent-Length: 10\r\n\r\nfirs", "head"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := gauge(t, w, "waitroom_request_timeouts_total", tc.phase)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, tc.send)
			c.SetReadDeadline(time.Now().Add(20 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 408 || !resp.Close || !strings.Contains(string(b), `"request_timeout"`) {
				t.Fatalf("%d close=%v %s", resp.StatusCode, resp.Close, b)
			}
			if after := gauge(t, w, "waitroom_request_timeouts_total", tc.phase); after != before+1 {
				t.Fatalf("%s timeouts %v -> %v", tc.phase, before, after)
			}
		})
	}
	// The admin listener: a slow head is cut off too, and connections
	// beyond admin.max_connections wait for a free one.
	admin := w.AdminAddr().String()
	t.Run("admin slowloris", func(t *testing.T) {
		var held []net.Conn
		for range 2 {
			c, err := net.Dial("tcp", admin)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: admin\r\nX-Slow: a")
			held = append(held, c)
		}
		// A third connection waits in the backlog while both slots are
		// held, and is served once the slow heads are cut off.
		third := make(chan int, 1)
		go func() {
			c := &http.Client{Timeout: 20 * time.Second}
			resp, err := c.Get("http://" + admin + "/healthz")
			if err != nil {
				third <- 0
				return
			}
			resp.Body.Close()
			third <- resp.StatusCode
		}()
		for _, c := range held {
			c.SetReadDeadline(time.Now().Add(20 * time.Second))
			if _, err := io.ReadAll(c); err != nil {
				t.Fatalf("the admin server kept a slow head: %v", err)
			}
		}
		if status := <-third; status != 200 {
			t.Fatalf("admin after the slow heads: %d", status)
		}
		if got := metric(t, w, "waitroom_connection_limit_total", "listener", "admin", "limit", "total"); got < 1 {
			t.Fatalf("admin connection limit hits %v", got)
		}
	})

	resp, err := http.Get("http://" + addr + "/upload/ok")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("after the timeouts: %d", resp.StatusCode)
	}
}

// gauge reads one sample of a metric from w's registry: the one whose
// (only) label has the value label, or the sum of all when label is "".
func gauge(t *testing.T, w *Waitroom, name, label string) float64 {
	t.Helper()
	fams, err := w.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if label != "" && (len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != label) {
				continue
			}
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

// metric reads the sample of a metric whose labels are exactly the given
// name, value pairs.
func metric(t *testing.T, w *Waitroom, name string, labels ...string) float64 {
	t.Helper()
	fams, err := w.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			if len(m.GetLabel())*2 != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				found := false
				for i := 0; i+1 < len(labels); i += 2 {
					if labels[i] == l.GetName() && labels[i+1] == l.GetValue() {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return 0
}

const emfileChildEnv = "WAITROOM_APP_EMFILE_CHILD"

// TestServeSurvivesEMFILE runs `waitroom serve` in a child process (this
// test binary again) whose RLIMIT_NOFILE is lowered once it is up, opens
// more connections than it has descriptors for, releases them, and expects
// an answer again within about a second (the backoff's cap), from the
// same process.
func TestServeSurvivesEMFILE(t *testing.T) {
	if os.Getenv(emfileChildEnv) != "" {
		serveUnderLowLimit(os.Getenv(emfileChildEnv))
		return
	}
	if testing.Short() {
		t.Skip("spawns a child process")
	}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "origin:"+r.URL.Path)
	}))
	defer origin.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeSurvivesEMFILE$")
	cmd.Env = append(os.Environ(), emfileChildEnv+"="+strings.TrimPrefix(origin.URL, "http://"))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	waiting := false
	defer func() {
		cmd.Process.Kill()
		if waiting {
			<-exited
		} else {
			cmd.Wait()
		}
	}()
	lines := bufio.NewScanner(out)
	var addr, pid string
	for lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "serving "); ok {
			addr, pid, _ = strings.Cut(a, " ")
			break
		}
	}
	if addr == "" {
		t.Fatal("the child never served")
	}
	waiting = true
	go func() { io.Copy(io.Discard, out); exited <- cmd.Wait() }()

	client := &http.Client{Timeout: 500 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func() (string, error) {
		resp, err := client.Get("http://" + addr + "/upload/x")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != 200 {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		return string(b), err
	}
	if body, err := get(); err != nil || body != "origin:/upload/x" {
		t.Fatalf("before: %q %v", body, err)
	}
	var hold []net.Conn
	defer func() {
		for _, c := range hold {
			c.Close()
		}
	}()
	for range 150 {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			select {
			case err := <-exited:
				t.Fatalf("the child exited: %v", err)
			case <-time.After(time.Second):
			}
			t.Fatalf("dial: %v", err)
		}
		hold = append(hold, c)
	}
	// Out of descriptors, the child can answer nobody: not even a new
	// connection, which waits in its backlog.
	if _, err := get(); err == nil {
		t.Fatal("the child answered with its descriptors exhausted: the test exhausted nothing")
	}
	for _, c := range hold {
		c.Close()
	}
	hold = nil
	released := time.Now()
	for {
		body, err := get()
		if err == nil && body == "origin:/upload/x" {
			break
		}
		if time.Since(released) > 15*time.Second {
			t.Fatalf("no answer 15 s after the release: %v", err)
		}
	}
	took := time.Since(released)
	select {
	case err := <-exited:
		t.Fatalf("the child exited: %v", err)
	default:
	}
	// The backoff is capped at 1 s; the margin is for a loaded machine.
	if took > 2*time.Second {
		t.Fatalf("answered %v after the release, want about a second", took)
	}
	t.Logf("child %s answered %v after the descriptors were released", pid, took)
}

// runServe starts `waitroom serve` on the configuration text; stop ends
// it and checks that it stopped cleanly. Defer stop before anything the
// server depends on is closed (its origin), so that it goes first.
func runServe(t *testing.T, text string) (w *Waitroom, cfg *config.Config, stop func()) {
	t.Helper()
	return runServeOn(t, text, Listeners{})
}

// runServeOn is runServe on listeners the test opened (nil ones opened
// from the configuration).
func runServeOn(t *testing.T, text string, lns Listeners) (w *Waitroom, cfg *config.Config, stop func()) {
	t.Helper()
	cfg, err := config.Parse([]byte(text), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if err := config.ValidateFor(cfg, config.RoleProxy); err != nil {
		t.Fatal(err)
	}
	w, err = NewServe(context.Background(), cfg, slog.New(slog.DiscardHandler), lns)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	return w, cfg, func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve stopped with %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	}
}

// netguardSecret is a signing secret start-up accepts: random, not a
// pattern.
func netguardSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// serveUnderLowLimit is the child of TestServeSurvivesEMFILE: serve with
// origin, then RLIMIT_NOFILE lowered to what is open plus a few dozen.
func serveUnderLowLimit(origin string) {
	fail := func(err error) { fmt.Fprintln(os.Stderr, "child:", err); os.Exit(2) }
	dir, err := os.MkdirTemp("", "waitroom-emfile")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	cfg, err := config.Parse([]byte(fmt.Sprintf(attackConfig, netguardSecret(), dir, origin, onSale())),
		func(string) (string, bool) { return "", false })
	if err != nil {
		fail(err)
	}
	w, err := NewServe(context.Background(), cfg, slog.New(slog.DiscardHandler), Listeners{})
	if err != nil {
		fail(err)
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		fail(err)
	}
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &cur); err != nil {
		fail(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: uint64(len(entries) + 40), Max: cur.Max}); err != nil {
		fail(err)
	}
	fmt.Printf("serving %s %d\n", w.Addr(), os.Getpid())
	err = w.Run(context.Background())
	fmt.Fprintln(os.Stderr, "child: Run returned:", err)
	os.Exit(3)
}
