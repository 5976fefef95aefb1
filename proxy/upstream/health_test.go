package upstream

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// fastHealth checks every 50 ms and changes state after two checks.
func fastHealth(path string, tcp bool) HealthCheck {
	return HealthCheck{Path: path, TCP: tcp, Interval: 50 * time.Millisecond,
		Timeout: 40 * time.Millisecond, UnhealthyAfter: 2, HealthyAfter: 2}
}

// TestHealthCheckStatuses: an HTTP check passes on any answer below 500,
// so an ordinary site answering 404 (or a redirect, or 401) on the health
// path stays in rotation, and only a 5xx takes it out.
func TestHealthCheckStatuses(t *testing.T) {
	var status atomic.Int32
	status.Store(404)
	var checks atomic.Int32
	addr := origin(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/healthz" {
			checks.Add(1)
		}
		ctx.SetStatusCode(int(status.Load()))
	})
	o := testOrigin(t, Config{Health: fastHealth("/healthz", false)}, addr)
	o.Start(ctxTimeout(t))
	for _, s := range []int32{404, 401, 302, 499} {
		status.Store(s)
		n := checks.Load()
		waitFor(t, "three more checks", func() bool { return checks.Load() >= n+3 })
		if !o.Healthy() {
			t.Fatalf("status %d: unhealthy", s)
		}
	}
	status.Store(500)
	waitFor(t, "a 500 to turn the origin unhealthy", func() bool { return !o.Healthy() })
	status.Store(503)
	n := checks.Load()
	waitFor(t, "three more checks", func() bool { return checks.Load() >= n+3 })
	if o.Healthy() {
		t.Fatal("503: healthy")
	}
	status.Store(404)
	waitFor(t, "a 404 to turn it healthy again", o.Healthy)
}

// TestHealthCheckTCP: without a path a check is a TCP connect; an
// address that stops listening leaves the rotation and comes back.
func TestHealthCheckTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	var requests atomic.Int32
	handler := func(ctx *fasthttp.RequestCtx) { requests.Add(1); ctx.SetStatusCode(404) }
	srv := &fasthttp.Server{Handler: handler, Logger: quiet{}}
	go srv.Serve(ln)

	o := testOrigin(t, Config{Health: fastHealth("", true)}, addr)
	o.Start(ctxTimeout(t))
	time.Sleep(300 * time.Millisecond) // about six checks
	if !o.Healthy() {
		t.Fatal("unhealthy while listening")
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("a TCP check sent %d HTTP requests", n)
	}
	srv.Shutdown()
	waitFor(t, "the origin to turn unhealthy", func() bool { return !o.Healthy() })
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening again on %s: %v", addr, err)
	}
	serveOn(t, &fasthttp.Server{Handler: handler, Logger: quiet{}}, ln2)
	waitFor(t, "the origin to turn healthy", o.Healthy)
}

// TestHealthCheckOff: with neither a path nor TCP there are no checks,
// and an address nothing listens on stays in rotation (requests to it
// fail fast with ErrUnavailable instead).
func TestHealthCheckOff(t *testing.T) {
	o := testOrigin(t, Config{Health: fastHealth("", false)}, closedAddr(t))
	o.Start(ctxTimeout(t))
	time.Sleep(300 * time.Millisecond)
	if !o.Healthy() {
		t.Fatal("checks ran although they are off")
	}
}
