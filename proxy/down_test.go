package proxy

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/proxy/upstream"
)

// downAddr returns a loopback address nothing listens on.
func downAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// withOrigin replaces the rig's origin by one at cfg.
func withOrigin(t testing.TB, cfg upstream.Config) rigOption {
	o, err := upstream.New(cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	return func(opts *Options) { opts.Origins = []*upstream.Origin{o} }
}

// TestOriginDownPage: an origin that refuses connections, or does not
// answer in time, gives a browser the "site not answering" page (502 or
// 504) with Retry-After, in its language, and an API client JSON as
// before, at once rather than after a hang; nothing internal leaks.
func TestOriginDownPage(t *testing.T) {
	refused := newRig(t, withOrigin(t, upstream.Config{Name: "site", Addrs: []string{downAddr(t)}}))
	slow := startOrigin(t)
	slow.handler = func(ctx *fasthttp.RequestCtx) { time.Sleep(2 * time.Second) }
	timeout := newRig(t, withOrigin(t, upstream.Config{Name: "site", Addrs: []string{slow.addr},
		ReadTimeout: 300 * time.Millisecond, Retries: 0}))
	for _, tc := range []struct {
		name   string
		r      *rig
		status int
		code   string
	}{
		{"refused", refused, 502, "origin_unavailable"},
		{"timeout", timeout, 504, "origin_timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newVisitor(t, "Mozilla/5.0 down")
			start := time.Now()
			resp := v.do(t, "GET", tc.r.url+"/static/app.js", "",
				"Accept", "text/html,application/xhtml+xml,*/*;q=0.8", "Accept-Language", "de-DE,de;q=0.9")
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the answer took %v", took)
			}
			if resp.status != tc.status || resp.header.Get("Retry-After") != "10" ||
				!strings.HasPrefix(resp.header.Get("Content-Type"), "text/html") ||
				resp.header.Get("Content-Security-Policy") == "" || resp.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("browser: %d %v", resp.status, resp.header)
			}
			if !strings.Contains(resp.body, "Die Seite antwortet gerade nicht") || !strings.Contains(resp.body, `data-retry="10"`) {
				t.Fatalf("browser page:\n%s", resp.body)
			}
			for _, accept := range []string{"application/json", "*/*", ""} {
				resp := v.do(t, "GET", tc.r.url+"/static/app.js", "", "Accept", accept)
				if resp.status != tc.status || resp.header.Get("Retry-After") != "10" ||
					!strings.Contains(resp.body, `"error":"`+tc.code+`"`) || strings.Contains(resp.body, "127.0.0.1") {
					t.Fatalf("Accept %q: %d %v %s", accept, resp.status, resp.header, resp.body)
				}
			}
		})
	}
	// An admitted visitor on a gated path gets the same page.
	v := refused.admit(t, "Mozilla/5.0 admitted")
	if resp := v.do(t, "GET", refused.url+"/show/seats", "", "Accept", "text/html"); resp.status != 502 ||
		!strings.Contains(resp.body, "The site is not answering") {
		t.Fatalf("admitted visitor: %d %s", resp.status, resp.body)
	}
}
