package proxy

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/proxy/target"
)

// FuzzGate is the gate's differential fuzz target. It sends random request
// lines through the proxy, and random X-Original-URI values to the
// auth_request endpoint, without a pass. Whenever waitroom forwards a
// request, or answers the auth endpoint with 2xx, it has decided "pass";
// the target is then read the way real origins read one (fasthttp, one
// decoding, Tomcat's path parameters, IIS's case and trailing dots, no
// decoding at all), and each reading must route to pass too: no origin
// may see a gated path that waitroom let through.
//
//	go test -run '^$' -fuzz '^FuzzGate$' -fuzztime 10m ./proxy/
func FuzzGate(f *testing.F) {
	for _, s := range []struct {
		method uint8
		target string
	}{
		{0, "/static/a.css"}, {0, "/show/x"}, {0, "http://x#/show/secret"}, {0, "//show/secret"},
		{0, "/SHOW/secret"}, {0, "/show./secret"}, {0, "/static/..;/show/x"}, {0, "/static/%2e%2e/show/x"},
		{0, "/static%2F..%2Fshow/x"}, {0, "/static/%252e%252e/show/x"}, {1, "*"}, {2, "/static/a"},
		{0, "http://shop.example/static/../show/x"}, {0, "/_WR/api/status"}, {0, "/static/.%2E/show"},
		{3, "/static/a%20./b"}, {0, "/%73how/x"}, {0, "/checkout%20/1"}, {0, "/static\\..\\show"},
	} {
		f.Add(s.method, s.target, s.target)
	}
	r := newRig(f)
	var mu sync.Mutex
	var forwarded string
	r.origin.handler = func(ctx *fasthttp.RequestCtx) {
		mu.Lock()
		forwarded = string(ctx.Request.Header.RequestURI())
		mu.Unlock()
		ctx.SetBodyString("ok")
	}
	peer := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 4242}
	methods := [...]string{"GET", "OPTIONS", "TRACE", "POST", "HEAD", "PUT", "CONNECT", "DELETE"}
	f.Fuzz(func(t *testing.T, method uint8, raw, original string) {
		m := methods[int(method)%len(methods)]
		if ctx, ok := parsedCtx(m+" "+raw+" HTTP/1.1\r\nHost: shop.example\r\n", peer); ok {
			before := r.origin.count()
			r.p.Handle(ctx)
			if r.origin.count() > before {
				mu.Lock()
				uri := forwarded
				mu.Unlock()
				r.mustPass(t, "forwarded "+m+" "+raw, uri)
			}
		}
		if ctx, ok := parsedCtx("GET /_wr/auth HTTP/1.1\r\nHost: shop.example\r\nX-Original-URI: "+original+"\r\n", peer); ok {
			r.p.Handle(ctx)
			if st := ctx.Response.StatusCode(); st >= 200 && st < 300 {
				r.mustPass(t, "auth answered 2xx for "+original, original)
			}
		}
	})
}

// parsedCtx parses a request head as the front server would.
func parsedCtx(head string, peer net.Addr) (*fasthttp.RequestCtx, bool) {
	var req fasthttp.Request
	if req.Header.Read(bufio.NewReader(strings.NewReader(head+"\r\n"))) != nil {
		return nil, false
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, peer, nil)
	return ctx, true
}

// mustPass fails unless every origin's reading of uri (originReadings,
// shared with the attack suite) routes to a pass route, or to waitroom's
// own prefix, which no origin serves as a gated page.
func (r *rig) mustPass(t *testing.T, what, uri string) {
	t.Helper()
	var u fasthttp.URI
	fasthttpPath := ""
	if u.Parse(nil, []byte(uri)) == nil {
		fasthttpPath = string(u.Path())
	}
	for _, p := range originReadings(uri, fasthttpPath) {
		if len(p) == 0 || p[0] != '/' {
			continue
		}
		var rq request
		rq.fold = target.Key(nil, []byte(p), true)
		rq.exact = target.Key(nil, []byte(p), false)
		if underPrefix(rq.fold, r.p.prefixKey) {
			continue
		}
		if rt := r.p.route(&rq); rt.Action != ActionPass {
			t.Fatalf("%s: an origin reads %q as %q, which is gated (%s %s)", what, uri, p, rt.Action, rt.Prefix+rt.Glob)
		}
	}
}
