package proxy

import (
	"bufio"
	"net"
	"net/url"
	"path"
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
// the target is then read the way real origins read one (fasthttp,
// net/url, Tomcat, IIS, no decoding at all), and each reading must route
// to pass too: no origin may see a gated path that waitroom let through.
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

// mustPass fails unless every origin's reading of uri routes to a pass
// route (or to waitroom's own prefix, which no origin serves as a gated
// page).
func (r *rig) mustPass(t *testing.T, what, uri string) {
	t.Helper()
	for _, rd := range originReadings {
		p, ok := rd.read(uri)
		if !ok || len(p) == 0 || p[0] != '/' {
			continue
		}
		var rq request
		rq.fold = target.Key(nil, []byte(p), true)
		rq.exact = target.Key(nil, []byte(p), false)
		if underPrefix(rq.fold, r.p.prefixKey) {
			continue
		}
		if rt := r.p.route(&rq); rt.Action != ActionPass {
			t.Fatalf("%s: %s reads %q as %q, which is gated (%s %s)", what, rd.name, uri, p, rt.Action, rt.Prefix+rt.Glob)
		}
	}
}

// originReadings are the ways origins turn a request-target into the path
// they serve.
var originReadings = []struct {
	name string
	read func(uri string) (string, bool)
}{
	{"as received", func(uri string) (string, bool) { return splitQuery(uri), true }},
	{"fasthttp", func(uri string) (string, bool) {
		var u fasthttp.URI
		if u.Parse(nil, []byte(uri)) != nil {
			return "", false
		}
		return string(u.Path()), true
	}},
	{"net/url + path.Clean", func(uri string) (string, bool) {
		u, err := url.ParseRequestURI(uri)
		if err != nil {
			return "", false
		}
		return cleanDir(u.Path), true
	}},
	{"tomcat (strip ;params, decode, clean)", func(uri string) (string, bool) {
		segs := strings.Split(splitQuery(uri), "/")
		for i, s := range segs {
			segs[i], _, _ = strings.Cut(s, ";")
		}
		p, err := url.PathUnescape(strings.Join(segs, "/"))
		if err != nil {
			return "", false
		}
		return cleanDir(p), true
	}},
	{"iis (decode, \\ is /, clean, trailing dots and spaces)", func(uri string) (string, bool) {
		p, err := url.PathUnescape(splitQuery(uri))
		if err != nil {
			return "", false
		}
		segs := strings.Split(cleanDir(strings.ReplaceAll(p, `\`, "/")), "/")
		for i, s := range segs {
			segs[i] = strings.TrimRight(s, ". ")
		}
		return strings.ToLower(strings.Join(segs, "/")), true
	}},
}

func splitQuery(uri string) string {
	p, _, _ := strings.Cut(uri, "?")
	return p
}

// cleanDir is path.Clean that keeps a trailing slash.
func cleanDir(p string) string {
	if p == "" {
		return ""
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}
