package upstream

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestReservedForAdmitted: anonymous requests hold at most MaxInFlight
// less the admitted share; an admitted request still gets through.
func TestReservedForAdmitted(t *testing.T) {
	release := make(chan struct{})
	var inHandler atomic.Int32
	addr := origin(t, func(ctx *fasthttp.RequestCtx) {
		inHandler.Add(1)
		if string(ctx.Path()) == "/slow" {
			<-release
		}
		ctx.SetBodyString("ok")
	})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	o := testOrigin(t, Config{MaxInFlight: 4, MaxConns: 10, ReservedAdmitted: 0.5}, addr)
	f := newFront(t, o)
	var admitted atomic.Bool
	f.fw = func(fw *Forward) { fw.Admitted = admitted.Load() }

	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); get(t, f.addr, "/slow") }()
	}
	waitFor(t, "two anonymous requests at the origin", func() bool { return inHandler.Load() == 2 })
	status, body := get(t, f.addr, "/third")
	if status != 503 || body != `{"error":"overloaded"}` || !errors.Is(f.last().Err, ErrReserved) {
		t.Fatalf("third anonymous request: %d %q %v", status, body, f.last().Err)
	}
	if o.AnonymousInFlight() != 2 {
		t.Fatalf("anonymous in flight %d", o.AnonymousInFlight())
	}
	admitted.Store(true)
	if status, body := get(t, f.addr, "/fast"); status != 200 || body != "ok" {
		t.Fatalf("admitted request: %d %q", status, body)
	}
	unblock()
	wg.Wait()
	waitFor(t, "nothing in flight", func() bool { return o.InFlight() == 0 && o.AnonymousInFlight() == 0 })
}

// TestStalledBodyTakesNoSlot: a chunked upload whose body never starts
// holds neither an in-flight slot nor an origin connection; when its read
// deadline passes it gets 408 and the origin never heard of it.
func TestStalledBodyTakesNoSlot(t *testing.T) {
	var reached atomic.Int32
	addr := origin(t, func(ctx *fasthttp.RequestCtx) {
		reached.Add(1)
		ctx.SetBodyString("ok")
	})
	o := testOrigin(t, Config{MaxInFlight: 1, MaxConns: 1}, addr)
	f := &front{o: o, trusted: newFront(t, o).trusted}
	srv := f.server()
	srv.ReadTimeout = 5 * time.Second
	srv.HeaderReceived = func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
		return fasthttp.RequestConfig{ReadTimeout: 500 * time.Millisecond}
	}
	f.addr = serve(t, srv)

	var stalled []net.Conn
	for range 5 {
		c, err := net.Dial("tcp", f.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprint(c, "POST /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")
		stalled = append(stalled, c)
	}
	// With one slot and one connection, a normal request still passes.
	for range 3 {
		if status, body := get(t, f.addr, "/fine"); status != 200 || body != "ok" {
			t.Fatalf("a request next to stalled uploads: %d %q", status, body)
		}
	}
	for _, c := range stalled {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 408 || !resp.Close {
			t.Fatalf("stalled upload: %d, close %v", resp.StatusCode, resp.Close)
		}
	}
	if reached.Load() != 3 {
		t.Fatalf("the origin saw %d requests, want the 3 normal ones", reached.Load())
	}
	if !errors.Is(f.last().Err, ErrBodyTimeout) {
		t.Fatalf("last outcome %v", f.last().Err)
	}
}

// TestFlowingBodyForwarded: the bytes read while waiting for a body to
// start are the first ones the origin gets.
func TestFlowingBodyForwarded(t *testing.T) {
	addr := origin(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetBody(append([]byte("got:"), ctx.Request.Body()...))
	})
	o := testOrigin(t, Config{}, addr)
	f := newFront(t, o)
	c, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "POST /u HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")
	time.Sleep(50 * time.Millisecond)
	fmt.Fprint(c, "5\r\nhello\r\n")
	time.Sleep(50 * time.Millisecond)
	fmt.Fprint(c, "6\r\n world\r\n0\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || string(b) != "got:hello world" {
		t.Fatalf("%d %q %v", resp.StatusCode, b, err)
	}
}
