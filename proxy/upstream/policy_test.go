package upstream

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// flakyOrigin closes its first connection after reading a request,
// without answering; later connections answer every request with "ok".
func flakyOrigin(t *testing.T) (addr string, requests *atomic.Int32) {
	requests = new(atomic.Int32)
	addr = rawOrigin(t, func(c net.Conn, n int) {
		for {
			if _, err := readRequest(c); err != nil {
				return
			}
			requests.Add(1)
			if n == 1 {
				return // close without a response byte
			}
			if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"); err != nil {
				return
			}
		}
	})
	return addr, requests
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name     string
		request  string
		retries  int
		status   int
		requests int32
	}{
		{"get retried", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 1, 200, 2},
		{"head retried", "HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", 1, 200, 2},
		{"put without body retried", "PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", 1, 200, 2},
		{"get not retried with retries 0", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 0, 502, 1},
		{"post never retried", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc", 3, 502, 1},
		{"put with body never retried", "PUT / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc", 3, 502, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, requests := flakyOrigin(t)
			o := testOrigin(t, Config{Retries: tt.retries}, addr)
			f := newFront(t, o)
			resp, _ := roundTrip(t, f.addr, tt.request)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if got := requests.Load(); got != tt.requests {
				t.Fatalf("the origin saw %d requests, want %d", got, tt.requests)
			}
			if tt.status == 502 && !errors.Is(f.last().Err, ErrUpstream) {
				t.Fatalf("outcome %+v", f.last())
			}
		})
	}
}

// TestNoRetryAfterResponse: a connection that breaks after the status
// line is not retried, even for a GET.
func TestNoRetryAfterResponse(t *testing.T) {
	var requests atomic.Int32
	addr := rawOrigin(t, func(c net.Conn, _ int) {
		if _, err := readRequest(c); err != nil {
			return
		}
		requests.Add(1)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-")
	})
	o := testOrigin(t, Config{Retries: 3}, addr)
	f := newFront(t, o)
	if status, _ := get(t, f.addr, "/"); status != 502 {
		t.Fatalf("status %d", status)
	}
	if requests.Load() != 1 {
		t.Fatalf("the origin saw %d requests", requests.Load())
	}
}

// TestStaleConnection: the origin closes idle keep-alive connections after
// 100 ms; a request on a connection idle longer is not lost, even when it
// cannot be retried, since the connection is probed first.
func TestStaleConnection(t *testing.T) {
	tests := []struct{ name, request string }{
		{"post", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"},
		{"get without retries", "GET / HTTP/1.1\r\nHost: a\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var requests atomic.Int32
			addr := rawOrigin(t, func(c net.Conn, _ int) {
				for {
					_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
					if _, err := readRequest(c); err != nil {
						return // idle too long: close
					}
					requests.Add(1)
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				}
			})
			o := testOrigin(t, Config{Retries: 0}, addr)
			f := newFront(t, o)
			if resp, _ := roundTrip(t, f.addr, tt.request); resp.StatusCode != 200 {
				t.Fatalf("first: %d", resp.StatusCode)
			}
			m := o.members[0]
			waitFor(t, "an idle pooled connection", func() bool { return m.hc.IdleConnsCount() == 1 })
			time.Sleep(probeIdleAfter + 100*time.Millisecond) // the origin closes it meanwhile
			if resp, _ := roundTrip(t, f.addr, tt.request); resp.StatusCode != 200 {
				t.Fatalf("after idling: %d (%v)", resp.StatusCode, f.last().Err)
			}
			if requests.Load() != 2 {
				t.Fatalf("the origin saw %d requests", requests.Load())
			}
		})
	}
}

// TestShedding: with MaxInFlight 2 (or 2 connections) and a slow origin,
// the third concurrent request is shed at once — while the first two are
// still held at the origin.
func TestShedding(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"in-flight limit", Config{MaxInFlight: 2, MaxConns: 10}},
		{"connections busy", Config{MaxInFlight: 10, MaxConns: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			var inHandler atomic.Int32
			addr := origin(t, func(ctx *fasthttp.RequestCtx) {
				inHandler.Add(1)
				<-release
				ctx.SetBodyString("slow")
			})
			var once sync.Once
			unblock := func() { once.Do(func() { close(release) }) }
			t.Cleanup(unblock)
			o := testOrigin(t, tt.cfg, addr)
			f := newFront(t, o)
			var wg sync.WaitGroup
			statuses := make([]int, 2)
			for i := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses[i], _ = get(t, f.addr, "/slow")
				}()
			}
			waitFor(t, "two requests at the origin", func() bool { return inHandler.Load() == 2 })
			status, body := get(t, f.addr, "/third")
			if status != 503 || body != `{"error":"overloaded"}` || !errors.Is(f.last().Err, ErrShed) {
				t.Fatalf("third request: %d %q %v", status, body, f.last().Err)
			}
			if inHandler.Load() != 2 || o.InFlight() != 2 {
				t.Fatalf("in handler %d, in flight %d", inHandler.Load(), o.InFlight())
			}
			unblock()
			wg.Wait()
			if statuses[0] != 200 || statuses[1] != 200 {
				t.Fatalf("held requests: %v", statuses)
			}
			waitFor(t, "nothing in flight", func() bool { return o.InFlight() == 0 })
		})
	}
}

// TestHealthChecks stops an origin and starts it again on the same
// address: it leaves the rotation after UnhealthyAfter failed checks and
// returns after HealthyAfter passed ones.
func TestHealthChecks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	handler := func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("up") }
	srv := &fasthttp.Server{Handler: handler, Logger: quiet{}}
	go srv.Serve(ln)

	o := testOrigin(t, Config{Health: HealthCheck{Path: "/healthz", Interval: 100 * time.Millisecond,
		Timeout: 80 * time.Millisecond, UnhealthyAfter: 2, HealthyAfter: 2}}, addr)
	o.Start(ctxTimeout(t))
	f := newFront(t, o)
	if status, body := get(t, f.addr, "/"); status != 200 || body != "up" {
		t.Fatalf("before: %d %q", status, body)
	}

	srv.Shutdown()
	waitFor(t, "the origin to turn unhealthy", func() bool { return !o.Healthy() })
	if status, _ := get(t, f.addr, "/"); status != 502 || !errors.Is(f.last().Err, ErrUnavailable) {
		t.Fatalf("while down: %d %v", status, f.last().Err)
	}

	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening again on %s: %v", addr, err)
	}
	srv2 := &fasthttp.Server{Handler: handler, Logger: quiet{}}
	serveOn(t, srv2, ln2)
	waitFor(t, "the origin to turn healthy", o.Healthy)
	if status, body := get(t, f.addr, "/"); status != 200 || body != "up" {
		t.Fatalf("after: %d %q", status, body)
	}
}

// TestBalancing: requests spread over the addresses, and an address that
// refuses connections costs no request its answer.
func TestBalancing(t *testing.T) {
	var hits [2]atomic.Int32
	a := origin(t, func(ctx *fasthttp.RequestCtx) { hits[0].Add(1) })
	b := origin(t, func(ctx *fasthttp.RequestCtx) { hits[1].Add(1) })
	o := testOrigin(t, Config{}, a, b, closedAddr(t))
	f := newFront(t, o)
	for range 20 {
		if status, _ := get(t, f.addr, "/"); status != 200 {
			t.Fatalf("status %d (%v)", status, f.last().Err)
		}
	}
	if hits[0].Load() == 0 || hits[1].Load() == 0 || hits[0].Load()+hits[1].Load() != 20 {
		t.Fatalf("hits %d and %d", hits[0].Load(), hits[1].Load())
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"minimal", Config{Name: "a", Addrs: []string{"127.0.0.1:80"}}, true},
		{"no name", Config{Addrs: []string{"127.0.0.1:80"}}, false},
		{"no address", Config{Name: "a"}, false},
		{"no port", Config{Name: "a", Addrs: []string{"example.com"}}, false},
		{"bad port", Config{Name: "a", Addrs: []string{"example.com:99999"}}, false},
		{"negative timeout", Config{Name: "a", Addrs: []string{"h:1"}, ReadTimeout: -1}, false},
		{"too many retries", Config{Name: "a", Addrs: []string{"h:1"}, Retries: 11}, false},
		{"small buffer", Config{Name: "a", Addrs: []string{"h:1"}, ReadBufferSize: 1024}, false},
		{"relative health path", Config{Name: "a", Addrs: []string{"h:1"}, Health: HealthCheck{Path: "healthz"}}, false},
		{"health timeout too long", Config{Name: "a", Addrs: []string{"h:1"}, Health: HealthCheck{Interval: time.Second, Timeout: time.Second}}, false},
		{"bad host", Config{Name: "a", Addrs: []string{"h:1"}, Host: "a b"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := New(tt.cfg, nil)
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v", err)
			}
			if err == nil {
				o.Close()
			}
		})
	}
	o, err := New(Config{Name: "a", Addrs: []string{"h:1", "h:2"}, MaxConns: 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.MaxInFlight() != 14 || o.cfg.MaxIdleConnDuration != DefaultMaxIdleConnDuration || o.Name() != "a" {
		t.Fatalf("defaults: %+v", o.cfg)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		err    error
		status int
		code   string
	}{
		{ErrShed, 503, "overloaded"},
		{ErrClient, 400, "bad_request"},
		{ErrBodyTimeout, 408, "request_timeout"},
		{ErrTooLarge, 413, "payload_too_large"},
		{ErrTimeout, 504, "origin_timeout"},
		{ErrUnavailable, 502, "origin_unavailable"},
		{ErrUpstream, 502, "bad_gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			if s, c := Classify(errors.Join(errors.New("x"), tt.err)); s != tt.status || c != tt.code {
				t.Fatalf("got %d %q", s, c)
			}
		})
	}
}
