package proxyproto

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// serve wraps a loopback listener; trustLoopback says whether 127.0.0.1
// is a trusted balancer.
func serve(t *testing.T, trustLoopback bool, timeout time.Duration) *Listener {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	trusted := func(a netip.Addr) bool { return trustLoopback && a == netip.MustParseAddr("127.0.0.1") }
	l := NewListener(inner, Config{Trusted: trusted, Timeout: timeout})
	t.Cleanup(func() { l.Close() })
	return l
}

func dial(t *testing.T, l net.Listener, send []byte) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if len(send) > 0 {
		if _, err := c.Write(send); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// accept runs Accept in the background.
func accept(l net.Listener) <-chan net.Conn {
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			close(ch)
			return
		}
		ch <- c
	}()
	return ch
}

// closedByServer reports whether the server closed c without sending
// anything.
func closedByServer(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, err := c.Read(make([]byte, 1))
	if n != 0 || (err != io.EOF && !errors.Is(err, syscall.ECONNRESET)) {
		t.Fatalf("read %d bytes, err %v: the connection was not closed", n, err)
	}
}

func TestListenerTrusted(t *testing.T) {
	tests := []struct {
		name   string
		header []byte
		want   string // "" for the peer's own address
	}{
		{"v1", []byte("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n"), "192.0.2.1:56324"},
		{"v1 ipv6", []byte("PROXY TCP6 2001:db8::1 2001:db8::2 7 443\r\n"), "[2001:db8::1]:7"},
		{"v1 mapped unmapped", []byte("PROXY TCP6 ::ffff:192.0.2.1 ::1 7 443\r\n"), "192.0.2.1:7"},
		{"v1 unknown keeps peer", []byte("PROXY UNKNOWN\r\n"), ""},
		{"v2", v2(0x21, 0x11, v4block("192.0.2.1", "198.51.100.2", 56324, 443)), "192.0.2.1:56324"},
		{"v2 ipv6 tlv", v2(0x21, 0x21, v6block("2001:db8::1", "2001:db8::2", 7, 443), 4, 0, 1, 0), "[2001:db8::1]:7"},
		{"v2 local keeps peer", v2(0x20, 0x11, v4block("192.0.2.1", "198.51.100.2", 1, 2)), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := serve(t, true, time.Minute)
			got := accept(l)
			// The header and the first request arrive in one write: what
			// follows the header must reach the server intact.
			c := dial(t, l, append(append([]byte(nil), tt.header...), "hello"...))
			sc := <-got
			if sc == nil {
				t.Fatal("not accepted")
			}
			defer sc.Close()
			want := c.LocalAddr().String()
			if tt.want != "" {
				want = tt.want
			}
			if sc.RemoteAddr().String() != want {
				t.Fatalf("RemoteAddr %v, want %s", sc.RemoteAddr(), want)
			}
			buf := make([]byte, 5)
			if _, err := io.ReadFull(sc, buf); err != nil || string(buf) != "hello" {
				t.Fatalf("read %q, %v", buf, err)
			}
			// And what is sent later, too.
			c.Write([]byte("world!"))
			buf = make([]byte, 6)
			if _, err := io.ReadFull(sc, buf); err != nil || string(buf) != "world!" {
				t.Fatalf("read %q, %v", buf, err)
			}
			if s := l.Stats(); s.Accepted != 1 {
				t.Fatalf("stats %+v", s)
			}
		})
	}
}

// TestListenerRefuses: an untrusted peer is closed even with a perfect
// header; a trusted one without a header, with a broken one, or too
// slowly, is closed too; none of them is ever accepted.
func TestListenerRefuses(t *testing.T) {
	good := []byte("PROXY TCP4 192.0.2.1 198.51.100.2 56324 443\r\n")
	tests := []struct {
		name    string
		trusted bool
		send    []byte
		stat    func(Stats) uint64
	}{
		{"untrusted v1", false, good, func(s Stats) uint64 { return s.Untrusted }},
		{"untrusted v2", false, v2(0x21, 0x11, v4block("192.0.2.1", "198.51.100.2", 1, 2)), func(s Stats) uint64 { return s.Untrusted }},
		{"untrusted plain http", false, []byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), func(s Stats) uint64 { return s.Untrusted }},
		{"trusted without header", true, []byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), func(s Stats) uint64 { return s.Malformed }},
		{"trusted malformed v1", true, []byte("PROXY TCP4 192.0.2.1 198.51.100.2 56324\r\n"), func(s Stats) uint64 { return s.Malformed }},
		{"trusted malformed v2", true, v2(0x21, 0x12, v4block("192.0.2.1", "198.51.100.2", 1, 2)), func(s Stats) uint64 { return s.Malformed }},
		{"trusted silent", true, nil, func(s Stats) uint64 { return s.TimedOut }},
		{"trusted partial", true, good[:20], func(s Stats) uint64 { return s.TimedOut }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := serve(t, tt.trusted, 50*time.Millisecond)
			got := accept(l)
			c := dial(t, l, tt.send)
			closedByServer(t, c)
			if n := tt.stat(l.Stats()); n != 1 {
				t.Fatalf("stats %+v", l.Stats())
			}
			l.Close()
			if sc := <-got; sc != nil {
				t.Fatalf("accepted a connection from %v", sc.RemoteAddr())
			}
		})
	}
}

// TestListenerSlowPeerDoesNotBlock: a trusted peer that has not sent its
// header yet does not hold up the next connection.
func TestListenerSlowPeerDoesNotBlock(t *testing.T) {
	l := serve(t, true, time.Hour)
	got := accept(l)
	dial(t, l, []byte("PROXY TCP4 192.0.2.1")) // stalls mid-header
	dial(t, l, []byte("PROXY TCP4 192.0.2.9 198.51.100.2 9 443\r\n"))
	sc := <-got
	if sc == nil || sc.RemoteAddr().String() != "192.0.2.9:9" {
		t.Fatalf("accepted %v", sc)
	}
	sc.Close()
}

// flaky is a listener beneath that fails a given number of times before
// handing out connections of a real one.
type flaky struct {
	net.Listener
	fails int32
	calls atomic.Int32
}

func (f *flaky) Accept() (net.Conn, error) {
	if f.calls.Add(1) <= f.fails {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	return f.Listener.Accept()
}

// TestListenerPassesErrors: an accept error beneath reaches the caller
// unchanged (its back-off sees it), one per Accept call, and accepting
// resumes after it.
func TestListenerPassesErrors(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &flaky{Listener: inner, fails: 2}
	l := NewListener(f, Config{Trusted: func(netip.Addr) bool { return true }})
	defer l.Close()
	for i := range 2 {
		if _, err := l.Accept(); !errors.Is(err, syscall.EMFILE) {
			t.Fatalf("Accept %d: err %v, want EMFILE", i, err)
		}
	}
	got := accept(l)
	dial(t, l, []byte("PROXY TCP4 192.0.2.1 198.51.100.2 1 2\r\n"))
	if sc := <-got; sc == nil {
		t.Fatal("not accepted after the errors")
	} else {
		sc.Close()
	}
}

// TestListenerErrorsPaced: after an error the listener beneath is asked
// again only when the caller calls Accept again, so the caller's back-off
// paces the retries (no busy loop, no stale error).
func TestListenerErrorsPaced(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &flaky{Listener: inner, fails: 1 << 30}
	l := NewListener(f, Config{Trusted: func(netip.Addr) bool { return true }})
	for i := range 3 {
		if _, err := l.Accept(); !errors.Is(err, syscall.EMFILE) {
			t.Fatalf("Accept %d: err %v, want EMFILE", i, err)
		}
	}
	l.Close()
	// Three errors delivered; at most one more asked for meanwhile.
	if n := f.calls.Load(); n > 4 {
		t.Fatalf("%d accepts beneath for 3 Accept calls", n)
	}
}

func TestListenerClose(t *testing.T) {
	l := serve(t, true, time.Minute)
	got := accept(l)
	l.Close()
	if sc := <-got; sc != nil {
		t.Fatal("accepted after close")
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("err %v", err)
	}
}
