package netlimit

import (
	"net"
	"net/netip"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/proxy/httpguard"
)

// fixedListener accepts the given connections, then blocks.
type fixedListener struct {
	net.Listener
	conns chan net.Conn
}

func (l fixedListener) Accept() (net.Conn, error) { return <-l.conns, nil }

// nilAddrConn is a connection with no remote address.
type nilAddrConn struct{ net.Conn }

func (nilAddrConn) RemoteAddr() net.Addr { return nil }

// A wrapped connection answers httpguard.PeerAddr from the address it
// read at Accept: the very address PeerAddr reads from the connection
// beneath (TCP over IPv4 and IPv6, an address that is not IP, none).
func TestPeerAddrMatchesHTTPGuard(t *testing.T) {
	peer := func(c net.Conn) netip.Addr {
		var ctx fasthttp.RequestCtx
		ctx.Init2(c, nil, false)
		return httpguard.PeerAddr(&ctx)
	}
	var conns []net.Conn
	for _, network := range []string{"tcp4", "tcp6"} {
		ln, err := net.Listen(network, map[string]string{"tcp4": "127.0.0.1:0", "tcp6": "[::1]:0"}[network])
		if err != nil {
			t.Logf("%s: %v", network, err)
			continue
		}
		t.Cleanup(func() { ln.Close() })
		c, err := net.Dial(network, ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, s)
	}
	p1, p2 := net.Pipe()
	t.Cleanup(func() { p1.Close(); p2.Close() })
	conns = append(conns, p1, nilAddrConn{p2})
	for _, raw := range conns {
		ch := make(chan net.Conn, 1)
		ch <- raw
		l := Wrap(fixedListener{conns: ch}, "test", Limits{}, nil, nil)
		wrapped, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		_, known := wrapped.(interface{ PeerAddr() (netip.Addr, bool) }).PeerAddr()
		if _, isNil := raw.(nilAddrConn); known == isNil {
			t.Errorf("%v: PeerAddr known = %v", raw.RemoteAddr(), known)
		}
		if got, want := peer(wrapped), peer(raw); got != want {
			t.Errorf("%v: PeerAddr through the listener = %v, beneath it %v", raw.RemoteAddr(), got, want)
		}
	}
	if len(conns) < 3 {
		t.Fatal("no TCP connection to compare")
	}
}
