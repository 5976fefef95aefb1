package proxy

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkProxiedRequest is one admitted request through the gate to a
// real fasthttp origin on loopback (the origin's work included): pass
// lookup, binding, revocation check, header rewriting, forwarding,
// measuring.
func BenchmarkProxiedRequest(b *testing.B) {
	run := proxiedRequest(b)
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
}

// BenchmarkStatus is one status poll of a drawn ticket: cached ticket,
// engine counters, JSON.
func BenchmarkStatus(b *testing.B) {
	run := statusPoll(b)
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
}

// BenchmarkBareProxiedRequest is BenchmarkProxiedRequest's request through
// a bare fasthttp.HostClient to the same kind of origin: the floor the
// gate's own work is measured against (compare the two ns/op).
func BenchmarkBareProxiedRequest(b *testing.B) {
	o := startOrigin(b)
	o.silent.Store(true)
	hc := &fasthttp.HostClient{Addr: o.addr, MaxConns: 512, ReadBufferSize: 32 << 10}
	tmpl := wireRequest(b, "GET /show/seats?x=1 HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: Mozilla/5.0 alloc\r\n"+
		"Accept: text/html\r\nCookie: theme=dark; wr_pass_show=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef; lang=en\r\n")
	ctx := requestCtx(tmpl)
	b.ReportAllocs()
	for b.Loop() {
		tmpl.CopyTo(&ctx.Request)
		ctx.Response.Reset()
		if err := hc.Do(&ctx.Request, &ctx.Response); err != nil || ctx.Response.StatusCode() != 200 {
			b.Fatalf("got %d %v", ctx.Response.StatusCode(), err)
		}
	}
}
