package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

type statusJSON struct {
	Event           string  `json:"event"`
	Status          string  `json:"status"`
	Position        *int64  `json:"position"`
	PositionDisplay string  `json:"position_display"`
	ETASeconds      int     `json:"eta_seconds"`
	ETALow          int     `json:"eta_low"`
	ETAHigh         int     `json:"eta_high"`
	Refresh         float64 `json:"refresh_seconds"`
	OpensAt         string  `json:"opens_at"`
	OnSaleAt        string  `json:"on_sale_at"`
	DrawAt          string  `json:"draw_at"`
	Redirect        *string `json:"redirect"`
	Lane            string  `json:"lane"`
	Tranche         *int    `json:"tranche"`
	Audit           string  `json:"audit"`
	DrawPage        string  `json:"draw_page"`
	TrancheSeconds  float64 `json:"tranche_seconds"`
	Visitor         string  `json:"visitor"`
	Reason          string  `json:"reason"`
	Notice          *struct {
		Text  string            `json:"text"`
		Texts map[string]string `json:"texts"`
	} `json:"notice"`
}

func decodeStatus(t testing.TB, r response) statusJSON {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var s statusJSON
	d := json.NewDecoder(strings.NewReader(r.body))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	return s
}

// admit walks a visitor from join to admission and returns them.
func (r *rig) admit(t testing.TB, ua string) *visitor {
	t.Helper()
	v := newVisitor(t, ua)
	st := decodeStatus(t, v.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show","return":"/show/seats?x=1"}`))
	if st.Status != "prequeue" {
		t.Fatalf("join before the on-sale: %+v", st)
	}
	for d := 11 * time.Second; d < 20*time.Second; d += time.Second {
		r.tick(t, d)
		st = decodeStatus(t, v.do(t, "GET", r.url+"/_wr/api/status?event=show&return=/show/seats%3Fx%3D1", ""))
		if st.Status == "admitted" {
			return v
		}
	}
	t.Fatalf("never admitted: %+v", st)
	return nil
}

func TestGateFlow(t *testing.T) {
	r := newRig(t)
	v := newVisitor(t, "Mozilla/5.0 test")

	// No pass: the waiting-room page, or for scripts the status JSON.
	page := v.do(t, "GET", r.url+"/show/seats", "")
	if page.status != 200 || !strings.Contains(page.body, "The Show") || page.header.Get("Cache-Control") != "no-store" ||
		page.header.Get("Content-Security-Policy") == "" {
		t.Fatalf("room page: %d %v %.200s", page.status, page.header, page.body)
	}
	if r.origin.count() != 0 {
		t.Fatal("a request without a pass reached the origin")
	}
	if js := v.do(t, "GET", r.url+"/show/seats", "", "Accept", "application/json"); js.status != 401 ||
		!strings.Contains(js.body, `"error":"no_ticket"`) {
		t.Fatalf("JSON without a ticket: %d %s", js.status, js.body)
	}

	// Join: a ticket cookie and the status.
	join := v.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show","return":"/show/seats?x=1"}`)
	st := decodeStatus(t, join)
	if st.Status != "prequeue" || st.Position != nil || st.DrawAt == "" || st.Tranche == nil || *st.Tranche != 0 ||
		st.Audit != "/_wr/api/draws/show/0" || st.OnSaleAt != "2026-12-01T10:00:10Z" || st.Redirect != nil {
		t.Fatalf("join: %+v", st)
	}
	ticket := v.cookie(r.url, "wr_ticket_show")
	if ticket == "" {
		t.Fatal("no ticket cookie")
	}
	sc := join.header.Get("Set-Cookie")
	for _, attr := range []string{"HttpOnly", "SameSite=Lax", "Path=/"} {
		if !strings.Contains(strings.ToLower(sc), strings.ToLower(attr)) {
			t.Errorf("ticket cookie %q lacks %s", sc, attr)
		}
	}
	if strings.Contains(sc, "Secure") {
		t.Errorf("ticket cookie over plain HTTP is Secure: %q", sc)
	}
	// Joining again keeps the place.
	again := decodeStatus(t, v.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`))
	if again.Status != "prequeue" || v.cookie(r.url, "wr_ticket_show") != ticket {
		t.Fatalf("rejoin changed the ticket: %+v", again)
	}

	// The draw and admission.
	var adm statusJSON
	for d := 11 * time.Second; d < 20*time.Second && adm.Status != "admitted"; d += time.Second {
		r.tick(t, d)
		adm = decodeStatus(t, v.do(t, "GET", r.url+"/_wr/api/status?event=show&return=/show/seats%3Fx%3D1", ""))
	}
	if adm.Status != "admitted" || adm.Redirect == nil || *adm.Redirect != "/show/seats?x=1" || *adm.Position != 0 {
		t.Fatalf("admitted status: %+v", adm)
	}
	pass := v.cookie(r.url, "wr_pass_show")
	if pass == "" {
		t.Fatal("admitted without a pass cookie")
	}

	// With the pass the origin serves, told who the visitor is; the
	// client cannot set those headers, and waitroom's cookies stay here.
	got := v.do(t, "GET", r.url+"/show/seats", "", "X-Waitroom-Visitor", "forged", "X-Waitroom-Event", "forged",
		"Cookie", "theme=dark")
	if got.status != 200 || got.body != "origin:/show/seats" {
		t.Fatalf("with a pass: %d %s", got.status, got.body)
	}
	seen := r.origin.last(t)
	p, err := r.keys.VerifyPass(pass, "show", v.bindingFor(t), r.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if seen.visitor != p.Visitor.String() || seen.event != "show" {
		t.Fatalf("origin saw visitor %q event %q, want %q show", seen.visitor, seen.event, p.Visitor)
	}
	if strings.Contains(seen.cookie, "wr_pass") || strings.Contains(seen.cookie, "wr_ticket") || !strings.Contains(seen.cookie, "theme=dark") {
		t.Fatalf("origin saw cookies %q", seen.cookie)
	}
	if seen.xff != "127.0.0.1" {
		t.Fatalf("origin saw X-Forwarded-For %q", seen.xff)
	}

	// The pass is for this event only, and for this device only.
	if o := v.do(t, "GET", r.url+"/other/x", ""); o.status != 200 || r.origin.last(t).path == "/other/x" {
		t.Fatal("a pass for show opened other")
	}
	thief := newVisitor(t, "curl/8")
	if s := thief.do(t, "GET", r.url+"/show/seats", "", "Cookie", "wr_pass_show="+pass); s.body == "origin:/show/seats" {
		t.Fatal("a pass copied to another User-Agent was accepted")
	}
}

// bindingFor is the binding hash the proxy computes for this visitor.
func (v *visitor) bindingFor(t testing.TB) string {
	h := Binding{UserAgent: true}.compute([]byte(v.ua), netipLoopback, &tlsStack{})
	return h.String()
}

func TestBadPasses(t *testing.T) {
	r := newRig(t)
	ua := "Mozilla/5.0 test"
	bh := Binding{UserAgent: true}.compute([]byte(ua), netipLoopback, &tlsStack{})
	other, err := admission.NewKeyring(admission.Key{ID: "k1", Alg: "HS256", Secret: []byte("another-secret-another-secret-xx")})
	if err != nil {
		t.Fatal(err)
	}
	base := admission.Pass{ID: admission.NewPassID(), Event: "show", Visitor: admission.NewVisitorID(), Lane: "public",
		Number: 1, Binding: bh.String(), IssuedAt: t0, ExpiresAt: t0.Add(10 * time.Minute)}
	sign := func(k *admission.Keyring, p admission.Pass) string {
		s, err := k.SignPass(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	good := sign(r.keys, base)
	expired := base
	expired.ID, expired.IssuedAt, expired.ExpiresAt = admission.NewPassID(), t0.Add(-time.Hour), t0.Add(-time.Minute)
	wrongEvent := base
	wrongEvent.ID, wrongEvent.Event = admission.NewPassID(), "other"
	unbound := base
	unbound.ID, unbound.Binding = admission.NewPassID(), ""
	cases := []struct {
		name, cookie string
		ok           bool
	}{
		{"valid", good, true},
		{"other key", sign(other, base), false},
		{"expired", sign(r.keys, expired), false},
		{"other event", sign(r.keys, wrongEvent), false},
		{"no binding", sign(r.keys, unbound), false},
		{"garbage", "not.a.jwt", false},
		{"truncated", good[:len(good)-3], false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := newVisitor(t, ua)
			for range 2 { // the second time from the cache
				got := v.do(t, "GET", r.url+"/show/x", "", "Cookie", "wr_pass_show="+c.cookie)
				if (got.body == "origin:/show/x") != c.ok {
					t.Fatalf("accepted = %v, want %v (%d %.80s)", !c.ok, c.ok, got.status, got.body)
				}
			}
		})
	}
	// A revoked pass is refused at once, even from the cache.
	if err := r.engine.Revoke(t.Context(), "show", base.ID, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	v := newVisitor(t, ua)
	if got := v.do(t, "GET", r.url+"/show/x", "", "Cookie", "wr_pass_show="+good); got.body == "origin:/show/x" {
		t.Fatal("a revoked pass was accepted")
	}
	// And one that expires while cached stops working.
	r2 := newRig(t)
	tok := sign(r2.keys, base)
	if got := v.do(t, "GET", r2.url+"/show/x", "", "Cookie", "wr_pass_show="+tok); got.body != "origin:/show/x" {
		t.Fatalf("valid pass refused: %s", got.body)
	}
	r2.clk.Set(base.ExpiresAt)
	if got := v.do(t, "GET", r2.url+"/show/x", "", "Cookie", "wr_pass_show="+tok); got.body == "origin:/show/x" {
		t.Fatal("a cached pass was accepted after its expiry")
	}
}

func TestRouteActions(t *testing.T) {
	r := newRig(t)
	v := newVisitor(t, "ua")
	// block: 403, JSON for scripts, a page for browsers.
	if got := v.do(t, "POST", r.url+"/checkout/1", "x", "Accept", "application/json"); got.status != 403 ||
		!strings.Contains(got.body, `"pass_required"`) {
		t.Fatalf("block JSON: %d %s", got.status, got.body)
	}
	if got := v.do(t, "GET", r.url+"/checkout/1", ""); got.status != 403 || !strings.Contains(got.header.Get("Content-Type"), "text/html") {
		t.Fatalf("block page: %d %v", got.status, got.header)
	}
	// pass routes and unmatched paths go straight to the origin, with no
	// visitor headers.
	for _, p := range []string{"/static/app.js", "/", "/about"} {
		if got := v.do(t, "GET", r.url+p, ""); got.body != "origin:"+p {
			t.Fatalf("%s: %d %s", p, got.status, got.body)
		}
		if s := r.origin.last(t); s.visitor != "" || s.event != "" {
			t.Fatalf("%s forwarded with visitor headers %+v", p, s)
		}
	}
	if r.origin.count() != 3 {
		t.Fatalf("origin saw %d requests, want 3", r.origin.count())
	}
}

func TestBypass(t *testing.T) {
	t.Run("cidr", func(t *testing.T) {
		r := newRig(t, withBypass([]string{"127.0.0.0/8"}, ""))
		if got := newVisitor(t, "ua").do(t, "GET", r.url+"/show/x", ""); got.body != "origin:/show/x" {
			t.Fatalf("bypass CIDR: %d %s", got.status, got.body)
		}
	})
	t.Run("header", func(t *testing.T) {
		r := newRig(t, withBypass([]string{"10.0.0.0/8"}, "s3cret-bypass-value"))
		v := newVisitor(t, "ua")
		if got := v.do(t, "GET", r.url+"/show/x", "", "X-Waitroom-Bypass", "s3cret-bypass-value"); got.body != "origin:/show/x" {
			t.Fatalf("bypass header: %d %s", got.status, got.body)
		}
		if s := r.origin.last(t); s.bypass != "" {
			t.Fatalf("the bypass secret reached the origin: %q", s.bypass)
		}
		if got := v.do(t, "GET", r.url+"/show/x", "", "X-Waitroom-Bypass", "s3cret-bypass-valuX"); got.body == "origin:/show/x" {
			t.Fatal("a wrong bypass secret passed")
		}
		if n := counterValue(t, r.reg, "waitroom_bypass_total", map[string]string{"via": "header"}); n != 1 {
			t.Fatalf("bypass counted %v times, want 1", n)
		}
	})
}

func TestOpenRedirect(t *testing.T) {
	for _, ret := range []string{"//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)", "%2F%2Fevil", ""} {
		t.Run(ret, func(t *testing.T) {
			r := newRig(t)
			v := newVisitor(t, "ua")
			body, _ := json.Marshal(map[string]string{"event": "show", "return": ret})
			decodeStatus(t, v.do(t, "POST", r.url+"/_wr/api/join", string(body)))
			var st statusJSON
			for d := 11 * time.Second; d < 20*time.Second && st.Status != "admitted"; d += time.Second {
				r.tick(t, d)
				st = decodeStatus(t, v.do(t, "GET", r.url+"/_wr/api/status?event=show&return="+url.QueryEscape(ret), ""))
			}
			if st.Redirect == nil || *st.Redirect != "/show/" {
				t.Fatalf("return %q redirected to %v", ret, st.Redirect)
			}
		})
	}
}

func TestDrawAudit(t *testing.T) {
	r := newRig(t)
	v := r.admit(t, "ua")
	tok := v.cookie(r.url, "wr_ticket_show")
	bh := Binding{UserAgent: true}.compute([]byte("ua"), netipLoopback, &tlsStack{})
	tk, err := r.keys.VerifyTicket(tok, "show", bh.String(), r.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	got := v.do(t, "GET", r.url+"/_wr/api/draws/show/0", "")
	var a struct {
		Event, Lane, Commitment, Seed string
		Tranche                       int
		Drawn                         bool
		First, Count                  uint64
		Hashes                        []string
	}
	if err := json.Unmarshal([]byte(got.body), &a); err != nil || got.status != 200 {
		t.Fatalf("%d %s %v", got.status, got.body, err)
	}
	seed, _ := hex.DecodeString(a.Seed)
	sum := sha256.Sum256(seed)
	if !a.Drawn || a.Count != 1 || hex.EncodeToString(sum[:]) != a.Commitment || len(a.Hashes) != 1 {
		t.Fatalf("audit %+v", a)
	}
	vh := admission.VisitorHash(tk.Visitor)
	if a.Hashes[0] != hex.EncodeToString(vh[:]) {
		t.Fatalf("the audit does not list the visitor's hash")
	}
	for path, want := range map[string]int{"/_wr/api/draws/show/99": 404, "/_wr/api/draws/nope/0": 404,
		"/_wr/api/draws/show/x": 400, "/_wr/api/draws/show/0?limit=99999": 400} {
		if got := v.do(t, "GET", r.url+path, ""); got.status != want || !strings.Contains(got.body, `"error"`) {
			t.Errorf("%s: %d %s, want %d", path, got.status, got.body, want)
		}
	}
}

func TestApproximate(t *testing.T) {
	for n, want := range map[int64]int64{0: 0, 7: 7, 10: 10, 14: 10, 15: 20, 99: 100, 123: 100, 149: 150, 4812: 4800,
		4850: 4900, 12345: 12000, 48_120: 48000, 1_234_567: 1_200_000} {
		if got := approximate(n); got != want {
			t.Errorf("approximate(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	for ae, want := range map[string]bool{"gzip": true, "gzip, deflate, br": true, "br;q=1, gzip;q=0.5": true,
		"gzip;q=0": false, "gzip; q=0.000": false, "*": true, "deflate": false, "": false, "GZIP": true, "xgzip": false} {
		if got := acceptsGzip([]byte(ae)); got != want {
			t.Errorf("acceptsGzip(%q) = %v", ae, got)
		}
	}
}
