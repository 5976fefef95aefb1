package httpguard

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func trustedHeader(t testing.TB, header string, cidrs ...string) *Trusted {
	t.Helper()
	ps := make([]netip.Prefix, len(cidrs))
	for i, c := range cidrs {
		ps[i] = netip.MustParsePrefix(c)
	}
	return NewTrustedHeader(ps, header)
}

// TestClientIPForwarded is the attack table of the RFC 7239 Forwarded
// reader: spoofed chains, malformed and obfuscated nodes, IPv6 forms.
func TestClientIPForwarded(t *testing.T) {
	tr := trustedHeader(t, "forwarded", "10.0.0.0/8", "2001:db8::/32")
	fw := "Forwarded"
	tests := []struct {
		name    string
		peer    string
		headers []string
		want    string
	}{
		{"untrusted peer ignored", "198.51.100.7:1", []string{fw, "for=1.2.3.4"}, "198.51.100.7"},
		{"untrusted peer ignored, xff too", "198.51.100.7:1", []string{fw, "for=1.2.3.4", "X-Forwarded-For", "1.2.3.4"}, "198.51.100.7"},
		{"trusted peer no header", "10.0.0.1:1", nil, "10.0.0.1"},
		{"xff not read in forwarded mode", "10.0.0.1:1", []string{"X-Forwarded-For", "1.2.3.4"}, "10.0.0.1"},
		{"one hop", "10.0.0.1:1", []string{fw, "for=192.0.2.43"}, "192.0.2.43"},
		{"rfc example", "10.0.0.1:1", []string{fw, "for=192.0.2.43, for=198.51.100.17;by=203.0.113.60;proto=http;host=example.com"}, "198.51.100.17"},
		{"spoofed left skipped", "10.0.0.1:1", []string{fw, "for=6.6.6.6, for=1.2.3.4, for=10.1.1.1"}, "1.2.3.4"},
		{"several lines", "10.0.0.1:1", []string{fw, "for=6.6.6.6, for=1.2.3.4", fw, "for=10.1.1.1"}, "1.2.3.4"},
		{"all trusted gives leftmost", "10.0.0.1:1", []string{fw, "for=10.9.9.9, for=10.1.1.1"}, "10.9.9.9"},
		{"case-insensitive name", "10.0.0.1:1", []string{fw, "FOR=1.2.3.4;Proto=https"}, "1.2.3.4"},
		{"for not first", "10.0.0.1:1", []string{fw, "proto=https;for=1.2.3.4"}, "1.2.3.4"},
		{"quoted ipv4", "10.0.0.1:1", []string{fw, `for="1.2.3.4"`}, "1.2.3.4"},
		{"quoted ipv4 port", "10.0.0.1:1", []string{fw, `for="1.2.3.4:4711"`}, "1.2.3.4"},
		{"quoted ipv6", "10.0.0.1:1", []string{fw, `for="[2001:db9::1]"`}, "2001:db9::1"},
		{"quoted ipv6 port", "10.0.0.1:1", []string{fw, `for="[2001:db9:cafe::17]:4711"`}, "2001:db9:cafe::17"},
		{"obfuscated port", "10.0.0.1:1", []string{fw, `for="1.2.3.4:_abc"`}, "1.2.3.4"},
		{"mapped unmapped", "10.0.0.1:1", []string{fw, `for="[::ffff:1.2.3.4]"`}, "1.2.3.4"},
		{"mapped trusted skipped", "10.0.0.1:1", []string{fw, `for=1.2.3.4, for="[::ffff:10.1.1.1]"`}, "1.2.3.4"},
		{"trusted ipv6 peer", "[2001:db8::9]:1", []string{fw, "for=1.2.3.4"}, "1.2.3.4"},
		{"quoted comma in other param", "10.0.0.1:1", []string{fw, `for=6.6.6.6;host="a,for=10.1.1.1", for=1.2.3.4`}, "1.2.3.4"},
		{"quoted comma, spoof behind", "10.0.0.1:1", []string{fw, `for=1.2.3.4;x="a, for=10.1.1.1"`}, "1.2.3.4"},
		{"escaped quote", "10.0.0.1:1", []string{fw, `for=1.2.3.4;x="a\"b, c"`}, "1.2.3.4"},
		{"whitespace", "10.0.0.1:1", []string{fw, " for=1.2.3.4 ; proto=http ,\tfor=10.1.1.1 "}, "1.2.3.4"},
		{"empty elements skipped", "10.0.0.1:1", []string{fw, "for=1.2.3.4, , ,for=10.1.1.1"}, "1.2.3.4"},

		// Malformed: the walk stops at the last trusted element.
		{"unknown", "10.0.0.1:1", []string{fw, "for=1.2.3.4, for=unknown"}, "10.0.0.1"},
		{"unknown after trusted", "10.0.0.1:1", []string{fw, "for=1.2.3.4, for=unknown, for=10.1.1.1"}, "10.1.1.1"},
		{"obfuscated node", "10.0.0.1:1", []string{fw, "for=1.2.3.4, for=_hidden"}, "10.0.0.1"},
		{"quoted obfuscated", "10.0.0.1:1", []string{fw, `for="_gazonk"`}, "10.0.0.1"},
		{"no for", "10.0.0.1:1", []string{fw, "for=1.2.3.4, by=10.0.0.9;proto=https"}, "10.0.0.1"},
		{"two for in one element", "10.0.0.1:1", []string{fw, "for=10.1.1.1;for=1.2.3.4"}, "10.0.0.1"},
		{"unquoted ipv6", "10.0.0.1:1", []string{fw, "for=[2001:db9::1]"}, "10.0.0.1"},
		{"unquoted port", "10.0.0.1:1", []string{fw, "for=1.2.3.4:80"}, "10.0.0.1"},
		{"bare ipv6 quoted", "10.0.0.1:1", []string{fw, `for="2001:db9::1"`}, "10.0.0.1"},
		{"zone", "10.0.0.1:1", []string{fw, `for="[fe80::1%eth0]"`}, "10.0.0.1"},
		{"port too long", "10.0.0.1:1", []string{fw, `for="1.2.3.4:123456"`}, "10.0.0.1"},
		{"empty port", "10.0.0.1:1", []string{fw, `for="1.2.3.4:"`}, "10.0.0.1"},
		{"bracket unclosed", "10.0.0.1:1", []string{fw, `for="[2001:db9::1"`}, "10.0.0.1"},
		{"escape in for", "10.0.0.1:1", []string{fw, `for="\1.2.3.4"`}, "10.0.0.1"},
		{"leading zero", "10.0.0.1:1", []string{fw, "for=01.2.3.4"}, "10.0.0.1"},
		{"empty value", "10.0.0.1:1", []string{fw, "for="}, "10.0.0.1"},
		{"no equals", "10.0.0.1:1", []string{fw, "for 1.2.3.4"}, "10.0.0.1"},
		{"unterminated quote eats line", "10.0.0.1:1", []string{fw, `for=1.2.3.4;x="a, for=10.1.1.1`}, "10.0.0.1"},
		{"syntax error eats rest of line", "10.0.0.1:1", []string{fw, "for=1.2.3.4 for=10.1.1.1", fw, "for=10.2.2.2"}, "10.2.2.2"},
		{"xff style value", "10.0.0.1:1", []string{fw, "1.2.3.4"}, "10.0.0.1"},
		{"spoof right of malformed", "10.0.0.1:1", []string{fw, "for=unknown, for=6.6.6.6"}, "6.6.6.6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tr.ClientIP(newCtx(tt.peer, tt.headers...))
			if got != netip.MustParseAddr(tt.want) {
				t.Fatalf("got %v, want %s", got, tt.want)
			}
		})
	}
}

// TestClientIPSingle covers the single-address headers: believed from a
// trusted peer only, and only when there is exactly one address.
func TestClientIPSingle(t *testing.T) {
	for _, header := range []string{"X-Real-IP", "CF-Connecting-IP", "true-client-ip"} {
		tr := trustedHeader(t, header, "10.0.0.0/8", "2001:db8::/32")
		tests := []struct {
			name    string
			peer    string
			headers []string
			want    string
		}{
			{"untrusted peer ignored", "198.51.100.7:1", []string{header, "1.2.3.4"}, "198.51.100.7"},
			{"trusted", "10.0.0.1:1", []string{header, "1.2.3.4"}, "1.2.3.4"},
			{"trusted, other spelling", "10.0.0.1:1", []string{strings.ToLower(header), "1.2.3.4"}, "1.2.3.4"},
			{"trusted ipv6", "[2001:db8::1]:1", []string{header, "2001:db9::7"}, "2001:db9::7"},
			{"mapped", "10.0.0.1:1", []string{header, "::ffff:1.2.3.4"}, "1.2.3.4"},
			{"with port", "10.0.0.1:1", []string{header, "1.2.3.4:99"}, "1.2.3.4"},
			{"whitespace", "10.0.0.1:1", []string{header, " 1.2.3.4\t"}, "1.2.3.4"},
			{"trusted address itself", "10.0.0.1:1", []string{header, "10.9.9.9"}, "10.9.9.9"},
			{"missing", "10.0.0.1:1", nil, "10.0.0.1"},
			{"xff ignored", "10.0.0.1:1", []string{"X-Forwarded-For", "1.2.3.4"}, "10.0.0.1"},
			{"list refused", "10.0.0.1:1", []string{header, "6.6.6.6, 1.2.3.4"}, "10.0.0.1"},
			{"two lines refused", "10.0.0.1:1", []string{header, "6.6.6.6", header, "1.2.3.4"}, "10.0.0.1"},
			{"garbage refused", "10.0.0.1:1", []string{header, "unknown"}, "10.0.0.1"},
			{"empty refused", "10.0.0.1:1", []string{header, ""}, "10.0.0.1"},
			{"zone refused", "10.0.0.1:1", []string{header, "fe80::1%eth0"}, "10.0.0.1"},
			{"forwarded syntax refused", "10.0.0.1:1", []string{header, "for=1.2.3.4"}, "10.0.0.1"},
		}
		for _, tt := range tests {
			t.Run(header+"/"+tt.name, func(t *testing.T) {
				got := tr.ClientIP(newCtx(tt.peer, tt.headers...))
				if got != netip.MustParseAddr(tt.want) {
					t.Fatalf("got %v, want %s", got, tt.want)
				}
			})
		}
	}
}

func TestTrustedHeader(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "X-Forwarded-For"}, {"x-forwarded-for", "X-Forwarded-For"}, {"FORWARDED", "Forwarded"},
		{"x-real-ip", "X-Real-Ip"}, {"CF-Connecting-IP", "Cf-Connecting-Ip"}, {"True-Client-IP", "True-Client-Ip"},
	} {
		if got := NewTrustedHeader(nil, tt.in).Header(); got != tt.want {
			t.Errorf("Header(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := (*Trusted)(nil).Header(); got != "X-Forwarded-For" {
		t.Errorf("nil Header = %q", got)
	}
}

func TestClientIPAllocsHeaders(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are checked in the full run")
	}
	for _, tt := range []struct{ header, value string }{
		{"Forwarded", `for=6.6.6.6, for="[2001:db9::1]:80";proto=https, for=1.2.3.4;host="a,b", for=10.1.1.1`},
		{"Forwarded", `for=unknown, for=10.1.1.1`},
		{"X-Real-IP", "1.2.3.4"},
		{"CF-Connecting-IP", "2001:db9::1"},
	} {
		tr := trustedHeader(t, tt.header, "10.0.0.0/8")
		ctx := newCtx("10.0.0.1:1234", tt.header, tt.value)
		fn := func() { _ = tr.ClientIP(ctx) }
		fn()
		if n := testing.AllocsPerRun(200, fn); n != 0 {
			t.Errorf("%s %q: %v allocations per call", tt.header, tt.value, n)
		}
	}
}

// FuzzForwarded holds the Forwarded reader, on a well-formed line, to a
// plain reference (split outside quotes, walk from the right); on any
// line, the answer is the peer, the leftmost-or-later trusted hop, or an
// address that a for= of the line names.
func FuzzForwarded(f *testing.F) {
	for _, s := range []string{"for=1.2.3.4", `for="[2001:db8::1]:80", for=10.1.1.1`, "for=unknown, for=10.0.0.2",
		`for=6.6.6.6;host="a,for=10.1.1.1", for=1.2.3.4`, `for="_x"`, "for=1.2.3.4;for=10.1.1.1", `x="\"`, " , ,",
		`for="1.2.3.4:_p";by=x;proto=https`, "for=[::1]", `for="[::ffff:10.1.1.1]"`} {
		f.Add(s)
	}
	tr := trustedHeader(f, "Forwarded", "10.0.0.0/8")
	peer := netip.MustParseAddr("10.0.0.1")
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\r\n\x00") {
			return
		}
		ctx := newCtx("10.0.0.1:1", "Forwarded", line)
		raw := ctx.Request.Header.Peek("Forwarded")
		got := tr.ClientIP(ctx)
		if !got.IsValid() {
			t.Fatalf("%q: invalid result", line)
		}
		els, ok := refForwarded(string(raw))
		if !ok {
			if got != peer && !strings.Contains(string(raw), "=") {
				t.Fatalf("%q: %v from a line without a pair", raw, got)
			}
			return
		}
		want := peer
		for i := len(els) - 1; i >= 0; i-- {
			a, good := refNode(els[i])
			if !good {
				break
			}
			want = a
			if !tr.Contains(a) {
				break
			}
		}
		if got != want {
			t.Fatalf("%q: got %v, reference %v (elements %q)", raw, got, want, els)
		}
	})
}

// refForwarded splits a well-formed Forwarded line into the raw for=
// value of each element ("" for an element without exactly one for=);
// ok is false when the line is not well-formed.
func refForwarded(line string) (fors []string, ok bool) {
	var els []string
	inQ, start := false, 0
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case inQ && c == '\\':
			i++
		case c == '"':
			inQ = !inQ
		case !inQ && c == ',':
			els = append(els, line[start:i])
			start = i + 1
		}
	}
	if inQ {
		return nil, false
	}
	els = append(els, line[start:])
	for _, el := range els {
		el = strings.Trim(el, " \t")
		if el == "" {
			continue
		}
		var pairs []string
		inQ, start = false, 0
		for i := 0; i < len(el); i++ {
			switch c := el[i]; {
			case inQ && c == '\\':
				i++
			case c == '"':
				inQ = !inQ
			case !inQ && c == ';':
				pairs = append(pairs, el[start:i])
				start = i + 1
			}
		}
		pairs = append(pairs, el[start:])
		forVal, n := "", 0
		for _, p := range pairs {
			p = strings.Trim(p, " \t")
			if p == "" {
				continue
			}
			name, val, found := strings.Cut(p, "=")
			if !found || !refToken(name) || !refValue(val) {
				return nil, false
			}
			if strings.EqualFold(name, "for") {
				forVal, n = val, n+1
			}
		}
		if n != 1 {
			forVal = ""
		}
		fors = append(fors, forVal)
	}
	return fors, true
}

func refToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(s[i])) &&
			!('a' <= s[i] && s[i] <= 'z' || 'A' <= s[i] && s[i] <= 'Z' || '0' <= s[i] && s[i] <= '9') {
			return false
		}
	}
	return true
}

func refValue(s string) bool {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		in := s[1 : len(s)-1]
		for i := 0; i < len(in); i++ {
			c := in[i]
			if c == '\\' {
				if i+1 >= len(in) || in[i+1] < 0x20 && in[i+1] != '\t' || in[i+1] == 0x7f {
					return false
				}
				i++
				continue
			}
			if c == '"' || c < 0x20 && c != '\t' || c == 0x7f {
				return false
			}
		}
		return true
	}
	return refToken(s)
}

// refNode parses a raw for= value with net/netip.
func refNode(v string) (netip.Addr, bool) {
	quoted := strings.HasPrefix(v, `"`)
	if quoted {
		v = v[1 : len(v)-1]
		if strings.Contains(v, `\`) {
			return netip.Addr{}, false
		}
	}
	host, port := v, ""
	if strings.HasPrefix(v, "[") {
		end := strings.IndexByte(v, ']')
		if end < 0 || !quoted {
			return netip.Addr{}, false
		}
		host, port = v[1:end], v[end+1:]
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" || !refPort(port) {
			return netip.Addr{}, false
		}
		return a.Unmap(), true
	}
	if i := strings.IndexByte(v, ':'); i >= 0 {
		host, port = v[:i], v[i:]
		if !quoted {
			return netip.Addr{}, false
		}
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !a.Is4() || !refPort(port) {
		return netip.Addr{}, false
	}
	return a, true
}

func refPort(p string) bool {
	if p == "" {
		return true
	}
	if !strings.HasPrefix(p, ":") || len(p) < 2 {
		return false
	}
	p = p[1:]
	if p[0] == '_' {
		return len(p) > 1 && strings.Trim(p[1:], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == ""
	}
	return len(p) <= 5 && strings.Trim(p, "0123456789") == ""
}

// balancerConn is a connection whose PROXY header said whether the
// client's connection was TLS (as proxyproto.Conn does).
type balancerConn struct {
	net.Conn
	tls bool
}

var balancerAddrs = [2]net.Addr{&net.TCPAddr{IP: net.IPv4(203, 0, 113, 9), Port: 1}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}}

func (balancerConn) RemoteAddr() net.Addr { return balancerAddrs[0] }
func (balancerConn) LocalAddr() net.Addr  { return balancerAddrs[1] }

func (c balancerConn) ClientTLS() bool { return c.tls }

// limitedConn wraps a connection as the listener's connection limits do
// (netlimit), handing it out through NetConn.
type limitedConn struct{ net.Conn }

func (c limitedConn) NetConn() net.Conn { return c.Conn }

// The PROXY header's TLS flag counts from a connection that is itself
// wrapped, as serve wraps the PROXY protocol reader's in the connection
// limits.
func TestProtoFromProxyProtocol(t *testing.T) {
	tr := trustedSet(t, "10.0.0.0/8")
	for _, c := range []struct {
		wrapped, tls bool
	}{{false, true}, {false, false}, {true, true}, {true, false}} {
		var conn net.Conn = balancerConn{tls: c.tls}
		if c.wrapped {
			conn = limitedConn{conn}
		}
		tls := c.tls
		ctx := &fasthttp.RequestCtx{}
		ctx.Init2(conn, nil, false)
		want := map[bool]string{true: "https", false: "http"}[tls]
		if got := tr.Proto(ctx); got != want {
			t.Errorf("ClientTLS %v (wrapped %v): Proto = %q, want %q", tls, c.wrapped, got, want)
		}
		fn := func() { _ = tr.Proto(ctx) }
		if n := testing.AllocsPerRun(100, fn); n != 0 {
			t.Errorf("%v allocations", n)
		}
	}
}
