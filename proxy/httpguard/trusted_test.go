package httpguard

import (
	"crypto/tls"
	"net"
	"net/netip"
	"testing"

	"github.com/valyala/fasthttp"
)

// newCtx returns a request context from peer with the given header lines
// (name, value pairs; a name may repeat).
func newCtx(peer string, headers ...string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.SetRequestURI("/")
	req.Header.SetHost("site.example")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	ap := netip.MustParseAddrPort(peer)
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, net.TCPAddrFromAddrPort(ap), nil)
	return ctx
}

// tlsConn makes fasthttp's RequestCtx.IsTLS true.
type tlsConn struct{ net.Conn }

func (tlsConn) Handshake() error                     { return nil }
func (tlsConn) ConnectionState() tls.ConnectionState { return tls.ConnectionState{} }
func (tlsConn) RemoteAddr() net.Addr                 { return &net.TCPAddr{IP: net.IPv4(203, 0, 113, 9), Port: 1} }
func (tlsConn) LocalAddr() net.Addr                  { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 443} }

func trustedSet(t testing.TB, cidrs ...string) *Trusted {
	t.Helper()
	ps := make([]netip.Prefix, len(cidrs))
	for i, c := range cidrs {
		ps[i] = netip.MustParsePrefix(c)
	}
	return NewTrusted(ps)
}

func TestClientIP(t *testing.T) {
	tr := trustedSet(t, "10.0.0.0/8", "2001:db8::/32")
	xff := fasthttp.HeaderXForwardedFor
	tests := []struct {
		name    string
		peer    string
		headers []string
		want    string
	}{
		{"untrusted peer ignores xff", "198.51.100.7:1234", []string{xff, "1.2.3.4"}, "198.51.100.7"},
		{"trusted peer without xff", "10.0.0.1:1234", nil, "10.0.0.1"},
		{"trusted peer one hop", "10.0.0.1:1234", []string{xff, "1.2.3.4"}, "1.2.3.4"},
		{"spoofed left part skipped", "10.0.0.1:1234", []string{xff, "6.6.6.6, 1.2.3.4"}, "1.2.3.4"},
		{"trusted hops skipped", "10.0.0.1:1234", []string{xff, "6.6.6.6, 1.2.3.4, 10.1.1.1, 10.2.2.2"}, "1.2.3.4"},
		{"several lines", "10.0.0.1:1234", []string{xff, "6.6.6.6, 1.2.3.4", xff, "10.1.1.1"}, "1.2.3.4"},
		{"all trusted gives leftmost", "10.0.0.1:1234", []string{xff, "10.9.9.9, 10.1.1.1"}, "10.9.9.9"},
		{"malformed rightmost", "10.0.0.1:1234", []string{xff, "1.2.3.4, garbage"}, "10.0.0.1"},
		{"malformed after trusted", "10.0.0.1:1234", []string{xff, "1.2.3.4, unknown, 10.1.1.1"}, "10.1.1.1"},
		{"empty element", "10.0.0.1:1234", []string{xff, "1.2.3.4,,10.1.1.1"}, "10.1.1.1"},
		{"port on ipv4", "10.0.0.1:1234", []string{xff, "1.2.3.4:5678"}, "1.2.3.4"},
		{"bracketed ipv6 with port", "10.0.0.1:1234", []string{xff, "[2001:db9::1]:443"}, "2001:db9::1"},
		{"ipv6", "10.0.0.1:1234", []string{xff, "2001:db9::1, 2001:db8::5"}, "2001:db9::1"},
		{"mapped ipv4 unmapped", "10.0.0.1:1234", []string{xff, "::ffff:1.2.3.4"}, "1.2.3.4"},
		{"mapped trusted peer", "[::ffff:10.0.0.1]:1234", []string{xff, "1.2.3.4"}, "1.2.3.4"},
		{"trusted ipv6 peer", "[2001:db8::9]:1234", []string{xff, "1.2.3.4"}, "1.2.3.4"},
		{"whitespace", "10.0.0.1:1234", []string{xff, " 1.2.3.4 ,\t10.1.1.1 "}, "1.2.3.4"},
		{"zone refused", "10.0.0.1:1234", []string{xff, "fe80::1%eth0"}, "10.0.0.1"},
		{"leading zero refused", "10.0.0.1:1234", []string{xff, "01.2.3.4"}, "10.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tr.ClientIP(newCtx(tt.peer, tt.headers...))
			if got != netip.MustParseAddr(tt.want) {
				t.Fatalf("got %v, want %s", got, tt.want)
			}
		})
	}
	t.Run("nil trusts nobody", func(t *testing.T) {
		var none *Trusted
		got := none.ClientIP(newCtx("10.0.0.1:1", xff, "1.2.3.4"))
		if got != netip.MustParseAddr("10.0.0.1") {
			t.Fatalf("got %v", got)
		}
	})
}

func TestProtoAndHost(t *testing.T) {
	tr := trustedSet(t, "10.0.0.0/8")
	xfp, xfh := fasthttp.HeaderXForwardedProto, fasthttp.HeaderXForwardedHost
	tests := []struct {
		name      string
		peer      string
		headers   []string
		wantProto string
		wantHost  string
	}{
		{"untrusted", "198.51.100.7:1", []string{xfp, "https", xfh, "evil.example"}, "http", "site.example"},
		{"trusted", "10.0.0.1:1", []string{xfp, "https", xfh, "shop.example"}, "https", "shop.example"},
		{"trusted http", "10.0.0.1:1", []string{xfp, "http"}, "http", "site.example"},
		{"trusted rightmost", "10.0.0.1:1", []string{xfp, "http, https", xfh, "evil.example, shop.example:8443"}, "https", "shop.example:8443"},
		{"trusted last line", "10.0.0.1:1", []string{xfp, "http", xfp, "HTTPS"}, "https", "site.example"},
		{"trusted unknown proto", "10.0.0.1:1", []string{xfp, "gopher"}, "http", "site.example"},
		{"trusted bad host", "10.0.0.1:1", []string{xfh, "evil.example/path"}, "http", "site.example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := newCtx(tt.peer, tt.headers...)
			if got := tr.Proto(ctx); got != tt.wantProto {
				t.Fatalf("Proto = %q, want %q", got, tt.wantProto)
			}
			if got := string(tr.Host(ctx)); got != tt.wantHost {
				t.Fatalf("Host = %q, want %q", got, tt.wantHost)
			}
			// Forwarded answers the three at once, alike.
			proto, host, trusts := tr.Forwarded(ctx)
			if proto != tt.wantProto || string(host) != tt.wantHost || trusts != tr.Trusts(ctx) {
				t.Fatalf("Forwarded = %q, %q, %v", proto, host, trusts)
			}
		})
	}
	t.Run("tls", func(t *testing.T) {
		ctx := &fasthttp.RequestCtx{}
		ctx.Init2(tlsConn{}, nil, false)
		if got := tr.Proto(ctx); got != "https" {
			t.Fatalf("Proto = %q", got)
		}
		if tr.Trusts(ctx) {
			t.Fatal("an untrusted TLS peer is trusted")
		}
	})
}

func TestParseAddr(t *testing.T) {
	tests := []struct {
		in string
		ok bool
	}{
		{"1.2.3.4", true},
		{"0.0.0.0", true},
		{"255.255.255.255", true},
		{"256.1.1.1", false},
		{"1.2.3", false},
		{"1.2.3.4.5", false},
		{"1..2.3", false},
		{"01.2.3.4", false},
		{"::", true},
		{"::1", true},
		{"2001:db8::1", true},
		{"2001:db8:0:0:0:0:0:1", true},
		{"::ffff:1.2.3.4", true},
		{"1:2:3:4:5:6:1.2.3.4", true},
		{"1:2:3:4:5:6:7:8:9", false},
		{"1::2::3", false},
		{"12345::", false},
		{"1:2:3:4:5:6:7::8", false},
		{"fe80::1%eth0", false},
		{"", false},
		{"localhost", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := ParseAddr([]byte(tt.in))
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if ok && got != netip.MustParseAddr(tt.in) {
				t.Fatalf("got %v", got)
			}
		})
	}
}

func TestNewTrusted(t *testing.T) {
	tr := trustedSet(t, "10.1.2.3/8", "::ffff:192.168.0.0/112")
	tests := []struct {
		addr string
		want bool
	}{
		{"10.200.0.1", true},
		{"192.168.3.4", true},
		{"::ffff:10.0.0.1", true},
		{"11.0.0.1", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if got := tr.Contains(netip.MustParseAddr(tt.addr)); got != tt.want {
				t.Fatalf("Contains = %v, want %v", got, tt.want)
			}
		})
	}
	if tr.Contains(netip.Addr{}) {
		t.Fatal("the zero address is trusted")
	}
}
