package console

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/memstore"
	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
)

const testToken = "console-test-token-0123456789"

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

type rig struct {
	clk    *fakeclock.Clock
	engine *admission.Engine
	c      *Console
	srv    *httptest.Server
	reg    *prometheus.Registry
}

// newRig serves a console over a real engine (memstore) with two
// events: "show" (queue open, on sale at t0+10s) and "open" (no on-sale
// time), on a real HTTP server; tls serves it over HTTPS.
func newRig(t *testing.T, tls bool) *rig {
	t.Helper()
	r := &rig{clk: fakeclock.New(t0), reg: prometheus.NewRegistry()}
	s, err := memstore.Open(memstore.Options{Dir: t.TempDir(), Clock: r.clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r.engine, err = admission.New(admission.Options{Store: s, Clock: r.clk.Now, Replica: "test", Logger: slog.New(slog.DiscardHandler),
		Inventory: seats{"show-seats": 42}},
		admission.EventConfig{ID: "show", QueueOpensAt: t0.Add(-time.Hour), OnSaleAt: t0.Add(10 * time.Second),
			Caps: admission.Caps{MaxActive: 100, MaxNewPerMinute: 60}, InventoryEvent: "show-seats"},
		admission.EventConfig{ID: "open"})
	if err != nil {
		t.Fatal(err)
	}
	r.c, err = New(Options{Token: testToken, Engine: r.engine, Gatherer: r.reg, Clock: r.clk.Now,
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	r.c.Register(mux)
	if tls {
		r.srv = httptest.NewTLSServer(mux)
	} else {
		r.srv = httptest.NewServer(mux)
	}
	t.Cleanup(r.srv.Close)
	t.Cleanup(r.c.Stop)
	return r
}

// seats is an inventory with fixed seats left per inventory event.
type seats map[string]int

func (s seats) Remaining(event string) (int, bool) {
	n, ok := s[event]
	return n, ok
}

// browser is a client with its own cookies that follows no redirects and
// sends what a browser sends on a same-origin form post.
func (r *rig) browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := r.srv.Client()
	return &http.Client{Jar: jar, Transport: c.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type resp struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, c *http.Client, method, u string, form url.Values, hdr ...string) resp {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, string(b)}
}

// sameOrigin are the headers of a browser's same-origin form post.
func (r *rig) sameOrigin() []string {
	return []string{"Sec-Fetch-Site", "same-origin", "Origin", r.srv.URL}
}

func (r *rig) login(t *testing.T, c *http.Client) string {
	t.Helper()
	got := do(t, c, "POST", r.srv.URL+"/admin/login", url.Values{"token": {testToken}}, r.sameOrigin()...)
	if got.status != http.StatusSeeOther || got.header.Get("Location") != "/admin/" {
		t.Fatalf("login: %d %q", got.status, got.header.Get("Location"))
	}
	page := do(t, c, "GET", r.srv.URL+"/admin/", nil)
	return csrfOf(t, page.body)
}

func csrfOf(t *testing.T, page string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, `name="csrf" value="`)
	if !ok {
		t.Fatalf("no CSRF token on the page:\n%.400s", page)
	}
	tok, _, _ := strings.Cut(rest, `"`)
	return tok
}

func sessionCookie(t *testing.T, h http.Header) *http.Cookie {
	t.Helper()
	for _, line := range h.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		if err == nil && c.Name == CookieName {
			return c
		}
	}
	t.Fatalf("no %s cookie set: %v", CookieName, h.Values("Set-Cookie"))
	return nil
}

// TestLogin: the form without a session, a wrong token refused with the
// form again, the right one a session cookie of the promised shape and
// the dashboard; the pages' CSP allows nothing inline.
func TestLogin(t *testing.T) {
	r := newRig(t, false)
	b := r.browser(t)
	got := do(t, b, "GET", r.srv.URL+"/admin/", nil)
	if got.status != 200 || !strings.Contains(got.body, `name="token"`) || strings.Contains(got.body, "data-event=") {
		t.Fatalf("no session: %d\n%.300s", got.status, got.body)
	}
	csp := got.header.Get("Content-Security-Policy")
	if csp == "" || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "script-src 'self'") {
		t.Fatalf("CSP %q", csp)
	}
	got = do(t, b, "POST", r.srv.URL+"/admin/login", url.Values{"token": {"not-the-token-at-all"}}, r.sameOrigin()...)
	if got.status != http.StatusUnauthorized || !strings.Contains(got.body, "not the admin token") || !strings.Contains(got.body, `name="token"`) {
		t.Fatalf("wrong token: %d\n%.300s", got.status, got.body)
	}
	if len(got.header.Values("Set-Cookie")) != 0 {
		t.Fatalf("a wrong token got a cookie: %v", got.header.Values("Set-Cookie"))
	}
	got = do(t, b, "POST", r.srv.URL+"/admin/login", url.Values{"token": {testToken}}, r.sameOrigin()...)
	if got.status != http.StatusSeeOther {
		t.Fatalf("right token: %d", got.status)
	}
	c := sessionCookie(t, got.header)
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/admin/" || c.Secure {
		t.Fatalf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/admin/, not Secure over plain HTTP", c)
	}
	if c.MaxAge != int(DefaultSessionTTL.Seconds()) {
		t.Fatalf("cookie Max-Age %d, want %d", c.MaxAge, int(DefaultSessionTTL.Seconds()))
	}
	got = do(t, b, "GET", r.srv.URL+"/admin/", nil)
	if got.status != 200 || !strings.Contains(got.body, `data-event="show"`) || !strings.Contains(got.body, `data-event="open"`) {
		t.Fatalf("dashboard: %d\n%.300s", got.status, got.body)
	}
	// The bearer token is not a session: the console wants its cookie.
	got = do(t, r.srv.Client(), "GET", r.srv.URL+"/admin/stream", nil, "Authorization", "Bearer "+testToken)
	if got.status != http.StatusUnauthorized {
		t.Fatalf("stream with a bearer token and no session: %d", got.status)
	}
}

// TestCookieSecureOverTLS: over HTTPS the session cookie is Secure.
func TestCookieSecureOverTLS(t *testing.T) {
	r := newRig(t, true)
	got := do(t, r.browser(t), "POST", r.srv.URL+"/admin/login", url.Values{"token": {testToken}}, r.sameOrigin()...)
	if c := sessionCookie(t, got.header); got.status != http.StatusSeeOther || !c.Secure {
		t.Fatalf("%d, cookie %+v: want Secure", got.status, c)
	}
}

// TestLoginRateLimited: after the burst of wrong tokens an address is
// refused (429) even with the right one, until the budget refills; a
// right token costs nothing.
func TestLoginRateLimited(t *testing.T) {
	r := newRig(t, false)
	b := r.browser(t)
	for range 3 {
		r.login(t, r.browser(t)) // successes spend nothing
	}
	for i := range DefaultLoginBurst {
		if got := do(t, b, "POST", r.srv.URL+"/admin/login", url.Values{"token": {"wrong-wrong-wrong"}}, r.sameOrigin()...); got.status != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d", i, got.status)
		}
	}
	got := do(t, b, "POST", r.srv.URL+"/admin/login", url.Values{"token": {testToken}}, r.sameOrigin()...)
	if got.status != http.StatusTooManyRequests || got.header.Get("Retry-After") == "" || !strings.Contains(got.body, `name="token"`) {
		t.Fatalf("after the burst: %d, Retry-After %q", got.status, got.header.Get("Retry-After"))
	}
	if len(got.header.Values("Set-Cookie")) != 0 {
		t.Fatal("a refused login got a cookie")
	}
	r.clk.Add(time.Minute / DefaultLoginRate)
	r.login(t, b)
}

// TestCSRF: a change needs the session's CSRF token and a same-origin
// request; every refusal leaves the event as it was.
func TestCSRF(t *testing.T) {
	r := newRig(t, false)
	b := r.browser(t)
	tok := r.login(t, b)
	pause := r.srv.URL + "/admin/events/show/pause"
	for _, tc := range []struct {
		name string
		form url.Values
		hdr  []string
	}{
		{"no token", url.Values{}, r.sameOrigin()},
		{"wrong token", url.Values{"csrf": {strings.Repeat("0", len(tok))}}, r.sameOrigin()},
		{"another session's token", url.Values{"csrf": {r.login(t, r.browser(t))}}, r.sameOrigin()},
		{"cross-site", url.Values{"csrf": {tok}}, []string{"Sec-Fetch-Site", "cross-site"}},
		{"another origin", url.Values{"csrf": {tok}}, []string{"Origin", "http://evil.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := do(t, b, "POST", pause, tc.form, tc.hdr...)
			if got.status != http.StatusForbidden {
				t.Fatalf("%d, want 403", got.status)
			}
			if c, _ := r.engine.Control("show"); c.Paused {
				t.Fatal("the refused request paused the event")
			}
		})
	}
	got := do(t, b, "POST", pause, url.Values{"csrf": {tok}}, r.sameOrigin()...)
	if got.status != http.StatusSeeOther || !strings.Contains(got.header.Get("Location"), "done=pause") {
		t.Fatalf("with the token: %d %q", got.status, got.header.Get("Location"))
	}
	if c, _ := r.engine.Control("show"); !c.Paused {
		t.Fatal("the event is not paused")
	}
	// Without a session the form is refused whatever it carries.
	got = do(t, r.browser(t), "POST", r.srv.URL+"/admin/events/show/resume", url.Values{"csrf": {tok}}, r.sameOrigin()...)
	if got.status != http.StatusUnauthorized {
		t.Fatalf("without a session: %d", got.status)
	}
	if c, _ := r.engine.Control("show"); !c.Paused {
		t.Fatal("a request without a session resumed the event")
	}
}

// TestSessionExpiry: a session works until its TTL and not after; the
// browser is shown the login form and told to clear the cookie.
func TestSessionExpiry(t *testing.T) {
	r := newRig(t, false)
	b := r.browser(t)
	tok := r.login(t, b)
	r.clk.Add(DefaultSessionTTL - time.Second)
	if got := do(t, b, "GET", r.srv.URL+"/admin/", nil); !strings.Contains(got.body, "data-event=") {
		t.Fatal("the session ended a second early")
	}
	r.clk.Add(time.Second)
	if got := do(t, b, "GET", r.srv.URL+"/admin/", nil); strings.Contains(got.body, "data-event=") || !strings.Contains(got.body, `name="token"`) {
		t.Fatal("an expired session still shows the dashboard")
	}
	got := do(t, b, "POST", r.srv.URL+"/admin/events/show/pause", url.Values{"csrf": {tok}}, r.sameOrigin()...)
	if got.status != http.StatusUnauthorized || sessionCookie(t, got.header).MaxAge >= 0 {
		t.Fatalf("action after expiry: %d, cookies %v", got.status, got.header.Values("Set-Cookie"))
	}
	if c, _ := r.engine.Control("show"); c.Paused {
		t.Fatal("an expired session paused the event")
	}
	if got := do(t, b, "GET", r.srv.URL+"/admin/stream", nil); got.status != http.StatusUnauthorized {
		t.Fatalf("stream after expiry: %d", got.status)
	}
}

// TestLogout: after signing out, a copy of the old cookie is refused.
func TestLogout(t *testing.T) {
	r := newRig(t, false)
	b := r.browser(t)
	tok := r.login(t, b)
	u, _ := url.Parse(r.srv.URL + "/admin/")
	old := b.Jar.Cookies(u)
	got := do(t, b, "POST", r.srv.URL+"/admin/logout", url.Values{"csrf": {tok}}, r.sameOrigin()...)
	if got.status != 200 || sessionCookie(t, got.header).MaxAge >= 0 {
		t.Fatalf("logout: %d %v", got.status, got.header.Values("Set-Cookie"))
	}
	replay := r.browser(t)
	replay.Jar.SetCookies(u, old)
	if got := do(t, replay, "GET", r.srv.URL+"/admin/", nil); strings.Contains(got.body, "data-event=") {
		t.Fatal("a signed-out session's cookie still works")
	}
}

// TestForgedCookies: cookies not signed by this token's key, tampered,
// or malformed are no session.
func TestForgedCookies(t *testing.T) {
	r := newRig(t, false)
	other := newSessions("another-token-entirely-1234", time.Hour, r.clk.Now)
	forged, _ := other.issue()
	good, _ := r.c.sessions.issue()
	flip := []byte(good)
	flip[3] ^= 1
	for _, v := range []string{forged, string(flip), good + "x", "", ".", "a.b", strings.Repeat("A", 32) + "." + strings.Repeat("A", 43)} {
		if _, ok := r.c.sessions.parse(v); ok {
			t.Errorf("%q accepted", v)
		}
		b := r.browser(t)
		u, _ := url.Parse(r.srv.URL + "/admin/")
		b.Jar.SetCookies(u, []*http.Cookie{{Name: CookieName, Value: v}})
		if got := do(t, b, "GET", r.srv.URL+"/admin/", nil); strings.Contains(got.body, "data-event=") {
			t.Errorf("%q shows the dashboard", v)
		}
	}
	if _, ok := r.c.sessions.parse(good); !ok {
		t.Fatal("the genuine cookie was refused")
	}
}

// TestActions: each button changes the event through the engine as the
// admin API would; bad input is refused with a message and no change.
func TestActions(t *testing.T) {
	r := newRig(t, false)
	b := r.browser(t)
	tok := r.login(t, b)
	post := func(path string, form url.Values) string {
		t.Helper()
		form.Set("csrf", tok)
		got := do(t, b, "POST", r.srv.URL+path, form, r.sameOrigin()...)
		if got.status != http.StatusSeeOther {
			t.Fatalf("%s: %d", path, got.status)
		}
		return got.header.Get("Location")
	}
	ctl := func(id string) admission.Control {
		c, err := r.engine.Control(id)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if loc := post("/admin/events/show/caps", url.Values{"max_active": {"7"}, "max_new_per_minute": {"30"}}); !strings.Contains(loc, "done=caps") {
		t.Fatalf("caps: %s", loc)
	}
	if c := ctl("show"); c.Caps == nil || *c.Caps != (admission.Caps{MaxActive: 7, MaxNewPerMinute: 30}) {
		t.Fatalf("caps: %+v", c.Caps)
	}
	for _, bad := range []url.Values{{"max_active": {"-1"}, "max_new_per_minute": {"3"}}, {"max_active": {"x"}, "max_new_per_minute": {"3"}}, {"max_active": {"3"}}} {
		if loc := post("/admin/events/show/caps", bad); !strings.Contains(loc, "failed=caps") {
			t.Fatalf("bad caps %v: %s", bad, loc)
		}
	}
	if c := ctl("show"); *c.Caps != (admission.Caps{MaxActive: 7, MaxNewPerMinute: 30}) {
		t.Fatalf("bad caps changed them: %+v", c.Caps)
	}
	page := do(t, b, "GET", r.srv.URL+"/admin/?failed=caps&event=show", nil).body
	if !strings.Contains(page, "whole numbers") || !strings.Contains(page, `value="7"`) || !strings.Contains(page, `data-f="seats_left">42<`) {
		t.Fatal("the dashboard does not show the refusal, the caps set or the seats left")
	}
	post("/admin/events/show/caps-reset", url.Values{})
	if c := ctl("show"); c.Caps != nil {
		t.Fatalf("caps after reset: %+v", c.Caps)
	}
	post("/admin/events/show/mode", url.Values{"mode": {"threshold"}})
	if r.engine.Mode("show") != admission.ModeThreshold {
		t.Fatalf("mode %s", r.engine.Mode("show"))
	}
	if loc := post("/admin/events/open/mode", url.Values{"mode": {"scheduled"}}); !strings.Contains(loc, "failed=no_on_sale") {
		t.Fatalf("scheduled without an on-sale time: %s", loc)
	}
	if loc := post("/admin/events/show/mode", url.Values{"mode": {"sometimes"}}); !strings.Contains(loc, "failed=mode") {
		t.Fatalf("unknown mode: %s", loc)
	}
	post("/admin/events/show/mode-reset", url.Values{})
	if c := ctl("show"); c.Mode != "" {
		t.Fatalf("mode after reset: %q", c.Mode)
	}
	post("/admin/events/show/sold-out", url.Values{})
	if !ctl("show").SoldOut {
		t.Fatal("not sold out")
	}
	post("/admin/events/show/on-sale", url.Values{})
	if ctl("show").SoldOut {
		t.Fatal("still sold out")
	}
	notice := func() string {
		if n := ctl("show").Notice; n != nil {
			return n.Text
		}
		return ""
	}
	post("/admin/events/show/notice", url.Values{"notice": {"  Doors open at 8.\r\nBring ID.  "}})
	if notice() != "Doors open at 8.\nBring ID." {
		t.Fatalf("notice %q", notice())
	}
	if page := do(t, b, "GET", r.srv.URL+"/admin/", nil).body; !strings.Contains(page, "Doors open at 8.\nBring ID.</textarea>") {
		t.Fatal("the dashboard does not show the notice in its form")
	}
	for _, bad := range []string{strings.Repeat("x", MaxNotice+1), "bell\a"} {
		if loc := post("/admin/events/show/notice", url.Values{"notice": {bad}}); !strings.Contains(loc, "failed=notice") {
			t.Fatalf("bad notice: %s", loc)
		}
	}
	if notice() != "Doors open at 8.\nBring ID." {
		t.Fatalf("a refused notice replaced it: %q", notice())
	}
	if loc := post("/admin/events/show/notice", url.Values{"notice": {"  "}}); !strings.Contains(loc, "done=notice-clear") || ctl("show").Notice != nil {
		t.Fatalf("an empty notice: %s, notice %+v", loc, ctl("show").Notice)
	}
	if loc := post("/admin/events/nope/pause", url.Values{}); !strings.Contains(loc, "failed=unknown") {
		t.Fatalf("unknown event: %s", loc)
	}
	if loc := post("/admin/events/show/close", url.Values{}); !strings.Contains(loc, "failed=action") {
		t.Fatalf("unknown action: %s", loc)
	}
	if c := ctl("show"); c.Closed {
		t.Fatal("an action the console does not offer closed the event")
	}
}

// TestFigures: arrivals per minute come from the history, the queue
// and its change from the lanes, the bot defence's counts from the
// registry; the history keeps an hour.
func TestFigures(t *testing.T) {
	r := newRig(t, false)
	bots := prometheus.NewCounterVec(prometheus.CounterOpts{Name: defenceMetric, Help: "test"}, []string{"event", "action", "applied"})
	r.reg.MustRegister(bots)
	ctx := context.Background()
	join := func(n int) {
		for range n {
			if _, _, err := r.engine.Join(ctx, "show", admission.JoinRequest{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.engine.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	join(0)
	r.c.Sample()
	join(10)
	bots.WithLabelValues("show", "heavy_pow", "heavy_pow").Add(4)
	bots.WithLabelValues("show", "shadow", "light_pow").Add(2) // dry run: counted as applied
	bots.WithLabelValues("open", "block", "block").Add(1)
	r.clk.Add(30 * time.Second)
	r.c.Sample()
	views, _ := r.c.snapshot()
	v := viewOf(t, views, "show")
	if v.ID != "show" || v.Queue != 10 || v.QueueChange != 10 || v.ArrivalsPerMin != 20 {
		t.Fatalf("after 10 joins in 30 s: %+v", v)
	}
	want := map[string]uint64{"light": 2, "heavy": 4}
	for _, b := range v.Bots {
		if b.Total != want[b.Band] || b.LastMinute != 2*want[b.Band] {
			t.Errorf("band %s: %+v, want total %d", b.Band, b, want[b.Band])
		}
	}
	if v.SeatsLeft == nil || *v.SeatsLeft != 42 || v.Caps.MaxActive != 100 || v.CapsOverridden {
		t.Errorf("seats %v, caps %+v", v.SeatsLeft, v.Caps)
	}
	if o := viewOf(t, views, "open"); o.SeatsLeft != nil || o.Bots[4].Total != 1 {
		t.Errorf("open: seats %v (no inventory link), bots %+v", o.SeatsLeft, o.Bots)
	}
	// The controller of the selling event moves its limit down while
	// nobody uses it: the last move is shown with its reason.
	for range 3 {
		r.clk.Add(time.Second)
		if err := r.engine.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	r.c.Sample()
	views, _ = r.c.snapshot()
	o := viewOf(t, views, "open")
	if m := o.LastMove; m == nil || m.From == m.To || m.Why == "" || m.At.After(r.clk.Now()) {
		t.Fatalf("last move %+v (target %d, reason %s)", o.LastMove, o.Target, o.Reason)
	}
	t.Logf("open: target %d, last move %+v", o.Target, *o.LastMove)
	for range 3600 / 60 {
		r.clk.Add(time.Minute)
		r.c.Sample()
	}
	h := r.c.history()["show"]["t"].([]int64)
	if len(h) != 61 || time.UnixMilli(h[len(h)-1]).Sub(time.UnixMilli(h[0])) != History {
		t.Fatalf("history of %d points over %v, want 61 over an hour", len(h), time.UnixMilli(h[len(h)-1]).Sub(time.UnixMilli(h[0])))
	}
}

// TestStream: the stream sends the history, then the figures, and a new
// sample at once after a change made on the page.
func TestStream(t *testing.T) {
	r := newRig(t, false)
	b := r.browser(t)
	tok := r.login(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a guard against a hang, not a measurement
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", r.srv.URL+"/admin/stream", nil)
	res, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	next := func() (string, map[string]json.RawMessage) {
		t.Helper()
		var event string
		for sc.Scan() {
			line := sc.Text()
			if e, ok := strings.CutPrefix(line, "event: "); ok {
				event = e
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				var m map[string]json.RawMessage
				if err := json.Unmarshal([]byte(d), &m); err != nil {
					t.Fatal(err)
				}
				return event, m
			}
		}
		t.Fatalf("stream ended: %v", sc.Err())
		return "", nil
	}
	if e, m := next(); e != "history" || m["history"] == nil {
		t.Fatalf("first event %s", e)
	}
	if e, _ := next(); e != "figures" {
		t.Fatalf("second event %s", e)
	}
	do(t, b, "POST", r.srv.URL+"/admin/events/open/pause", url.Values{"csrf": {tok}}, r.sameOrigin()...)
	e, m := next()
	var views []eventView
	if err := json.Unmarshal(m["events"], &views); err != nil || e != "figures" {
		t.Fatalf("%s: %v", e, err)
	}
	if v := viewOf(t, views, "open"); !v.Paused || v.State != admission.StatePaused {
		t.Fatalf("after pausing: %+v", v)
	}
	r.c.Stop()
	for sc.Scan() {
	}
}

func viewOf(t *testing.T, views []eventView, id string) eventView {
	t.Helper()
	for _, v := range views {
		if v.ID == id {
			return v
		}
	}
	t.Fatalf("no event %s in %+v", id, views)
	return eventView{}
}
