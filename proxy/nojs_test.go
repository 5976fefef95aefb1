package proxy

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/challenge"
)

// formPost posts a no-JS join form from a page of the rig's site.
func (r *rig) formPost(t testing.TB, v *visitor, body string, header ...string) response {
	t.Helper()
	// Defaults, overridden by header; an empty value removes one.
	names := []string{"Content-Type", "Origin", "Referer", "Accept"}
	values := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": r.url,
		"Referer": r.url + "/show/seats?x=1", "Accept": "text/html"}
	for i := 0; i+1 < len(header); i += 2 {
		if _, ok := values[header[i]]; !ok {
			names = append(names, header[i])
		}
		values[header[i]] = header[i+1]
	}
	var h []string
	for _, n := range names {
		if values[n] != "" {
			h = append(h, n, values[n])
		}
	}
	return v.do(t, "POST", r.url+"/_wr/nojs/join", body, h...)
}

func TestNoJSFlow(t *testing.T) {
	r := newRig(t)
	v := newVisitor(t, "Mozilla/5.0 no-js")
	got := r.formPost(t, v, "event=show", "Sec-Fetch-Site", "same-origin")
	if got.status != 303 {
		t.Fatalf("join: %d %s", got.status, got.body)
	}
	status := got.header.Get("Location")
	if status != "/_wr/nojs/status?event=show&return=%2Fshow%2Fseats%3Fx%3D1" {
		t.Fatalf("join redirected to %q", status)
	}
	if v.cookie(r.url, "wr_ticket_show") == "" {
		t.Fatal("no ticket cookie")
	}
	page := v.do(t, "GET", r.url+status, "", "Accept", "text/html", "Accept-Language", "de")
	if page.status != 200 || !strings.Contains(page.body, `<meta http-equiv="refresh" content="`) ||
		!strings.Contains(page.body, "Vorwarteschlange") || strings.Contains(page.body, "<script") ||
		page.header.Get("Content-Security-Policy") == "" || page.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("status page: %d %v\n%s", page.status, page.header, page.body)
	}
	// A second post keeps the place (rejoined).
	if got := r.formPost(t, v, "event=show"); got.status != 303 {
		t.Fatalf("second join: %d %s", got.status, got.body)
	}
	// Past the on-sale the draw places and the controller admits.
	for d := 11 * time.Second; ; d += time.Second {
		if d > 30*time.Second {
			t.Fatal("never admitted")
		}
		r.tick(t, d)
		page = v.do(t, "GET", r.url+status, "", "Accept", "text/html")
		if page.status == 303 {
			break
		}
		if page.status != 200 {
			t.Fatalf("status page: %d %s", page.status, page.body)
		}
	}
	if loc := page.header.Get("Location"); loc != "/show/seats?x=1" {
		t.Fatalf("admitted to %q", loc)
	}
	if v.cookie(r.url, "wr_pass_show") == "" {
		t.Fatal("admitted without a pass cookie")
	}
	if got := v.do(t, "GET", r.url+"/show/seats?x=1", ""); got.body != "origin:/show/seats" {
		t.Fatalf("with the pass: %d %s", got.status, got.body)
	}
	if n := counterValue(t, r.reg, "waitroom_nojs_joins_total", map[string]string{"event": "show", "result": "joined"}); n != 1 {
		t.Fatalf("nojs joins %v, want 1", n)
	}
}

func TestNoJSWaitingPage(t *testing.T) {
	r := newRig(t)
	// Three visitors join before the on-sale; after the draw the one
	// furthest back sees how many are ahead.
	var vs []*visitor
	for i := range 3 {
		v := newVisitor(t, "Mozilla/5.0 no-js "+string(rune('a'+i)))
		if got := r.formPost(t, v, "event=show&return=%2Fshow%2F"); got.status != 303 {
			t.Fatalf("join: %d %s", got.status, got.body)
		}
		vs = append(vs, v)
	}
	r.tick(t, 11*time.Second)
	seen := map[string]bool{}
	for _, v := range vs {
		page := v.do(t, "GET", r.url+"/_wr/nojs/status?event=show&return=%2Fshow%2F", "", "Accept", "text/html")
		switch {
		case page.status == 303:
			seen["admitted"] = true
		case strings.Contains(page.body, "You&#39;re next"):
			seen["next"] = true
		case strings.Contains(page.body, "person ahead of you") || strings.Contains(page.body, "people ahead of you"):
			seen["ahead"] = true
			if !strings.Contains(page.body, "Estimated wait") {
				t.Errorf("no estimate:\n%s", page.body)
			}
		}
	}
	if len(seen) == 0 {
		t.Fatal("no visitor saw a position or an admission")
	}
}

func TestNoJSCrossSite(t *testing.T) {
	r := newRig(t)
	for _, c := range []struct {
		name   string
		header []string
		want   int
	}{
		{"same origin", nil, 303},
		{"referer only", []string{"Origin", ""}, 303},
		{"no origin, no referer", []string{"Origin", "", "Referer", ""}, 403},
		{"another site", []string{"Origin", "https://evil.example"}, 403},
		{"another port", []string{"Origin", "http://127.0.0.1:1"}, 403},
		{"null origin", []string{"Origin", "null"}, 403},
		{"cross-site fetch", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"same-site sibling", []string{"Sec-Fetch-Site", "same-site"}, 403},
		{"evil referer", []string{"Origin", "", "Referer", "https://evil.example/show/"}, 403},
		{"userinfo trick", []string{"Origin", "", "Referer", "http://" + strings.TrimPrefix(r.url, "http://") + "@evil.example/"}, 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newVisitor(t, "ua")
			got := r.formPost(t, v, "event=show", c.header...)
			if got.status != c.want {
				t.Fatalf("%d, want %d: %s", got.status, c.want, got.body)
			}
			if c.want == 403 && (!strings.Contains(got.body, `"error":"cross_site"`) || v.cookie(r.url, "wr_ticket_show") != "") {
				t.Fatalf("refused post: %s, cookie %q", got.body, v.cookie(r.url, "wr_ticket_show"))
			}
		})
	}
}

// The attack table of the form: each bad shape, its status, and that no
// ticket was issued.
func TestNoJSBadForms(t *testing.T) {
	r := newRig(t)
	for _, c := range []struct {
		name, body string
		header     []string
		want       int
	}{
		{"json", `{"event":"show"}`, []string{"Content-Type", "application/json"}, 415},
		{"multipart", "event=show", []string{"Content-Type", "multipart/form-data; boundary=x"}, 415},
		{"type prefix", "event=show", []string{"Content-Type", "application/x-www-form-urlencodedx"}, 415},
		{"too large", "event=show&return=/" + strings.Repeat("a", maxNoJSForm), nil, 413},
		{"unknown field", "event=show&lane=vip", nil, 400},
		{"twice", "event=show&event=other", nil, 400},
		{"twice, escaped name", "event=show&%65vent=other", nil, 400},
		{"no event", "return=%2F", nil, 400},
		{"empty", "", nil, 400},
		{"no =", "event", nil, 400},
		{"trailing &", "event=show&", nil, 400},
		{"empty pair", "event=show&&return=%2F", nil, 400},
		{"bad escape", "event=sh%zzow", nil, 400},
		{"short escape", "event=show%2", nil, 400},
		{"control character", "event=show&return=%2F%0d%0aSet-Cookie:x", nil, 400},
		{"raw space", "event=show&return=/ x", nil, 400},
		{"invalid utf-8", "event=show&return=%2F%ff", nil, 400},
		{"C1 control", "event=show&return=%2F%c2%85", nil, 400},
		{"long return", "event=show&return=/" + strings.Repeat("a", 2100), nil, 400},
		{"unknown event", "event=nope", nil, 404},
		{"charset parameter", "event=show", []string{"Content-Type", "application/x-www-form-urlencoded; charset=UTF-8"}, 303},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := newVisitor(t, "ua")
			got := r.formPost(t, v, c.body, c.header...)
			if got.status != c.want {
				t.Fatalf("%d, want %d: %s", got.status, c.want, got.body)
			}
			if c.want != 303 {
				if !strings.HasPrefix(got.body, `{"error":"`) || v.cookie(r.url, "wr_ticket_show") != "" {
					t.Fatalf("refusal %s, cookie %q", got.body, v.cookie(r.url, "wr_ticket_show"))
				}
			}
		})
	}
	if got := newVisitor(t, "ua").do(t, "GET", r.url+"/_wr/nojs/join", ""); got.status != 405 {
		t.Fatalf("GET join: %d", got.status)
	}
	if got := newVisitor(t, "ua").do(t, "POST", r.url+"/_wr/nojs/status?event=show", "x"); got.status != 405 {
		t.Fatalf("POST status: %d", got.status)
	}
	if got := newVisitor(t, "ua").do(t, "GET", r.url+"/_wr/nojs/other", ""); got.status != 404 {
		t.Fatalf("unknown no-js path: %d", got.status)
	}
	if got := newVisitor(t, "ua").do(t, "GET", r.url+"/_wr/nojs/status?event=nope", ""); got.status != 404 {
		t.Fatalf("unknown event: %d", got.status)
	}
}

func TestNoJSOpenRedirect(t *testing.T) {
	for _, ret := range []string{"//evil.example/x", "https://evil.example/", "/\\evil.example", "javascript:alert(1)",
		"/%2F%2Fevil", "/%5Cevil", "/_wr/nojs/status?event=show", "/_WR/api/status"} {
		t.Run(ret, func(t *testing.T) {
			r := newRig(t)
			v := newVisitor(t, "ua")
			got := r.formPost(t, v, "event=show&return="+url.QueryEscape(ret))
			if loc := got.header.Get("Location"); got.status != 303 || loc != "/_wr/nojs/status?event=show&return=%2Fshow%2F" {
				t.Fatalf("join: %d to %q", got.status, loc)
			}
			// A status URL made by hand with a bad return is just as safe.
			for d := 11 * time.Second; d < 30*time.Second; d += time.Second {
				r.tick(t, d)
				page := v.do(t, "GET", r.url+"/_wr/nojs/status?event=show&return="+url.QueryEscape(ret), "")
				if page.status == 303 {
					if loc := page.header.Get("Location"); loc != "/show/" {
						t.Fatalf("admitted to %q", loc)
					}
					return
				}
			}
			t.Fatal("never admitted")
		})
	}
}

func TestNoJSNoTicket(t *testing.T) {
	r := newRig(t)
	v := newVisitor(t, "ua")
	page := v.do(t, "GET", r.url+"/_wr/nojs/status?event=show&return=%2Fshow%2Fa", "", "Accept", "text/html")
	if page.status != 401 || !strings.Contains(page.body, `<form id="wr-nojs-join" method="post" action="/_wr/nojs/join">`) ||
		!strings.Contains(page.body, `name="return" value="/show/a"`) || strings.Contains(page.body, "http-equiv") {
		t.Fatalf("no ticket: %d\n%s", page.status, page.body)
	}
	if got := v.do(t, "GET", r.url+"/_wr/nojs/status?event=show", "", "Accept", "application/json"); got.status != 401 ||
		!strings.Contains(got.body, `"error":"no_ticket"`) {
		t.Fatalf("no ticket, JSON: %d %s", got.status, got.body)
	}
	// A join that found the queue not yet open says so in the status URL:
	// the page reloads and keeps the form.
	r.clk.Set(t0.Add(-2 * time.Hour)) // "show" opens at t0-1h
	page = v.do(t, "GET", r.url+"/_wr/nojs/status?event=show&return=%2Fshow%2F&outcome=scheduled", "", "Accept", "text/html")
	if page.status != 200 || !strings.Contains(page.body, "The queue opens at 2026-12-01 09:00 UTC") ||
		!strings.Contains(page.body, `content="30"`) || !strings.Contains(page.body, "<form") {
		t.Fatalf("scheduled page: %d\n%s", page.status, page.body)
	}
	// Once it has opened, the reloaded page says so and stops reloading.
	r.clk.Set(t0)
	page = v.do(t, "GET", r.url+"/_wr/nojs/status?event=show&return=%2Fshow%2F&outcome=scheduled", "", "Accept", "text/html")
	if page.status != 200 || !strings.Contains(page.body, "The queue is open") || strings.Contains(page.body, "http-equiv") ||
		!strings.Contains(page.body, "<form") {
		t.Fatalf("opened page: %d\n%s", page.status, page.body)
	}
	// Any other outcome is the join page.
	if page = v.do(t, "GET", r.url+"/_wr/nojs/status?event=show&outcome=<b>", "", "Accept", "text/html"); page.status != 401 {
		t.Fatalf("made-up outcome: %d", page.status)
	}
}

func TestNoJSScriptsRequired(t *testing.T) {
	r := newRig(t, withDefence(t, challenge.Bands{}))
	v := newVisitor(t, "ua")
	got := r.formPost(t, v, "event=show")
	if got.status != 403 || !strings.Contains(got.body, "JavaScript is needed") || strings.Contains(got.body, "<form") ||
		v.cookie(r.url, "wr_ticket_show") != "" {
		t.Fatalf("join of an event with a challenge: %d %s", got.status, got.body)
	}
	got = r.formPost(t, v, "event=show", "Accept", "application/json")
	if got.status != 403 || !strings.Contains(got.body, `"error":"scripts_required"`) {
		t.Fatalf("JSON: %d %s", got.status, got.body)
	}
	if page := v.do(t, "GET", r.url+"/_wr/nojs/status?event=show", "", "Accept", "text/html"); page.status != 403 ||
		strings.Contains(page.body, "<form") {
		t.Fatalf("status page: %d %s", page.status, page.body)
	}
	if n := counterValue(t, r.reg, "waitroom_nojs_joins_total", map[string]string{"event": "show", "result": "scripts_required"}); n != 2 {
		t.Fatalf("scripts_required %v, want 2", n)
	}
}

func TestNoJSRateLimited(t *testing.T) {
	r := newRig(t, withLimiter(0.001, 1))
	v := newVisitor(t, "ua")
	if got := r.formPost(t, v, "event=show"); got.status != 303 {
		t.Fatalf("first join: %d %s", got.status, got.body)
	}
	got := v.do(t, "GET", r.url+"/_wr/nojs/status?event=show", "", "Accept", "text/html")
	if got.status != 429 || got.header.Get("Retry-After") == "" || !strings.Contains(got.body, "Too many requests") ||
		!strings.Contains(got.body, `<meta http-equiv="refresh" content="`) {
		t.Fatalf("rate limited: %d %v\n%s", got.status, got.header, got.body)
	}
}

func TestParseNoJSForm(t *testing.T) {
	f, err := parseNoJSForm([]byte("event=summer-2027&return=%2Fevents%2Fa%3Fx%3D1+2"))
	if err != nil || f.Event != "summer-2027" || f.Return != "/events/a?x=1 2" {
		t.Fatalf("%+v %v", f, err)
	}
	if f, err := parseNoJSForm([]byte("return=&event=e")); err != nil || f.Return != "" || f.Event != "e" {
		t.Fatalf("%+v %v", f, err)
	}
}
