package proxy

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/testkit/racedetect"
)

// requestCtx builds a RequestCtx for Handle from a template request, the
// way the server would, from a loopback client.
func requestCtx(tmpl *fasthttp.Request) *fasthttp.RequestCtx {
	var ctx fasthttp.RequestCtx
	ctx.Init(tmpl, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	return &ctx
}

// wireRequest parses a request head as the front server does (a Cookie
// header set through fasthttp's API is parsed at once instead, unlike one
// read from the wire).
func wireRequest(t testing.TB, head string) *fasthttp.Request {
	t.Helper()
	var req fasthttp.Request
	if err := req.Header.Read(bufio.NewReader(strings.NewReader(head + "\r\n"))); err != nil {
		t.Fatal(err)
	}
	return &req
}

// skipUnderRace skips an allocation test under the race detector, whose
// sync.Pool drops objects at random; `make test` runs these tests without
// -race as well.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if racedetect.Enabled {
		t.Skip("allocation counts are not meaningful under -race; make test runs this without it")
	}
}

// The gate's hot path, a request with a valid (cached) pass forwarded to
// the origin and measured, allocates nothing in steady state.
func TestProxiedRequestAllocs(t *testing.T) {
	skipUnderRace(t)
	run := proxiedRequest(t)
	for range 100 {
		run()
	}
	if n := testing.AllocsPerRun(500, run); n != 0 {
		t.Fatalf("a proxied request allocates %.2f times", n)
	}
}

// proxiedRequest returns a function that runs one admitted request
// through Handle to a real origin.
func proxiedRequest(t testing.TB) func() {
	r := newRig(t)
	v := r.admit(t, "Mozilla/5.0 alloc")
	tmpl := wireRequest(t, "GET /show/seats?x=1 HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: Mozilla/5.0 alloc\r\n"+
		"Accept: text/html\r\nCookie: theme=dark; wr_pass_show="+v.cookie(r.url, "wr_pass_show")+"; lang=en\r\n")
	ctx := requestCtx(tmpl)
	r.origin.silent.Store(true)
	run := func() {
		tmpl.CopyTo(&ctx.Request)
		ctx.Response.Reset()
		r.p.Handle(ctx)
		if ctx.Response.StatusCode() != 200 || string(ctx.Response.Body()) != "origin:/show/seats" {
			t.Fatalf("got %d %q", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
	return run
}

// A status poll for a drawn ticket reads the (cached) ticket and the
// engine's counters and allocates nothing: paused, and waiting while the
// sale runs (what bench/proxy polls, with the ETA and the pace of polls
// computed from the lane's rates).
func TestStatusAllocs(t *testing.T) {
	skipUnderRace(t)
	for name, poll := range map[string]func(testing.TB) func(){"paused": statusPoll, "waiting": waitingPoll} {
		t.Run(name, func(t *testing.T) {
			run := poll(t)
			if n := testing.AllocsPerRun(500, run); n != 0 {
				t.Fatalf("a status poll allocates %.2f times", n)
			}
		})
	}
}

// waitingPoll returns a function that runs one status poll through
// Handle of a drawn visitor who is waiting while the sale runs: three
// join before the on-sale, the caps let one in, and one of the others is
// polled.
func waitingPoll(t testing.TB) func() {
	r := newRig(t)
	if _, err := r.engine.UpdateControl(t.Context(), "show", func(c *admission.Control) {
		c.Caps = &admission.Caps{MaxActive: 1, MaxNewPerMinute: 1}
	}); err != nil {
		t.Fatal(err)
	}
	vs := make([]*visitor, 3)
	for i := range vs {
		vs[i] = newVisitor(t, "Mozilla/5.0 alloc")
		decodeStatus(t, vs[i].do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`))
	}
	for d := 11 * time.Second; d < 14*time.Second; d += time.Second {
		r.tick(t, d)
	}
	var ticket string
	for _, v := range vs {
		// The first poll after the draw renews the ticket with its number.
		st := decodeStatus(t, v.do(t, "GET", r.url+"/_wr/api/status?event=show", ""))
		if st.Status == "waiting" && st.Position != nil {
			ticket = v.cookie(r.url, "wr_ticket_show")
			break
		}
	}
	if ticket == "" {
		t.Fatal("nobody waits with one of three admitted")
	}
	tmpl := wireRequest(t, "GET /_wr/api/status?event=show&return=/show/x HTTP/1.1\r\nHost: shop.example\r\n"+
		"User-Agent: Mozilla/5.0 alloc\r\nCookie: wr_ticket_show="+ticket+"\r\n")
	ctx := requestCtx(tmpl)
	run := func() {
		tmpl.CopyTo(&ctx.Request)
		ctx.Response.Reset()
		r.p.Handle(ctx)
	}
	for range 100 {
		run()
	}
	if ctx.Response.Header.Peek("Set-Cookie") != nil {
		t.Fatalf("a drawn ticket is renewed on every poll: %s", ctx.Response.Header.Peek("Set-Cookie"))
	}
	st := decodeStatus(t, response{status: ctx.Response.StatusCode(), body: string(ctx.Response.Body())})
	if st.Status != "waiting" || st.Position == nil || st.ETASeconds < 0 {
		t.Fatalf("not a waiting ticket's status: %+v", st)
	}
	return run
}

// statusPoll returns a function that runs one status poll of a drawn
// (waiting) ticket through Handle.
func statusPoll(t testing.TB) func() {
	r := newRig(t)
	v := newVisitor(t, "Mozilla/5.0 alloc")
	decodeStatus(t, v.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`))
	if _, err := r.engine.UpdateControl(t.Context(), "show", func(c *admission.Control) { c.Paused = true }); err != nil {
		t.Fatal(err)
	}
	for d := 11 * time.Second; d < 14*time.Second; d += time.Second {
		r.tick(t, d)
	}
	tmpl := wireRequest(t, "GET /_wr/api/status?event=show&return=/show/x HTTP/1.1\r\nHost: shop.example\r\n"+
		"User-Agent: Mozilla/5.0 alloc\r\nCookie: wr_ticket_show="+v.cookie(r.url, "wr_ticket_show")+"\r\n")
	ctx := requestCtx(tmpl)
	run := func() {
		tmpl.CopyTo(&ctx.Request)
		ctx.Response.Reset()
		r.p.Handle(ctx)
	}
	// The first poll after the draw renews the ticket with its number;
	// the browser keeps the new one.
	run()
	c := fasthttp.AcquireCookie()
	c.SetKey("wr_ticket_show")
	if !ctx.Response.Header.Cookie(c) {
		t.Fatal("the first poll after the draw did not renew the ticket")
	}
	tmpl = wireRequest(t, "GET /_wr/api/status?event=show&return=/show/x HTTP/1.1\r\nHost: shop.example\r\n"+
		"User-Agent: Mozilla/5.0 alloc\r\nCookie: wr_ticket_show="+string(c.Value())+"\r\n")
	for range 100 {
		run()
	}
	if ctx.Response.Header.Peek("Set-Cookie") != nil {
		t.Fatalf("a drawn ticket is renewed on every poll: %s", ctx.Response.Header.Peek("Set-Cookie"))
	}
	st := decodeStatus(t, response{status: ctx.Response.StatusCode(), body: string(ctx.Response.Body())})
	if st.Status != "paused" || st.Position == nil {
		t.Fatalf("not a drawn ticket's status: %+v", st)
	}
	return run
}
