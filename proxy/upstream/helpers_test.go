package upstream

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/proxy/httpguard"
	"github.com/waitroom/waitroom/proxy/target"
)

// serve runs a fasthttp server on a new loopback listener until the test
// ends, and returns its address.
func serve(t testing.TB, srv *fasthttp.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv, ln)
	return ln.Addr().String()
}

func serveOn(t testing.TB, srv *fasthttp.Server, ln net.Listener) {
	if srv.Logger == nil {
		srv.Logger = quiet{}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		// Shutdown closes only the listeners Serve has registered; one
		// called before Serve got that far would leave Serve running.
		_ = srv.Shutdown()
		_ = ln.Close()
		<-done
	})
}

// origin starts a fasthttp origin running h.
func origin(t testing.TB, h fasthttp.RequestHandler) string {
	t.Helper()
	return serve(t, &fasthttp.Server{Handler: h, StreamRequestBody: true, DisablePreParseMultipartForm: true,
		ReadBufferSize: 64 << 10, NoDefaultServerHeader: true})
}

// testOrigin returns an Origin over addrs with small timeouts, closed
// when the test ends.
func testOrigin(t testing.TB, cfg Config, addrs ...string) *Origin {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "test"
	}
	cfg.Addrs = addrs
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 10 * time.Second
	}
	o, err := New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	return o
}

// front is a real fasthttp front server configured as the proxy core
// configures it, forwarding every request to an Origin with the fields the
// core would set, and answering errors as the core does.
type front struct {
	addr    string
	o       *Origin
	trusted *httpguard.Trusted

	mu       sync.Mutex
	outcomes []Outcome

	// fw, when set, adjusts the Forward of every request.
	fw func(*Forward)
}

func newFront(t testing.TB, o *Origin, trusted ...string) *front {
	t.Helper()
	var ps []netip.Prefix
	for _, c := range trusted {
		ps = append(ps, netip.MustParsePrefix(c))
	}
	f := &front{o: o, trusted: httpguard.NewTrusted(ps)}
	f.addr = serve(t, f.server())
	return f
}

func (f *front) server() *fasthttp.Server {
	return &fasthttp.Server{
		Handler: f.handle,
		ErrorHandler: func(ctx *fasthttp.RequestCtx, err error) {
			status, code := httpguard.Classify(err)
			ctx.SetStatusCode(status)
			ctx.SetBodyString(code)
		},
		StreamRequestBody:             true,
		DisablePreParseMultipartForm:  true,
		ReadBufferSize:                32 << 10,
		NoDefaultServerHeader:         true,
		NoDefaultContentType:          true,
		DisableHeaderNamesNormalizing: false,
		ReadTimeout:                   30 * time.Second,
		WriteTimeout:                  30 * time.Second,
		MaxRequestBodySize:            1 << 30,
	}
}

func (f *front) handle(ctx *fasthttp.RequestCtx) {
	if err := httpguard.Check(&ctx.Request.Header); err != nil {
		ctx.SetConnectionClose()
		ctx.SetStatusCode(fasthttp.StatusBadRequest)
		return
	}
	var tg target.Target
	if err := tg.Parse(ctx.Request.Header.RequestURI(), target.Options{}); err != nil {
		ctx.SetConnectionClose()
		ctx.SetStatusCode(fasthttp.StatusBadRequest)
		return
	}
	fw := Forward{
		Target:        tg.URI(),
		ClientIP:      f.trusted.ClientIP(ctx),
		Proto:         f.trusted.Proto(ctx),
		Host:          f.trusted.Host(ctx),
		KeepForwarded: f.trusted.Trusts(ctx),
		StripCookies:  [][]byte{[]byte("wr_pass"), []byte("wr_ticket")},
		StripHeaders:  [][]byte{[]byte("X-Bypass-Secret")},
	}
	if f.fw != nil {
		f.fw(&fw)
	}
	out := f.o.Forward(ctx, &fw)
	f.mu.Lock()
	f.outcomes = append(f.outcomes, out)
	f.mu.Unlock()
	if out.Err != nil {
		status, code := Classify(out.Err)
		if status == fasthttp.StatusServiceUnavailable {
			ctx.Response.Header.Set("Retry-After", "5")
		}
		ctx.SetStatusCode(status)
		ctx.SetContentType("application/json")
		ctx.SetBodyString(`{"error":"` + code + `"}`)
	}
}

func (f *front) last() Outcome {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.outcomes) == 0 {
		return Outcome{}
	}
	return f.outcomes[len(f.outcomes)-1]
}

// roundTrip sends raw on a new connection to addr and returns the parsed
// response with its body read.
func roundTrip(t testing.TB, addr, raw string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	method, _, _ := strings.Cut(raw, " ")
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return resp, string(b)
}

// get sends a GET for path to the front and returns the status and body.
func get(t testing.TB, addr, path string, headers ...string) (int, string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: site.example\r\n", path)
	for _, h := range headers {
		b.WriteString(h)
		b.WriteString("\r\n")
	}
	b.WriteString("Connection: close\r\n\r\n")
	resp, body := roundTrip(t, addr, b.String())
	return resp.StatusCode, body
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// ctxTimeout is a context for the test's background work.
func ctxTimeout(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
