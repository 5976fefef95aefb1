package upstream

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// recorder is an origin that records each request's head as received.
type recorder struct {
	mu    sync.Mutex
	heads []string // request line + raw headers
	count atomic.Int32
}

func (r *recorder) handle(ctx *fasthttp.RequestCtx) {
	r.count.Add(1)
	head := string(ctx.Method()) + " " + string(ctx.Request.Header.RequestURI()) + "\r\n" + string(ctx.Request.Header.RawHeaders())
	r.mu.Lock()
	r.heads = append(r.heads, head)
	r.mu.Unlock()
	ctx.Response.Header.Set("Connection", "X-Resp-Hop")
	ctx.Response.Header.Set("X-Resp-Hop", "gone")
	ctx.Response.Header.Set("Keep-Alive", "timeout=5")
	ctx.Response.Header.Set("Proxy-Authenticate", "Basic")
	ctx.Response.Header.Set("Upgrade", "h2c")
	ctx.Response.Header.Set(HeaderComplete, "1")
	ctx.Response.Header.Set("X-Normal", "kept")
	ctx.Response.Header.Add("Set-Cookie", "s=1; Path=/")
	ctx.SetContentType("text/plain")
	ctx.SetBodyString("hello")
}

func (r *recorder) last() headLines {
	r.mu.Lock()
	defer r.mu.Unlock()
	return parseHead(r.heads[len(r.heads)-1])
}

// headLines is a request head split into its request line and headers.
type headLines struct {
	line    string
	headers [][2]string
}

func parseHead(s string) headLines {
	lines := strings.Split(strings.TrimRight(s, "\r\n"), "\r\n")
	h := headLines{line: lines[0]}
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(l, ":")
		h.headers = append(h.headers, [2]string{k, strings.TrimSpace(v)})
	}
	return h
}

// values returns the values of every header named k (ignoring case).
func (h headLines) values(k string) []string {
	var vs []string
	for _, kv := range h.headers {
		if strings.EqualFold(kv[0], k) {
			vs = append(vs, kv[1])
		}
	}
	return vs
}

const hostile = "GET /p?q=1 HTTP/1.1\r\n" +
	"Host: site.example\r\n" +
	"User-Agent: test-agent\r\n" +
	"Accept: */*\r\n" +
	"Connection: keep-alive, X-Hop\r\n" +
	"X-Hop: secret\r\n" +
	"Keep-Alive: timeout=5\r\n" +
	"Proxy-Connection: keep-alive\r\n" +
	"TE: trailers\r\n" +
	"Trailer: X-T\r\n" +
	"Upgrade: h2c\r\n" +
	"Proxy-Authorization: Basic Zm9v\r\n" +
	"X-Waitroom-Visitor: spoofed\r\n" +
	"x-waitroom-event: spoofed\r\n" +
	"X-Waitroom-Anything: x\r\n" +
	"X-Forwarded-For: 6.6.6.6\r\n" +
	"X-Forwarded-Proto: https\r\n" +
	"X-Forwarded-Host: shop.example\r\n" +
	"X-Forwarded-Port: 443\r\n" +
	"X-Real-IP: 6.6.6.6\r\n" +
	"Forwarded: for=6.6.6.6\r\n" +
	"CF-Connecting-IP: 6.6.6.6\r\n" +
	"cf-connecting-ip: 7.7.7.7\r\n" +
	"X-Bypass-Secret: s3cret\r\n" +
	"Cookie: a=1; wr_pass=P; b=2\r\n" +
	"Cookie: wr_ticket=T\r\n" +
	"x-custom-Case: Kept\r\n" +
	"\r\n"

func TestRequestHeaderRules(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		trusted []string
		fw      func(*Forward)
		want    map[string][]string // header → every value expected (nil: absent)
	}{
		{
			name: "untrusted peer",
			want: map[string][]string{
				"Host": {"site.example"}, "User-Agent": {"test-agent"}, "Accept": {"*/*"}, "x-custom-Case": {"Kept"},
				"X-Waitroom-Visitor": {"v-1"}, "X-Waitroom-Event": {"summer"}, "X-Waitroom-Anything": nil,
				"X-Forwarded-For": {"127.0.0.1"}, "X-Real-Ip": {"127.0.0.1"}, "X-Forwarded-Proto": {"http"},
				"X-Forwarded-Host": {"site.example"}, "X-Forwarded-Port": nil, "Forwarded": nil,
				"Cookie": {"a=1; b=2"}, "Connection": nil, "X-Hop": nil, "Keep-Alive": nil, "Proxy-Connection": nil,
				"TE": nil, "Trailer": nil, "Upgrade": nil, "Proxy-Authorization": nil, "X-Bypass-Secret": nil,
				"Content-Length": nil, "Transfer-Encoding": nil,
			},
		},
		{
			name:    "trusted peer",
			trusted: []string{"127.0.0.0/8"},
			want: map[string][]string{
				"X-Forwarded-For": {"6.6.6.6, 127.0.0.1"}, "X-Real-Ip": {"6.6.6.6"}, "X-Forwarded-Proto": {"https"},
				"X-Forwarded-Host": {"shop.example"}, "X-Forwarded-Port": {"443"}, "Forwarded": nil,
				"X-Waitroom-Visitor": {"v-1"}, "Host": {"site.example"},
			},
		},
		{
			name: "client address header, untrusted peer",
			fw:   func(fw *Forward) { fw.ClientIPHeaders = [][]byte{[]byte("Cf-Connecting-Ip")}; fw.OwnXFF = true },
			want: map[string][]string{
				"Cf-Connecting-Ip": {"127.0.0.1"}, "X-Forwarded-For": {"127.0.0.1"}, "X-Real-Ip": {"127.0.0.1"},
			},
		},
		{
			// The client address was read from another header: the
			// peer's X-Forwarded-For is not passed on.
			name:    "client address header, trusted peer",
			trusted: []string{"127.0.0.0/8"},
			fw: func(fw *Forward) {
				fw.ClientIP = netip.MustParseAddr("198.51.100.9")
				fw.ClientIPHeaders = [][]byte{[]byte("Cf-Connecting-Ip")}
				fw.OwnXFF = true
			},
			want: map[string][]string{
				"Cf-Connecting-Ip": {"198.51.100.9"}, "X-Forwarded-For": {"198.51.100.9"}, "X-Real-Ip": {"198.51.100.9"},
				"X-Forwarded-Port": {"443"},
			},
		},
		{
			name: "host rewritten",
			cfg:  Config{Host: "origin.internal"},
			want: map[string][]string{"Host": {"origin.internal"}, "X-Forwarded-Host": {"site.example"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			o := testOrigin(t, tt.cfg, origin(t, rec.handle))
			f := newFront(t, o, tt.trusted...)
			f.fw = func(fw *Forward) {
				fw.Visitor, fw.Event = []byte("v-1"), []byte("summer")
				if tt.fw != nil {
					tt.fw(fw)
				}
			}
			resp, body := roundTrip(t, f.addr, hostile)
			if resp.StatusCode != 200 || body != "hello" {
				t.Fatalf("got %d %q", resp.StatusCode, body)
			}
			got := rec.last()
			if got.line != "GET /p?q=1" {
				t.Fatalf("request line %q", got.line)
			}
			for k, want := range tt.want {
				if vs := got.values(k); strings.Join(vs, "|") != strings.Join(want, "|") {
					t.Errorf("%s = %q, want %q", k, vs, want)
				}
			}
			// Response rules.
			for _, k := range []string{"X-Resp-Hop", "Keep-Alive", "Proxy-Authenticate", "Upgrade", HeaderComplete} {
				if v := resp.Header.Values(k); len(v) > 0 {
					t.Errorf("response header %s = %q reached the client", k, v)
				}
			}
			if resp.Header.Get("X-Normal") != "kept" || resp.Header.Get("Set-Cookie") != "s=1; Path=/" {
				t.Errorf("response headers lost: %v", resp.Header)
			}
			if out := f.last(); !out.Complete || out.Status != 200 || out.Err != nil {
				t.Errorf("outcome %+v", out)
			}
		})
	}
}

// TestTargets checks that the origin receives Forward.Target, which the
// test front (like the proxy) fills from proxy/target, whatever form the
// client used.
func TestTargets(t *testing.T) {
	rec := &recorder{}
	o := testOrigin(t, Config{}, origin(t, rec.handle))
	f := newFront(t, o)
	tests := []struct {
		target, want string
	}{
		{"/a/b?c=d&e=%2F", "GET /a/b?c=d&e=%2F"},
		{"/a//b/../c", "GET /a/c"},
		{"http://site.example/x?y", "GET /x?y"},
		{"http://site.example", "GET /"},
		{"http://site.example?q", "GET /?q"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			resp, _ := roundTrip(t, f.addr, "GET "+tt.target+" HTTP/1.1\r\nHost: site.example\r\n\r\n")
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got := rec.last().line; got != tt.want {
				t.Fatalf("request line %q, want %q", got, tt.want)
			}
		})
	}
}

// TestForwardRefusesTarget: Forward sends nothing for a target that is not
// origin-form, and never falls back to the request's own.
func TestForwardRefusesTarget(t *testing.T) {
	rec := &recorder{}
	o := testOrigin(t, Config{}, origin(t, rec.handle))
	for _, target := range []string{"", "*", "http://x/a", "/a#b", "/a b", "/a\x00"} {
		f := newForwardFixture(t, o)
		f.fw.Target = []byte(target)
		if out := o.Forward(f.ctx, &f.fw); !errors.Is(out.Err, ErrClient) {
			t.Fatalf("target %q: outcome %+v, want ErrClient", target, out)
		}
	}
	if n := rec.count.Load(); n != 0 {
		t.Fatalf("the origin saw %d requests", n)
	}
}

func TestNoBodyResponses(t *testing.T) {
	addr := origin(t, func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Path()) {
		case "/204":
			ctx.SetStatusCode(204)
		case "/304":
			ctx.SetStatusCode(304)
		default:
			ctx.SetBodyString(strings.Repeat("x", 1234))
		}
	})
	o := testOrigin(t, Config{}, addr)
	f := newFront(t, o)
	tests := []struct {
		req, wantLength string
		status          int
	}{
		{"HEAD /x HTTP/1.1\r\nHost: a\r\n\r\n", "1234", 200},
		{"GET /204 HTTP/1.1\r\nHost: a\r\n\r\n", "", 204},
		{"GET /304 HTTP/1.1\r\nHost: a\r\n\r\n", "", 304},
	}
	for _, tt := range tests {
		t.Run(tt.req[:8], func(t *testing.T) {
			c, err := net.Dial("tcp", f.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			io.WriteString(c, tt.req)
			br := bufio.NewReader(c)
			head := readHead(t, br)
			if !strings.Contains(head.line, " "+strconv.Itoa(tt.status)+" ") && !strings.HasSuffix(head.line, " "+strconv.Itoa(tt.status)) {
				t.Fatalf("status line %q", head.line)
			}
			if got := strings.Join(head.values("Content-Length"), ","); got != tt.wantLength {
				t.Fatalf("Content-Length %q, want %q", got, tt.wantLength)
			}
			// The connection is reusable: nothing follows the head.
			io.WriteString(c, "GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
			if next := readHead(t, br); !strings.HasSuffix(next.line, "200 OK") {
				t.Fatalf("next response %q", next.line)
			}
		})
	}
}

func readHead(t *testing.T, br *bufio.Reader) headLines {
	t.Helper()
	var b strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading a response head: %v", err)
		}
		if line == "\r\n" {
			return parseHead(b.String())
		}
		b.WriteString(line)
	}
}

func TestErrors(t *testing.T) {
	hang := make(chan struct{})
	slow := origin(t, func(ctx *fasthttp.RequestCtx) { <-hang })
	t.Cleanup(func() { close(hang) }) // before the origin's shutdown waits for it
	garbage := rawOrigin(t, func(c net.Conn, n int) {
		readRequest(c)
		io.WriteString(c, "HTTP/1.1 2xx Nope\r\n\r\n")
	})
	tests := []struct {
		name   string
		cfg    Config
		addrs  []string
		want   error
		status int
	}{
		{"refused", Config{}, []string{closedAddr(t)}, ErrUnavailable, 502},
		{"timeout", Config{ReadTimeout: 200 * time.Millisecond}, []string{slow}, ErrTimeout, 504},
		{"garbage", Config{}, []string{garbage}, ErrUpstream, 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOrigin(t, tt.cfg, tt.addrs...)
			f := newFront(t, o)
			status, _ := get(t, f.addr, "/")
			if status != tt.status {
				t.Fatalf("status %d, want %d", status, tt.status)
			}
			if out := f.last(); !errors.Is(out.Err, tt.want) || out.Status != 0 {
				t.Fatalf("outcome %+v, want %v", out, tt.want)
			}
		})
	}
}

func TestMaxResponseBodySize(t *testing.T) {
	addr := origin(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/declared" {
			ctx.SetBodyString(strings.Repeat("x", 5000))
			return
		}
		ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
			for range 10 {
				w.WriteString(strings.Repeat("y", 1000))
				w.Flush()
			}
		})
	})
	o := testOrigin(t, Config{MaxResponseBodySize: 4096, BufferBodySize: -1}, addr)
	f := newFront(t, o)
	if status, _ := get(t, f.addr, "/declared"); status != 502 {
		t.Fatalf("declared too long: status %d", status)
	}
	c, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET /stream HTTP/1.1\r\nHost: a\r\n\r\n")
	b, _ := io.ReadAll(c) // the server cuts the connection
	_, chunks, _ := strings.Cut(string(b), "\r\n\r\n")
	if strings.HasSuffix(chunks, "0\r\n\r\n") || strings.Count(chunks, "y") != 4096 {
		t.Fatalf("the stream was not cut at the limit: %d bytes of body", strings.Count(chunks, "y"))
	}
	waitFor(t, "the connection released", func() bool { return o.InFlight() == 0 })
}

// rawOrigin accepts connections and runs serve on each (n counts them
// from 1) until the test ends.
func rawOrigin(t testing.TB, serve func(c net.Conn, n int)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 1; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(20 * time.Second))
				serve(c, n)
			}()
		}
	}()
	return ln.Addr().String()
}

// readRequest reads one request head (and a Content-Length body) from c
// and returns the request line.
func readRequest(c net.Conn) (string, error) {
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	length := 0
	for {
		h, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		if h == "\r\n" {
			break
		}
		if k, v, ok := strings.Cut(h, ":"); ok && strings.EqualFold(k, "Content-Length") {
			for _, d := range strings.TrimSpace(v) {
				length = length*10 + int(d-'0')
			}
		}
	}
	if _, err := io.CopyN(io.Discard, br, int64(length)); err != nil {
		return "", err
	}
	return strings.TrimSpace(line), nil
}
