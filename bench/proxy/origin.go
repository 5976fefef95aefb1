package main

import (
	"bytes"
	"log"
	"net"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Paths the origin answers besides its page.
const (
	originHealthPath = "/healthz"       // waitroom's health checks; not counted
	originCountPath  = "/__bench/count" // the number of pages served so far
)

// originBody returns the page the origin serves: n bytes of text that
// start with a marker the benchmark recognises.
func originBody(n int) []byte {
	const marker = "waitroom-bench-origin\n"
	if n <= len(marker) {
		return []byte("Hello, World!")
	}
	b := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
	copy(b, marker)
	b[n-1] = '\n'
	return b
}

// runOrigin is the bench's origin and hello-world server: a bare
// fasthttp server on one P (GOMAXPROCS=1) answering every path but the
// two above with body and counting what it served. It runs until killed.
func runOrigin(addr string, size int) {
	runtime.GOMAXPROCS(1)
	body := originBody(size)
	var served atomic.Int64
	s := &fasthttp.Server{
		Name:        "bench-origin",
		IdleTimeout: 5 * time.Minute, // longer than every client pool's idle time
		Handler: func(ctx *fasthttp.RequestCtx) {
			switch string(ctx.Path()) {
			case originHealthPath:
				ctx.SetBodyString("ok\n")
			case originCountPath:
				ctx.SetBody(strconv.AppendInt(nil, served.Load(), 10))
			default:
				served.Add(1)
				ctx.SetContentType("text/plain; charset=utf-8")
				ctx.SetBody(body)
			}
		},
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatalf("origin: %v", err)
	}
	log.Fatal(s.Serve(ln))
}

// runBareProxy is the floor of waitroom's own stack: a fasthttp server on
// one P that hands every request to upstream through one HostClient, with
// no routing, gate, header rewriting, streaming or measurement. What
// waitroom costs beyond it is waitroom's; what it costs beyond nginx is
// the stack's. It runs until killed.
func runBareProxy(addr, upstream string) {
	runtime.GOMAXPROCS(1)
	hc := &fasthttp.HostClient{Addr: upstream, MaxConns: 512, ReadBufferSize: 32 << 10,
		MaxIdleConnDuration: time.Minute}
	s := &fasthttp.Server{
		Name:        "bench-bare-proxy",
		IdleTimeout: 5 * time.Minute,
		Handler: func(ctx *fasthttp.RequestCtx) {
			if err := hc.Do(&ctx.Request, &ctx.Response); err != nil {
				ctx.Error("bad gateway", fasthttp.StatusBadGateway)
			}
		},
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatalf("bare proxy: %v", err)
	}
	log.Fatal(s.Serve(ln))
}
