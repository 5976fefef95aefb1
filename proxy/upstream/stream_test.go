package upstream

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

const bigSize = 64 << 20

// payload returns a reader of n deterministic pseudo-random bytes.
func payload(seed uint64, n int64) io.Reader {
	var key [32]byte
	key[0] = byte(seed)
	return io.LimitReader(rand.NewChaCha8(key), n)
}

func payloadSum(t testing.TB, seed uint64, n int64) string {
	t.Helper()
	h := sha256.New()
	if _, err := io.Copy(h, payload(seed, n)); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// heapWatch samples the heap in use until stopped and reports the largest
// growth over the level it started from.
type heapWatch struct {
	base, peak uint64
	stop       chan struct{}
	done       chan struct{}
}

func watchHeap() *heapWatch {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w := &heapWatch{base: ms.HeapInuse, peak: ms.HeapInuse, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&ms)
				w.peak = max(w.peak, ms.HeapInuse)
			}
		}
	}()
	return w
}

func (w *heapWatch) growth() uint64 {
	close(w.stop)
	<-w.done
	return w.peak - w.base
}

// TestStreaming moves 64 MiB each way through a real front server and
// checks the checksums and that memory stays bounded.
func TestStreaming(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 256 MiB")
	}
	addr := origin(t, func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Path()) {
		case "/upload":
			h := sha256.New()
			n, err := io.Copy(h, ctx.RequestBodyStream())
			if err != nil {
				ctx.SetStatusCode(400)
				return
			}
			ctx.SetBodyString(strconv.FormatInt(n, 10) + " " + hex.EncodeToString(h.Sum(nil)))
		case "/download":
			ctx.SetBodyStream(payload(2, bigSize), bigSize)
		case "/download-chunked":
			ctx.SetBodyStream(payload(3, bigSize), -1)
		}
	})
	o := testOrigin(t, Config{}, addr)
	f := newFront(t, o)
	client := &http.Client{Timeout: 2 * time.Minute}

	uploads := []struct {
		name   string
		length int64 // -1: chunked
	}{
		{"upload with content-length", bigSize},
		{"upload chunked", -1},
	}
	for _, tt := range uploads {
		t.Run(tt.name, func(t *testing.T) {
			want := fmt.Sprintf("%d %s", bigSize, payloadSum(t, 1, bigSize))
			w := watchHeap()
			req, err := http.NewRequest("POST", "http://"+f.addr+"/upload", io.NopCloser(payload(1, bigSize)))
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = tt.length
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			grew := w.growth()
			if resp.StatusCode != 200 || string(body) != want {
				t.Fatalf("got %d %q, want %q", resp.StatusCode, body, want)
			}
			if grew > 32<<20 {
				t.Fatalf("the heap grew by %d MiB while streaming", grew>>20)
			}
			t.Logf("heap growth %.1f MiB", float64(grew)/(1<<20))
		})
	}

	downloads := []struct {
		path string
		seed uint64
	}{{"/download", 2}, {"/download-chunked", 3}}
	for _, tt := range downloads {
		t.Run(tt.path, func(t *testing.T) {
			want := payloadSum(t, tt.seed, bigSize)
			w := watchHeap()
			resp, err := client.Get("http://" + f.addr + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			h := sha256.New()
			n, err := io.Copy(h, resp.Body)
			resp.Body.Close()
			grew := w.growth()
			if err != nil || n != bigSize || hex.EncodeToString(h.Sum(nil)) != want {
				t.Fatalf("got %d bytes (%v), checksum differs or short", n, err)
			}
			if grew > 32<<20 {
				t.Fatalf("the heap grew by %d MiB while streaming", grew>>20)
			}
			t.Logf("heap growth %.1f MiB", float64(grew)/(1<<20))
		})
	}
	waitFor(t, "nothing in flight", func() bool { return o.InFlight() == 0 })
}

// TestServerSentEvents: an origin sending an event every 50 ms, forever;
// the client receives the first events while the stream goes on, and the
// origin's stream ends when the client leaves.
func TestServerSentEvents(t *testing.T) {
	var origins sync.WaitGroup
	var ended atomic.Int32
	events := func(w *bufio.Writer) {
		defer origins.Done()
		defer ended.Add(1)
		for i := 0; i < 6000; i++ { // at most five minutes
			if _, err := fmt.Fprintf(w, "data: event %d\n\n", i); err != nil {
				return
			}
			if err := w.Flush(); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	chunked := origin(t, func(ctx *fasthttp.RequestCtx) {
		origins.Add(1)
		ctx.SetContentType("text/event-stream")
		ctx.SetBodyStreamWriter(events)
	})
	closeDelimited := rawOrigin(t, func(c net.Conn, _ int) {
		if _, err := readRequest(c); err != nil {
			return
		}
		origins.Add(1)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
		events(bufio.NewWriter(c))
	})
	tests := []struct{ name, addr string }{
		{"chunked", chunked},
		{"close-delimited", closeDelimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOrigin(t, Config{ReadTimeout: 5 * time.Second}, tt.addr)
			f := newFront(t, o)
			c, err := net.Dial("tcp", f.addr)
			if err != nil {
				t.Fatal(err)
			}
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			io.WriteString(c, "GET /events HTTP/1.1\r\nHost: a\r\nAccept: text/event-stream\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("Content-Type %q", ct)
			}
			sc := bufio.NewScanner(resp.Body)
			var got []string
			for len(got) < 3 && sc.Scan() {
				if line := sc.Text(); strings.HasPrefix(line, "data: ") {
					got = append(got, line)
				}
			}
			endedBefore := ended.Load()
			c.Close()
			if len(got) != 3 || got[0] != "data: event 0" || got[2] != "data: event 2" {
				t.Fatalf("events %q (%v)", got, sc.Err())
			}
			waitFor(t, "the origin's stream to end", func() bool { return ended.Load() > endedBefore })
			waitFor(t, "nothing in flight", func() bool { return o.InFlight() == 0 })
		})
	}
	origins.Wait()
}

// TestBrokenRequestBody: a client body that breaks half way (a bad chunk,
// a connection cut short of its Content-Length) gets 400, and the origin
// sees an unfinished request on a connection that is then closed.
func TestBrokenRequestBody(t *testing.T) {
	first := strings.Repeat("a", 40<<10)
	tests := []struct {
		name string
		head string
		body string
		cut  bool // half-close the client's side after the body
	}{
		{"bad chunk size", "Transfer-Encoding: chunked", fmt.Sprintf("%x\r\n%s\r\nzz\r\nmore\r\n0\r\n\r\n", len(first), first), false},
		{"chunk without crlf", "Transfer-Encoding: chunked", fmt.Sprintf("%x\r\n%sXX", len(first), first), false},
		{"short content-length", "Content-Length: 100000", first, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type seen struct {
				data []byte
				err  error
			}
			got := make(chan seen, 1)
			addr := rawOrigin(t, func(c net.Conn, _ int) {
				b, err := io.ReadAll(c) // until the proxy closes the connection
				got <- seen{b, err}
			})
			o := testOrigin(t, Config{}, addr)
			f := newFront(t, o)
			c, err := net.Dial("tcp", f.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(20 * time.Second))
			io.WriteString(c, "POST /upload HTTP/1.1\r\nHost: a\r\n"+tt.head+"\r\n\r\n"+tt.body)
			if tt.cut {
				c.(*net.TCPConn).CloseWrite()
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 400 || !resp.Close {
				t.Fatalf("status %d, close %v", resp.StatusCode, resp.Close)
			}
			s := <-got
			if s.err != nil {
				t.Fatalf("origin read: %v", s.err)
			}
			head, body, _ := bytes.Cut(s.data, []byte("\r\n\r\n"))
			if !bytes.HasPrefix(head, []byte("POST /upload HTTP/1.1\r\n")) {
				t.Fatalf("origin saw %q", head)
			}
			if bytes.HasSuffix(body, []byte("0\r\n\r\n")) || bytes.Contains(body, []byte("more")) {
				t.Fatal("the origin received a complete request")
			}
			if tt.cut && len(body) >= 100000 {
				t.Fatal("the origin received the whole declared length")
			}
			if out := f.last(); out.Status != 0 || out.Err == nil {
				t.Fatalf("outcome %+v", out)
			}
		})
	}
}

// wsAccept computes Sec-WebSocket-Accept (RFC 6455 §4.2.2).
func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// TestWebSocket passes an upgrade through to a WebSocket echo origin and
// exchanges a message over the spliced connection.
func TestWebSocket(t *testing.T) {
	var handshakes atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || !strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade") {
			http.Error(w, "not an upgrade", 400)
			return
		}
		handshakes.Add(1)
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\nX-Origin: echo\r\n\r\n",
			wsAccept(r.Header.Get("Sec-WebSocket-Key")))
		brw.Flush()
		for {
			msg, err := readFrame(brw.Reader)
			if err != nil {
				return
			}
			if _, err := c.Write(frame(msg, false)); err != nil {
				return
			}
		}
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	o := testOrigin(t, Config{}, ln.Addr().String())
	f := newFront(t, o)
	c, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	key := "dGhlIHNhbXBsZSBub25jZQ=="
	io.WriteString(c, "GET /ws HTTP/1.1\r\nHost: site.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "+key+"\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 101 || resp.Header.Get("Sec-WebSocket-Accept") != wsAccept(key) ||
		!strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") || resp.Header.Get("X-Origin") != "echo" {
		t.Fatalf("handshake answer %d %v", resp.StatusCode, resp.Header)
	}
	for _, msg := range []string{"hello", strings.Repeat("x", 100)} {
		if _, err := c.Write(frame([]byte(msg), true)); err != nil {
			t.Fatal(err)
		}
		got, err := readFrame(br)
		if err != nil || string(got) != msg {
			t.Fatalf("echo %q, %v", got, err)
		}
	}
	if o.InFlight() != 1 {
		t.Fatalf("in flight %d while the WebSocket is open", o.InFlight())
	}
	c.Close()
	waitFor(t, "the WebSocket to be released", func() bool { return o.InFlight() == 0 })
	if handshakes.Load() != 1 {
		t.Fatalf("%d handshakes", handshakes.Load())
	}
}

// frame encodes a final text frame (payload < 126 bytes).
func frame(p []byte, masked bool) []byte {
	b := []byte{0x81, byte(len(p))}
	if !masked {
		return append(b, p...)
	}
	b[1] |= 0x80
	mask := [4]byte{1, 2, 3, 4}
	b = append(b, mask[:]...)
	for i, c := range p {
		b = append(b, c^mask[i%4])
	}
	return b
}

// readFrame decodes a frame of frame's shape.
func readFrame(br *bufio.Reader) ([]byte, error) {
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return nil, err
	}
	n := int(h[1] & 0x7f)
	var mask [4]byte
	if h[1]&0x80 != 0 {
		if _, err := io.ReadFull(br, mask[:]); err != nil {
			return nil, err
		}
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(br, p); err != nil {
		return nil, err
	}
	if h[1]&0x80 != 0 {
		for i := range p {
			p[i] ^= mask[i%4]
		}
	}
	return p, nil
}

// TestRequestBodyLimit: a declared length beyond MaxRequestBodySize is
// refused before the origin is contacted; a chunked body growing beyond it
// is cut off, the origin left with an unfinished request.
func TestRequestBodyLimit(t *testing.T) {
	type seen struct{ data []byte }
	got := make(chan seen, 4)
	var conns atomic.Int32
	addr := rawOrigin(t, func(c net.Conn, _ int) {
		conns.Add(1)
		b, _ := io.ReadAll(c)
		got <- seen{b}
	})
	o := testOrigin(t, Config{MaxRequestBodySize: 1000}, addr)
	f := newFront(t, o)

	resp, _ := roundTrip(t, f.addr, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1001\r\n\r\n"+strings.Repeat("a", 1001))
	if resp.StatusCode != 413 || !resp.Close || !errors.Is(f.last().Err, ErrTooLarge) {
		t.Fatalf("declared: %d close %v %v", resp.StatusCode, resp.Close, f.last().Err)
	}
	echo := testOrigin(t, Config{MaxRequestBodySize: 1000}, origin(t, func(ctx *fasthttp.RequestCtx) {
		n, _ := io.Copy(io.Discard, ctx.RequestBodyStream())
		ctx.SetBodyString(strconv.FormatInt(n, 10))
	}))
	resp, body := roundTrip(t, newFront(t, echo).addr, "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n"+strings.Repeat("a", 1000))
	if resp.StatusCode != 200 || body != "1000" {
		t.Fatalf("at the limit: %d %q", resp.StatusCode, body)
	}

	chunk := strings.Repeat("b", 600)
	resp, _ = roundTrip(t, f.addr, fmt.Sprintf("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n258\r\n%s\r\n258\r\n%s\r\n0\r\n\r\n", chunk, chunk))
	if resp.StatusCode != 413 || !errors.Is(f.last().Err, ErrTooLarge) {
		t.Fatalf("chunked: %d %v", resp.StatusCode, f.last().Err)
	}
	if s := <-got; bytes.HasSuffix(s.data, []byte("0\r\n\r\n")) || bytes.Count(s.data, []byte("b")) > 1000 {
		t.Fatalf("chunked: the origin saw %q", s.data)
	}
	if conns.Load() != 1 {
		t.Fatalf("the origin was contacted %d times; only the chunked request should reach it", conns.Load())
	}
}
