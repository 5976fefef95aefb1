package proxy

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/challenge"

	"github.com/waitroom/waitroom/proxy/upstream"
)

// Every bad request gets a JSON error with a fitting status and a code,
// changes nothing, and shows no internal text.
func TestAPIErrors(t *testing.T) {
	r := newRig(t)
	cases := []struct {
		name, method, path, body, ctype string
		status                          int
		code                            string
	}{
		{"status unknown event", "GET", "/_wr/api/status?event=nope", "", "", 404, "unknown_event"},
		{"status no event", "GET", "/_wr/api/status", "", "", 404, "unknown_event"},
		{"status POST", "POST", "/_wr/api/status?event=show", "{}", "application/json", 405, "method_not_allowed"},
		{"join GET", "GET", "/_wr/api/join", "", "", 405, "method_not_allowed"},
		{"join form", "POST", "/_wr/api/join", "event=show", "application/x-www-form-urlencoded", 415, "unsupported_media_type"},
		{"join not json", "POST", "/_wr/api/join", "{event", "application/json", 400, "bad_request"},
		{"join array", "POST", "/_wr/api/join", `["show"]`, "application/json", 400, "bad_request"},
		{"join unknown field", "POST", "/_wr/api/join", `{"event":"show","admin":true}`, "application/json", 400, "bad_request"},
		{"join two objects", "POST", "/_wr/api/join", `{"event":"show"}{}`, "application/json", 400, "bad_request"},
		{"join no event", "POST", "/_wr/api/join", `{"return":"/"}`, "application/json", 400, "bad_request"},
		{"join wrong type", "POST", "/_wr/api/join", `{"event":7}`, "application/json", 400, "bad_request"},
		{"join pow not object", "POST", "/_wr/api/join", `{"event":"show","pow":"x"}`, "application/json", 400, "bad_request"},
		{"join unknown event", "POST", "/_wr/api/join", `{"event":"nope"}`, "application/json", 404, "unknown_event"},
		{"join duplicate field", "POST", "/_wr/api/join", `{"event":"show","event":"other"}`, "application/json", 400, "bad_request"},
		{"join field in other case", "POST", "/_wr/api/join", `{"Event":"show"}`, "application/json", 400, "bad_request"},
		{"join escaped field name", "POST", "/_wr/api/join", `{"\u0065vent":"show"}`, "application/json", 400, "bad_request"},
		{"join trailing data", "POST", "/_wr/api/join", `{"event":"show"} x`, "application/json", 400, "bad_request"},
		{"join unknown pow field", "POST", "/_wr/api/join", `{"event":"show","pow":{"token":"t","nonces":[1],"extra":1}}`, "application/json", 400, "bad_request"},
		{"join duplicate pow field", "POST", "/_wr/api/join", `{"event":"show","pow":{"token":"t","token":"u"}}`, "application/json", 400, "bad_request"},
		{"join nonce fraction", "POST", "/_wr/api/join", `{"event":"show","pow":{"token":"t","nonces":[1.5]}}`, "application/json", 400, "bad_request"},
		{"join unknown lane", "POST", "/_wr/api/join", `{"event":"show","lane":"vip"}`, "application/json", 400, "unknown_lane"},
		{"join too large", "POST", "/_wr/api/join", `{"event":"show","captcha":"` + strings.Repeat("x", 9000) + `"}`, "application/json", 413, "too_large"},
		{"unknown api", "GET", "/_wr/api/nope", "", "", 404, "not_found"},
		{"unknown own path", "GET", "/_wr/nope", "", "", 404, "not_found"},
		{"unknown asset", "GET", "/_wr/static/nope.js", "", "", 404, "not_found"},
		{"jwks POST", "POST", "/_wr/jwks.json", "x", "text/plain", 405, "method_not_allowed"},
	}
	v := newVisitor(t, "ua")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := []string{}
			if c.ctype != "" {
				h = append(h, "Content-Type", c.ctype)
			}
			req, _ := http.NewRequest(c.method, r.url+c.path, strings.NewReader(c.body))
			for i := 0; i < len(h); i += 2 {
				req.Header.Set(h[i], h[i+1])
			}
			resp, err := v.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct{ Error, Message string }
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			if resp.StatusCode != c.status || e.Error != c.code || e.Message == "" {
				t.Fatalf("got %d %+v, want %d %s", resp.StatusCode, e, c.status, c.code)
			}
			if strings.Contains(e.Message, "json:") || strings.Contains(e.Message, "admission:") {
				t.Fatalf("internal text in %q", e.Message)
			}
			if resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
			}
		})
	}
	if v.cookie(r.url, "wr_ticket_show") != "" {
		t.Fatal("a refused join set a ticket")
	}
	if f := r.engine.Figures("show"); f.Lanes["public"].Undrawn != 0 {
		t.Fatalf("refused joins queued someone: %+v", f.Lanes)
	}
}

func TestJoinStates(t *testing.T) {
	r := newRig(t)
	v := newVisitor(t, "ua")
	// Before the queue opens: scheduled, no ticket.
	r.clk.Set(t0.Add(-2 * time.Hour))
	st := decodeStatus(t, v.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`))
	if st.Status != "scheduled" || st.OpensAt != "2026-12-01T09:00:00Z" || st.Refresh < 1 || v.cookie(r.url, "wr_ticket_show") != "" {
		t.Fatalf("scheduled join: %+v", st)
	}
	// Closed by an operator: closed, no ticket.
	r.clk.Set(t0)
	if _, err := r.engine.UpdateControl(t.Context(), "show", func(c *admission.Control) { c.Closed = true }); err != nil {
		t.Fatal(err)
	}
	st = decodeStatus(t, v.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`))
	if st.Status != "closed" || st.Reason != "closed" || v.cookie(r.url, "wr_ticket_show") != "" {
		t.Fatalf("closed join: %+v", st)
	}
}

func TestRateLimit(t *testing.T) {
	r := newRig(t, withLimiter(0.001, 3))
	v := newVisitor(t, "ua")
	for i := range 3 {
		if got := v.do(t, "GET", r.url+"/_wr/api/status?event=show", ""); got.status != 401 {
			t.Fatalf("request %d: %d", i, got.status)
		}
	}
	got := v.do(t, "GET", r.url+"/_wr/api/status?event=show", "")
	if got.status != 429 || !strings.Contains(got.body, `"rate_limited"`) || got.header.Get("Retry-After") == "" {
		t.Fatalf("4th request: %d %v %s", got.status, got.header, got.body)
	}
	// Only the API is limited: the gate and the page are not.
	if got := v.do(t, "GET", r.url+"/show/x", ""); got.status != 200 {
		t.Fatalf("page under the API limit: %d", got.status)
	}
}

// TestAuthRequestHeaders: the original URI and method come from nginx's,
// Traefik's or Caddy's headers; when several are sent they must agree.
func TestAuthRequestHeaders(t *testing.T) {
	r := newRig(t)
	anon := newVisitor(t, "ua")
	cases := []struct {
		name    string
		headers []string
		status  int
	}{
		{"traefik", []string{"X-Forwarded-Uri", "/static/a.css", "X-Forwarded-Method", "GET"}, 204},
		{"traefik gated", []string{"X-Forwarded-Uri", "/show/x", "X-Forwarded-Method", "GET"}, 401},
		{"both agree", []string{"X-Original-URI", "/static/a.css", "X-Forwarded-Uri", "/static/a.css"}, 204},
		{"client adds a pass path", []string{"X-Original-URI", "/static/a.css", "X-Forwarded-Uri", "/show/x"}, 401},
		{"client adds a pass path first", []string{"X-Forwarded-Uri", "/static/a.css", "X-Original-URI", "/show/x"}, 401},
		{"uri twice", []string{"X-Original-URI", "/static/a.css", "X-Original-URI", "/show/x"}, 401},
		{"trace", []string{"X-Original-URI", "/static/a.css", "X-Original-Method", "TRACE"}, 403},
		{"connect", []string{"X-Forwarded-Uri", "/static/a.css", "X-Forwarded-Method", "CONNECT"}, 403},
		{"methods disagree", []string{"X-Original-URI", "/static/a.css", "X-Original-Method", "GET", "X-Forwarded-Method", "TRACE"}, 401},
		{"reserved prefix", []string{"X-Original-URI", "/_WR/api/status"}, 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := anon.do(t, "GET", r.url+"/_wr/auth", "", c.headers...)
			if got.status != c.status {
				t.Fatalf("got %d %s, want %d", got.status, got.body, c.status)
			}
		})
	}
}

func TestAuthRequest(t *testing.T) {
	r := newRig(t)
	v := r.admit(t, "ua")
	pass := v.cookie(r.url, "wr_pass_show")
	anon := newVisitor(t, "ua")
	cases := []struct {
		name, uri, cookie string
		status            int
	}{
		{"pass route", "/static/a.css", "", 204},
		{"unmatched", "/about", "", 204},
		{"queue without pass", "/show/seats?x=1", "", 401},
		{"block without pass", "/checkout/1", "", 403},
		{"queue with pass", "/show/seats", "wr_pass_show=" + pass, 204},
		{"block with pass", "/checkout/1", "wr_pass_show=" + pass, 204},
		{"other event", "/other/x", "wr_pass_show=" + pass, 401},
		{"normalised path", "/static/../show/x", "", 401},
		{"no uri", "", "", 401},
		{"absolute uri", "http://x/show", "", 401},
		{"absolute pass uri", "http://x/static/a.css", "", 204},
		{"double slash", "//show/seats", "", 401},
		{"case", "/SHOW/seats", "", 401},
		{"trailing dot", "/show./seats", "", 401},
		{"fragment", "/static/a.css#/show", "", 401},
		{"encoded slash", "/static%2F..%2Fshow", "", 401},
		{"parameter", "/static;/../show", "", 401},
		// The site reads the original target, not waitroom's normalised
		// one: a target normalising would change is refused.
		{"network-path", "//0/show", "", 401},
		{"double slash then dot-dot", "/show//../static/a.css", "", 401},
		{"dot-dot out of a gated path", "/show/../static/a.css", "", 401},
		{"encoded unreserved", "/%73tatic/a.css", "", 401},
		{"lower-case hex", "/static/%c3%a9", "", 401},
		{"not normalised even with a pass", "/show/./seats", "wr_pass_show=" + pass, 401},
		{"normalised with a query", "/static/a.css?x=/../show", "", 204},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := []string{"X-Original-URI", c.uri}
			if c.cookie != "" {
				h = append(h, "Cookie", c.cookie)
			}
			got := anon.do(t, "GET", r.url+"/_wr/auth", "", h...)
			if got.status != c.status {
				t.Fatalf("got %d %s, want %d", got.status, got.body, c.status)
			}
			if c.status == 204 && c.cookie != "" && got.header.Get("X-Waitroom-Visitor") == "" {
				t.Fatal("204 without X-Waitroom-Visitor")
			}
		})
	}
}

func TestShedding(t *testing.T) {
	r := newRig(t)
	release := make(chan struct{})
	r.origin.mu.Lock()
	r.origin.handler = func(ctx *fasthttp.RequestCtx) {
		<-release
		ctx.WriteString("slow")
	}
	r.origin.mu.Unlock()
	o, err := upstream.New(upstream.Config{Name: "tiny", Addrs: []string{r.origin.addr}, MaxInFlight: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	r.p.fallback.origin = o // the fallback route goes to the one-request origin
	done := make(chan response)
	go func() { done <- newVisitor(t, "ua").do(t, "GET", r.url+"/slow", "") }()
	for o.InFlight() == 0 {
		time.Sleep(time.Millisecond)
	}
	got := newVisitor(t, "ua").do(t, "GET", r.url+"/slow", "")
	if got.status != 503 || got.header.Get("Retry-After") == "" || !strings.Contains(got.header.Get("Content-Type"), "text/html") {
		t.Fatalf("beyond the in-flight limit: %d %v", got.status, got.header)
	}
	js := newVisitor(t, "ua").do(t, "GET", r.url+"/slow", "", "Accept", "application/json")
	if js.status != 503 || !strings.Contains(js.body, `"busy"`) {
		t.Fatalf("JSON shed: %d %s", js.status, js.body)
	}
	close(release)
	if first := <-done; first.status != 200 || first.body != "slow" {
		t.Fatalf("the request in flight: %d %s", first.status, first.body)
	}
	if n := counterValue(t, r.reg, "waitroom_shed_total", map[string]string{"origin": "tiny"}); n != 2 {
		t.Fatalf("shed counted %v, want 2", n)
	}
}

// TestParseJoin: what the page (static/web/room.js) and scripts send is
// read field by field; null is absent, as encoding/json reads it.
func TestParseJoin(t *testing.T) {
	for body, want := range map[string]joinRequest{
		`{"event":"show","return":"/show/x"}`: {Event: "show", Return: "/show/x"},
		`{"event":"show","return":"/","pow":{"token":"tok","nonces":[0,18446744073709551615]}}`: {Event: "show", Return: "/",
			PoW: &powSolution{Token: "tok", Nonces: []uint64{0, 18446744073709551615}}},
		`{"event":"show","return":"/","captcha":"c"}`: {Event: "show", Return: "/", Captcha: "c"},
		`{"event":"show","lane":"fans","invite":"i","account":"a","account_proof":"p"}`: {Event: "show", Lane: "fans",
			Invite: "i", Account: "a", AccountProof: "p"},
		`{"event":"show","lane":null,"pow":null}`:              {Event: "show"},
		`{"event":"show","pow":{"token":"t","nonces":[null]}}`: {Event: "show", PoW: &powSolution{Token: "t", Nonces: []uint64{0}}},
		" {\n \"event\" : \"sh\\u006fw\" } ":                   {Event: "show"},
		`{"event":"show","client":{"webdriver":false,"automation":[],"missing":["Worker"],"solve_ms":950,"hashes":4194304}}`: {
			Event: "show", Client: &challenge.ClientReport{Webdriver: new(bool), Automation: []string{}, Missing: []string{"Worker"},
				SolveMillis: 950, Hashes: 4194304}},
		`{"event":"show","client":{"webdriver":true,"automation":["cdc_asdjflasutopfhvcZLmcfl_Array"]}}`: {
			Event: "show", Client: &challenge.ClientReport{Webdriver: ptrTrue(), Automation: []string{"cdc_asdjflasutopfhvcZLmcfl_Array"}}},
		`{"event":"show","client":{}}`:                                {Event: "show", Client: &challenge.ClientReport{}},
		`{"event":"show","client":null}`:                              {Event: "show"},
		`{"event":"show","client":{"webdriver":null,"missing":null}}`: {Event: "show", Client: &challenge.ClientReport{}},
	} {
		got, err := parseJoin([]byte(body))
		if err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read %+v, want %+v", body, got, want)
		}
	}
}

func ptrTrue() *bool { b := true; return &b }

// The join body's "client" is refused, with a message that names the
// problem, when it is not the bounded report the page sends.
func TestParseJoinClientRefused(t *testing.T) {
	names := func(n int, name string) string {
		return `["` + strings.Repeat(name+`","`, n-1) + name + `"]`
	}
	for _, tt := range []struct{ body, want string }{
		{`{"event":"e","client":[]}`, "client"},
		{`{"event":"e","client":"x"}`, "client"},
		{`{"event":"e","client":{"score":0}}`, `client.score`},
		{`{"event":"e","client":{"webdriver":"false"}}`, "client.webdriver must be true or false"},
		{`{"event":"e","client":{"webdriver":0}}`, "client.webdriver must be true or false"},
		{`{"event":"e","client":{"webdriver":tru}}`, ""},
		{`{"event":"e","client":{"automation":"cdc_"}}`, "client.automation"},
		{`{"event":"e","client":{"automation":[1]}}`, "client.automation"},
		{`{"event":"e","client":{"automation":[{"a":1}]}}`, "client.automation"},
		{`{"event":"e","client":{"missing":` + names(17, "Worker") + `}}`, "more than 16 names"},
		{`{"event":"e","client":{"missing":["` + strings.Repeat("x", 65) + `"]}}`, "1 to 64 bytes"},
		{`{"event":"e","client":{"missing":[""]}}`, "1 to 64 bytes"},
		{`{"event":"e","client":{"missing":["a\u0000b"]}}`, "printable ASCII"},
		{`{"event":"e","client":{"missing":["é"]}}`, "printable ASCII"},
		{`{"event":"e","client":{"solve_ms":-1}}`, "client.solve_ms"},
		{`{"event":"e","client":{"solve_ms":1.5}}`, ""},
		{`{"event":"e","client":{"solve_ms":86400001}}`, "client.solve_ms must be an integer from 0 to 86400000"},
		{`{"event":"e","client":{"hashes":9007199254740993}}`, "client.hashes must be an integer from 0 to 9007199254740992"},
		{`{"event":"e","client":{"hashes":1,"hashes":2}}`, "given twice"},
		{`{"event":"e","client":{},"client":{}}`, "given twice"},
	} {
		_, err := parseJoin([]byte(tt.body))
		if err == nil {
			t.Errorf("%s: accepted", tt.body)
			continue
		}
		var re requestError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want a request error with %q", tt.body, err, tt.want)
		}
	}
}

// FuzzParseJoin: the join body parser never panics, and accepts only one
// object with a non-empty event, whose client report is within bounds.
func FuzzParseJoin(f *testing.F) {
	for _, s := range []string{`{"event":"show"}`, `{"event":"a","return":"/x","lane":"p","invite":"i","pow":{"n":1}}`,
		`{"event":"a","client":{"webdriver":true,"automation":["cdc_x"],"missing":["Worker"],"solve_ms":9,"hashes":99}}`,
		`{"event":""}`, `{}`, `[]`, `{"event":"a"} x`, `{"event":"\u0000"}`, ``, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseJoin(b)
		if err == nil && r.Event == "" {
			t.Fatalf("accepted %q without an event", b)
		}
		if c := r.Client; err == nil && c != nil {
			for _, l := range [][]string{c.Automation, c.Missing} {
				if len(l) > challenge.MaxClientNames {
					t.Fatalf("accepted %d names", len(l))
				}
				for _, n := range l {
					if n == "" || len(n) > challenge.MaxClientNameLength {
						t.Fatalf("accepted the name %q", n)
					}
				}
			}
		}
		if err != nil && strings.Contains(err.Error(), "json:") {
			t.Fatalf("decoder text leaks: %v", err)
		}
	})
}

// A body nobody reads (the room page answering a POST) must not be read
// as the next request on the connection: it is skipped, or the
// connection is closed. fasthttp reads the first 8 KiB of a body before
// the handler runs, so the hidden request sits beyond that.
func TestUnreadBodyIsNotTheNextRequest(t *testing.T) {
	r := newRig(t)
	addr := strings.TrimPrefix(r.url, "http://")
	smuggled := "GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n"
	for _, size := range []int{100, 20000, 200000} {
		body := strings.Repeat("x", min(size, 8192)) + smuggled
		body += strings.Repeat("x", max(0, size-len(body)))
		raw := "POST /show/x HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: " +
			itoa(len(body)) + "\r\n\r\n" + body + "GET /about HTTP/1.1\r\nHost: a\r\n\r\n"
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		go io.WriteString(c, raw)
		br := bufio.NewReader(c)
		var got []string
		for range 2 {
			req, _ := http.NewRequest("GET", "/", nil)
			resp, err := http.ReadResponse(br, req)
			if err != nil {
				break
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got = append(got, strconv.Itoa(resp.StatusCode)+" "+string(b[:min(len(b), 20)]))
		}
		c.Close()
		if len(got) == 0 || !strings.HasPrefix(got[0], "200 ") {
			t.Fatalf("body %d: responses %q", size, got)
		}
		if size <= drainLimit && (len(got) != 2 || got[1] != "200 origin:/about") {
			t.Fatalf("body %d: the next request was not served: %q", size, got)
		}
		if size > drainLimit && len(got) != 1 {
			t.Fatalf("body %d: the connection served on after an undrained body: %q", size, got)
		}
	}
	r.origin.mu.Lock()
	defer r.origin.mu.Unlock()
	for _, s := range r.origin.seen {
		if s.path == "/smuggled" {
			t.Fatal("a request hidden in an unread body reached the origin")
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
