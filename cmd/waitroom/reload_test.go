package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/freeport"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
)

const (
	reloadAdminToken = "reload-test-admin-token-0123456789"
	reloadInvToken   = "reload-test-inventory-token-0123456789"
	reloadKey1       = "reload-test-signing-key-one-0123456789abcdef"
	reloadKey2       = "reload-test-signing-key-two-0123456789abcdef"
)

// reloadFile is the configuration the reload test rewrites.
type reloadFile struct {
	listen, admin, inventory, origin, dir string
	// keys is the serve.keys section's body.
	keys string
	// showCaps is the show's caps; showName its page name.
	showCaps, showName string
	// extra adds the event "extra" and its route; gone keeps "gone".
	extra, gone bool
	// tickets routes /tickets/ to the show too.
	tickets bool
	// broken adds an unknown key.
	broken bool
}

func (f reloadFile) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, `log: {level: info}
serve:
  listen: %s
  with_inventory: true
  rate_limits:
    per_ip: {rate: 100000, burst: 100000}
    per_prefix: {rate: 100000, burst: 100000}
  cookies: {secure: never}
  keys:
%s
admin:
  listen: %s
  token: %s
admission:
  data_dir: %s/admission
inventory:
  listen: %s
  api_token: %s
  data_dir: %s/inventory
origins:
  - name: shop
    addresses: [%s]
routes:
  - prefix: /show/
    event: show
`, f.listen, f.keys, f.admin, reloadAdminToken, f.dir, f.inventory, reloadInvToken, f.dir, f.origin)
	if f.tickets {
		b.WriteString("  - prefix: /tickets/\n    event: show\n")
	}
	if f.gone {
		b.WriteString("  - prefix: /gone/\n    event: gone\n")
	}
	if f.extra {
		b.WriteString("  - prefix: /extra/\n    event: extra\n")
	}
	fmt.Fprintf(&b, `events:
  - id: show
    name: %s
    landing_path: /show/
    position_display: exact
%s
`, f.showName, f.showCaps)
	if f.gone {
		b.WriteString("  - id: gone\n    landing_path: /gone/\n")
	}
	if f.extra {
		b.WriteString("  - id: extra\n    landing_path: /extra/\n")
	}
	if f.broken {
		b.WriteString("no_such_section: true\n")
	}
	return b.String()
}

// reloadVisitor is a browser with its own cookie jar.
type reloadVisitor struct {
	c  *http.Client
	ua string
	// visitor, tranche and position are the place as first drawn (and
	// the position as last seen).
	visitor  string
	tranche  int
	position int64
	pass     string
}

type reloadStatus struct {
	Status   string `json:"status"`
	Position *int64 `json:"position"`
	Tranche  *int   `json:"tranche"`
	Visitor  string `json:"visitor"`
}

func newReloadVisitor(i int) *reloadVisitor {
	jar, _ := cookiejar.New(nil)
	return &reloadVisitor{c: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		ua: fmt.Sprintf("Mozilla/5.0 reload-visitor-%d", i)}
}

func (v *reloadVisitor) do(method, u, body string, header ...string) (int, string, error) {
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("User-Agent", v.ua)
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := v.c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func (v *reloadVisitor) status(base, event string) (reloadStatus, error) {
	code, body, err := v.do("GET", base+"/_wr/api/status?event="+event, "")
	var st reloadStatus
	if err == nil && code != 200 {
		err = fmt.Errorf("status %d: %s", code, body)
	}
	if err == nil {
		err = json.Unmarshal([]byte(body), &st)
	}
	return st, err
}

func (v *reloadVisitor) cookie(base, name string) string {
	u, _ := url.Parse(base)
	for _, c := range v.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// tokenKid is a JWT's key id.
func tokenKid(token string) string {
	head, _, _ := strings.Cut(token, ".")
	b, _ := base64.RawURLEncoding.DecodeString(head)
	var h struct{ Kid string }
	json.Unmarshal(b, &h)
	return h.Kid
}

// TestReloadUnderLoad runs `waitroom serve` (with the seat-hold sidecar),
// queues visitors, admits some with passes, holds a seat, and then, while
// status polls and gated requests run without pause, rewrites the file
// and reloads it by SIGHUP and by POST /admin/v1/reload: an event added,
// one changed (caps and page name), one removed, a route added, the
// signing key rotated, and two broken files refused. No visitor's place
// (visitor id, tranche; the position only moves forward), pass or held
// seat may change, and no request may fail but those of the removed
// event.
func TestReloadUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin, err := buildWaitroom()
	if err != nil {
		t.Fatal(err)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "origin:"+r.URL.Path)
	}))
	t.Cleanup(site.Close)
	ports := make([]int, 3)
	for i := range ports {
		if ports[i], err = freeport.Get(); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	f := reloadFile{listen: fmt.Sprintf("127.0.0.1:%d", ports[0]), admin: fmt.Sprintf("127.0.0.1:%d", ports[1]),
		inventory: fmt.Sprintf("127.0.0.1:%d", ports[2]), origin: strings.TrimPrefix(site.URL, "http://"), dir: dir,
		keys:     "    signing: {id: k1, secret: " + reloadKey1 + "}",
		showCaps: "    caps: {max_active: 10, max_new_per_minute: 600}\n    controller: {initial_active: 10, min_active: 5}",
		showName: "The Show", gone: true}
	file := filepath.Join(dir, "waitroom.yaml")
	write := func(f reloadFile) {
		t.Helper()
		if err := os.WriteFile(file, []byte(f.text()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(f)

	cmd := exec.Command(bin, "serve", "-c", file)
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	base, adminURL := "http://"+f.listen, "http://"+f.admin
	waitUp(t, adminURL+"/readyz")

	// The sidecar holds a seat for one admitted visitor.
	inv := client.New("http://"+f.inventory, reloadInvToken)
	ctx := context.Background()
	if _, err := inv.PutEvent(ctx, "show-seats", inventory.EventDef{Sections: []inventory.Section{
		{ID: "A", PriceCents: 5000, Rows: []inventory.Row{{ID: "1", Seats: 20}}}}, HoldTTLSeconds: 600}, "test"); err != nil {
		t.Fatal(err)
	}
	hold, err := inv.Hold(ctx, "show-seats", inventory.HoldRequest{User: "visitor-0", Seats: []string{"A-1-1", "A-1-2"}})
	if err != nil {
		t.Fatal(err)
	}

	// Thirty visitors queue for the show; max_active 10 admits ten (and,
	// after the caps change, two more).
	visitors := make([]*reloadVisitor, 30)
	for i := range visitors {
		visitors[i] = newReloadVisitor(i)
		if code, body, err := visitors[i].do("POST", base+"/_wr/api/join", `{"event":"show"}`); err != nil || code != 200 {
			t.Fatalf("join: %d %s %v", code, body, err)
		}
	}
	goneVisitor := newReloadVisitor(99)
	goneVisitor.do("POST", base+"/_wr/api/join", `{"event":"gone"}`)
	deadline := time.Now().Add(60 * time.Second)
	var admitted, waiting []*reloadVisitor
	for admitted == nil || goneVisitor.cookie(base, "wr_pass_gone") == "" {
		if time.Now().After(deadline) {
			t.Fatalf("not drawn and admitted within a minute: %d admitted", len(admitted))
		}
		time.Sleep(200 * time.Millisecond)
		goneVisitor.status(base, "gone")
		var a, w []*reloadVisitor
		for _, v := range visitors {
			st, err := v.status(base, "show")
			if err != nil {
				t.Fatal(err)
			}
			if st.Tranche != nil && st.Position != nil {
				v.visitor, v.tranche, v.position = st.Visitor, *st.Tranche, *st.Position
			}
			switch st.Status {
			case "admitted":
				v.pass = v.cookie(base, "wr_pass_show")
				a = append(a, v)
			case "waiting":
				w = append(w, v)
			}
		}
		if len(a)+len(w) == len(visitors) && len(a) >= 10 {
			admitted, waiting = a, w
		}
	}
	if len(waiting) == 0 {
		t.Fatal("everybody was admitted: nobody's place could be watched")
	}
	t.Logf("%d admitted with passes, %d waiting", len(admitted), len(waiting))

	// The load: status polls of the waiting, gated requests of the
	// admitted, the removed event's visitor, all the time.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	var polls, gated, goneOK, goneFailed atomic.Int64
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	for _, v := range waiting {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				st, err := v.status(base, "show")
				polls.Add(1)
				switch {
				case err != nil:
					fail("status poll: %v", err)
				case st.Visitor != v.visitor || st.Tranche == nil || *st.Tranche != v.tranche:
					fail("visitor %s tranche %d became %s %v", v.visitor, v.tranche, st.Visitor, st.Tranche)
				case st.Position != nil && *st.Position > v.position:
					fail("visitor %s went back from %d to %d", v.visitor, v.position, *st.Position)
				case st.Position != nil:
					v.position = *st.Position
				}
			}
		}()
	}
	var ticketsRoute atomic.Bool
	for _, v := range admitted {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				path := "/show/seats"
				if ticketsRoute.Load() && i%2 == 1 {
					path = "/tickets/seats"
				}
				code, body, err := v.do("GET", base+path, "", "Accept", "text/html")
				gated.Add(1)
				if err != nil || code != 200 || body != "origin:"+path {
					fail("gated %s with a pass: %d %.80q %v", path, code, body, err)
				}
				if p := v.cookie(base, "wr_pass_show"); p != v.pass {
					fail("visitor %s's pass changed", v.visitor)
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			code, body, err := goneVisitor.do("GET", base+"/gone/x", "", "Accept", "text/html")
			if err == nil && code == 200 && body == "origin:/gone/x" {
				goneOK.Add(1)
			} else {
				goneFailed.Add(1)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()

	// The reloads.
	applied := 0
	hup := func() {
		t.Helper()
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		applied++
		waitMetric(t, adminURL, `waitroom_config_reloads_total{result="applied"} `+fmt.Sprint(applied))
	}
	post := func(wantCode int) map[string]any {
		t.Helper()
		req, _ := http.NewRequest("POST", adminURL+"/admin/v1/reload", nil)
		req.Header.Set("Authorization", "Bearer "+reloadAdminToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != wantCode {
			t.Fatalf("reload: %d %v %v", resp.StatusCode, out, err)
		}
		if wantCode == 200 {
			applied++
		}
		return out
	}
	settle := func() { // a few rounds of load on each configuration
		for n := polls.Load() + int64(3*len(waiting)); polls.Load() < n; {
			time.Sleep(20 * time.Millisecond)
		}
	}
	settle()

	// 1. An event added, with its route (SIGHUP).
	f.extra = true
	write(f)
	hup()
	settle()
	extra := newReloadVisitor(100)
	if code, body, _ := extra.do("POST", base+"/_wr/api/join", `{"event":"extra"}`); code != 200 {
		t.Fatalf("join the added event: %d %s", code, body)
	}

	// 2. The show changed: caps and page name (admin API).
	f.showCaps = "    caps: {max_active: 12, max_new_per_minute: 600}\n    controller: {initial_active: 10, min_active: 5}"
	f.showName = "The Big Show"
	write(f)
	res := post(200)
	if ev := res["events"].(map[string]any); fmt.Sprint(ev["changed"]) != "[show]" {
		t.Fatalf("reload 2 reports events %v", ev)
	}
	settle()
	if _, page, _ := newReloadVisitor(101).do("GET", base+"/show/x", "", "Accept", "text/html"); !strings.Contains(page, "The Big Show") {
		t.Fatalf("the room page does not show the new name: %.200s", page)
	}

	// 3. An event removed, with its route (SIGHUP).
	f.gone = false
	write(f)
	hup()
	settle()
	if code, _, _ := goneVisitor.do("GET", base+"/_wr/api/status?event=gone", ""); code != 404 {
		t.Fatalf("status of the removed event: %d", code)
	}

	// 4. A route added and the signing key rotated (admin API).
	f.tickets = true
	f.keys = "    signing: {id: k2, secret: " + reloadKey2 + "}\n    verify:\n      - {id: k1, secret: " + reloadKey1 + "}"
	write(f)
	res = post(200)
	if changed := fmt.Sprint(res["changed"]); !strings.Contains(changed, "routes") || !strings.Contains(changed, "serve.keys") {
		t.Fatalf("reload 4 reports changed %v", changed)
	}
	ticketsRoute.Store(true)
	settle()
	late := newReloadVisitor(102)
	late.do("POST", base+"/_wr/api/join", `{"event":"show"}`)
	if kid := tokenKid(late.cookie(base, "wr_ticket_show")); kid != "k2" {
		t.Fatalf("a ticket issued after the rotation is signed by %q", kid)
	}

	// 5. Broken files are refused whole, by both ways, and change nothing.
	broken := f
	broken.broken = true
	broken.showName = "Never Applied"
	write(broken)
	out := post(422)
	if ps := fmt.Sprint(out["problems"]); !strings.Contains(ps, "no_such_section") {
		t.Fatalf("the refusal does not name the problem: %v", out)
	}
	refusedBefore := strings.Count(logs.String(), "configuration reload refused")
	cmd.Process.Signal(syscall.SIGHUP)
	waitMetric(t, adminURL, `waitroom_config_reloads_total{result="refused"} 2`)
	if text := logs.String(); strings.Count(text, "configuration reload refused") <= refusedBefore || !strings.Contains(text, "no_such_section") {
		t.Fatal("SIGHUP with a broken file did not log its problems")
	}
	settle()
	if _, page, _ := newReloadVisitor(103).do("GET", base+"/show/x", "", "Accept", "text/html"); strings.Contains(page, "Never Applied") {
		t.Fatal("a refused file changed the page")
	}
	// 6. A setting that needs a restart is reported, the rest applies.
	f.showName = "The Final Show"
	write(f)
	f2 := f.text()
	f2 = strings.Replace(f2, "log: {level: info}", "log: {level: debug}", 1)
	if err := os.WriteFile(file, []byte(f2), 0o600); err != nil {
		t.Fatal(err)
	}
	res = post(200)
	if fmt.Sprint(res["needs_restart"]) != "[log]" {
		t.Fatalf("needs_restart = %v", res["needs_restart"])
	}
	settle()

	stop.Store(true)
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	// The held seats are still held by their hold.
	got, err := inv.GetHold(ctx, "show-seats", hold.ID)
	if err != nil || got.Status != inventory.HoldHeld || !slices.Equal(got.Seats, hold.Seats) || !got.ExpiresAt.Equal(hold.ExpiresAt) {
		t.Fatalf("the hold after the reloads: %+v %v; was %+v", got, err, hold)
	}
	if goneOK.Load() == 0 {
		t.Fatal("the removed event's visitor never got through before the removal: the test measured nothing")
	}
	t.Logf("%d reloads applied, 2 refused; %d status polls and %d gated requests without a failure; the removed event's visitor: %d through, %d not",
		applied, polls.Load(), gated.Load(), goneOK.Load(), goneFailed.Load())
}

// waitUp waits for url to answer 200.
func waitUp(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer", url)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitMetric waits until the admin /metrics shows the line want.
func waitMetric(t *testing.T, adminURL, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		req, _ := http.NewRequest("GET", adminURL+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+reloadAdminToken)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if sc.Text() == want {
					resp.Body.Close()
					return
				}
			}
			resp.Body.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics never showed %s", want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
