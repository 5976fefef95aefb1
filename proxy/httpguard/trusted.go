package httpguard

import (
	"net"
	"net/netip"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/internal/ascii"
)

// Trusted is the set of proxies (load balancers, CDNs) in front of
// waitroom whose client address header (X-Forwarded-For by default),
// X-Forwarded-Proto and X-Forwarded-Host are believed. From any other peer
// those headers are ignored: the peer's own address is the client.
//
// A Trusted is immutable and safe for concurrent use. The nil *Trusted
// trusts nobody.
type Trusted struct {
	prefixes []netip.Prefix
	// header is the canonical name of the client address header, read
	// as source says.
	header string
	source source
}

// How the client address header is read.
type source uint8

const (
	sourceXFF       source = iota // X-Forwarded-For: a list, walked from the right
	sourceForwarded               // RFC 7239 Forwarded: for= of each element, walked from the right
	sourceSingle                  // one address (X-Real-IP, CF-Connecting-IP, ...)
)

// Client address headers NewTrustedHeader knows by name; any other name is
// read as a single-address header, like HeaderXRealIP.
const (
	HeaderXForwardedFor  = "X-Forwarded-For"
	HeaderForwarded      = "Forwarded"
	HeaderXRealIP        = "X-Real-Ip"
	HeaderCFConnectingIP = "Cf-Connecting-Ip"
)

// NewTrusted returns the set of the given prefixes, taking the client
// address from X-Forwarded-For. IPv4-mapped IPv6 peers (::ffff:10.0.0.1)
// are matched as IPv4. Invalid prefixes are ignored; config validation is
// where they are refused.
func NewTrusted(cidrs []netip.Prefix) *Trusted {
	return NewTrustedHeader(cidrs, HeaderXForwardedFor)
}

// NewTrustedHeader is NewTrusted with the header a trusted proxy puts the
// client's address in (matched ignoring case): X-Forwarded-For (or
// empty), Forwarded (RFC 7239), or the name of a single-address header
// such as X-Real-IP or CF-Connecting-IP. See ClientIP for how each is read.
func NewTrustedHeader(cidrs []netip.Prefix, header string) *Trusted {
	t := &Trusted{prefixes: make([]netip.Prefix, 0, len(cidrs))}
	switch {
	case header == "" || strings.EqualFold(header, HeaderXForwardedFor):
		t.header, t.source = HeaderXForwardedFor, sourceXFF
	case strings.EqualFold(header, HeaderForwarded):
		t.header, t.source = HeaderForwarded, sourceForwarded
	default:
		t.header, t.source = canonicalHeader(header), sourceSingle
	}
	for _, p := range cidrs {
		if !p.IsValid() {
			continue
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		t.prefixes = append(t.prefixes, p.Masked())
	}
	return t
}

// Header returns the canonical name of the client address header
// (X-Forwarded-For for the nil *Trusted). A proxy that forwards requests
// must not pass a client's own copy of it on from an untrusted peer.
func (t *Trusted) Header() string {
	if t == nil {
		return HeaderXForwardedFor
	}
	return t.header
}

// canonicalHeader writes a header name the way fasthttp normalizes it
// (X-Real-Ip): each dash-separated word capitalized.
func canonicalHeader(name string) string {
	b := []byte(name)
	up := true
	for i, c := range b {
		switch {
		case up && 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
		case !up && 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
		up = c == '-'
	}
	return string(b)
}

// Contains reports whether a belongs to a trusted proxy.
func (t *Trusted) Contains(a netip.Addr) bool {
	if t == nil || !a.IsValid() {
		return false
	}
	a = a.Unmap()
	for _, p := range t.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Trusts reports whether the request came straight from a trusted proxy;
// pass it as upstream.Forward.KeepForwarded.
func (t *Trusted) Trusts(ctx *fasthttp.RequestCtx) bool {
	if t == nil || len(t.prefixes) == 0 {
		return false // no peer to look up: nothing is trusted
	}
	return t.Contains(PeerAddr(ctx))
}

// ClientIP returns the address of the client that made the request; it
// is the one place that decides it, and everything keyed on the client
// (rate limits, bypass networks, risk signals, device binding, the
// X-Forwarded-For the origin gets) uses its answer.
//
// It is the peer's address (the one a PROXY protocol header gave, when
// the listener reads one), unless the peer is a trusted proxy. From a
// trusted peer the client address header is read:
//
//   - X-Forwarded-For is walked from the right (across all its header
//     lines), trusted addresses are skipped, and the first untrusted one
//     is the client. A malformed entry ends the walk: the last good
//     address (trusted, and therefore a proxy that vouched for what is to
//     its right) is returned; so is the leftmost one when every entry is
//     trusted. Entries may carry a port ("1.2.3.4:80", "[::1]:80").
//   - Forwarded (RFC 7239) is walked the same way over the for= node of
//     each element: a quoted "[IPv6]" or IPv4, either with an optional
//     port. An element without exactly one for=, or whose node is
//     "unknown", an obfuscated identifier ("_hidden") or not an address,
//     is malformed; so is whatever follows a syntax error on its line.
//   - A single-address header (X-Real-IP, CF-Connecting-IP, ...) is
//     believed when it appears exactly once and holds exactly one
//     address (a port is allowed, a list is not); otherwise the peer is
//     the client.
//
// The result is unmapped (IPv4 as IPv4). It allocates nothing for a TCP
// peer.
func (t *Trusted) ClientIP(ctx *fasthttp.RequestCtx) netip.Addr {
	peer := PeerAddr(ctx)
	if !t.Contains(peer) {
		return peer
	}
	values := ctx.Request.Header.PeekAll(t.header)
	switch t.source {
	case sourceForwarded:
		return t.walkForwarded(values, peer)
	case sourceSingle:
		if len(values) != 1 {
			return peer
		}
		v := ascii.TrimOWS(values[0])
		if lastIndexComma(v) >= 0 {
			return peer
		}
		if a, ok := parseForwardedAddr(v); ok {
			return a
		}
		return peer
	}
	last := peer
	for i := len(values) - 1; i >= 0; i-- {
		v := values[i]
		for len(v) > 0 {
			j := lastIndexComma(v)
			el := ascii.TrimOWS(v[j+1:])
			if j < 0 {
				v = v[:0]
			} else {
				v = v[:j]
			}
			a, ok := parseForwardedAddr(el)
			if !ok {
				return last
			}
			if !t.Contains(a) {
				return a
			}
			last = a
		}
	}
	return last
}

// Proto returns the scheme the client used: "https" when the connection
// is TLS, or when its PROXY protocol header (read only from a trusted
// balancer) says the client's was; from a trusted peer, "https" when the
// rightmost X-Forwarded-Proto entry says https (or wss); "http" otherwise.
func (t *Trusted) Proto(ctx *fasthttp.RequestCtx) string {
	return proto(ctx, t.Trusts(ctx))
}

// Forwarded returns what the origin is told of the client's request in
// one look at the peer: Proto, Host and Trusts, as the three would.
func (t *Trusted) Forwarded(ctx *fasthttp.RequestCtx) (scheme string, host []byte, trusts bool) {
	trusts = t.Trusts(ctx)
	return proto(ctx, trusts), forwardedHost(ctx, trusts), trusts
}

// proto is Proto for a peer already known to be trusted or not.
func proto(ctx *fasthttp.RequestCtx, trusts bool) string {
	if ctx.IsTLS() {
		return "https"
	}
	if balancerSaysTLS(ctx.Conn()) {
		return "https"
	}
	if !trusts {
		return "http"
	}
	v := rightmost(lastLine(&ctx.Request.Header, fasthttp.HeaderXForwardedProto))
	if ascii.EqualFold(v, "https") || ascii.EqualFold(v, "wss") {
		return "https"
	}
	return "http"
}

// clientTLS is a connection that knows whether the client's own was TLS:
// proxyproto.Conn, from a PROXY v2 header.
type clientTLS interface{ ClientTLS() bool }

// balancerSaysTLS reports whether c, or a connection it wraps, is a
// clientTLS that says TLS. The PROXY protocol reader sits under the
// listener's connection limits (netlimit), which wrap its connections
// and hand them out through NetConn.
func balancerSaysTLS(c net.Conn) bool {
	for c != nil {
		if t, ok := c.(clientTLS); ok {
			return t.ClientTLS()
		}
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return false
		}
		c = w.NetConn()
	}
	return false
}

// Host returns the host the client asked for: from a trusted peer, the
// rightmost X-Forwarded-Host entry when it is a plausible host[:port];
// else the Host header. The slice points into the request and is valid
// until the handler returns.
func (t *Trusted) Host(ctx *fasthttp.RequestCtx) []byte {
	return forwardedHost(ctx, t.Trusts(ctx))
}

// forwardedHost is Host for a peer already known to be trusted or not.
func forwardedHost(ctx *fasthttp.RequestCtx, trusts bool) []byte {
	if trusts {
		if v := rightmost(lastLine(&ctx.Request.Header, fasthttp.HeaderXForwardedHost)); validHost(v) {
			return v
		}
	}
	return ctx.Request.Header.Host()
}

// PeerAddr returns the address of the connection's peer (unmapped), or
// the zero Addr when it is not an IP address (an in-memory listener). It
// is the previous hop, not the client: anything keyed on the client uses
// Trusted.ClientIP.
func PeerAddr(ctx *fasthttp.RequestCtx) netip.Addr {
	if c, ok := ctx.Conn().(peerAddrConn); ok {
		if a, ok := c.PeerAddr(); ok {
			return a
		}
	}
	switch a := ctx.RemoteAddr().(type) {
	case *net.TCPAddr:
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			return netip.Addr{}
		}
		return ip.Unmap()
	case nil:
		return netip.Addr{}
	default:
		ap, err := netip.ParseAddrPort(a.String())
		if err != nil {
			return netip.Addr{}
		}
		return ap.Addr().Unmap()
	}
}

// peerAddrConn is a connection that has its peer's address at hand, as
// PeerAddr would read it from RemoteAddr (a netlimit listener's
// connections): asking it saves converting a net.Addr per request.
type peerAddrConn interface {
	PeerAddr() (netip.Addr, bool)
}

// lastLine returns the value of the last header line named key.
func lastLine(h *fasthttp.RequestHeader, key string) []byte {
	all := h.PeekAll(key)
	if len(all) == 0 {
		return nil
	}
	return all[len(all)-1]
}

// rightmost returns the last comma-separated element of v, trimmed.
func rightmost(v []byte) []byte {
	return ascii.TrimOWS(v[lastIndexComma(v)+1:])
}

func lastIndexComma(v []byte) int {
	for i := len(v) - 1; i >= 0; i-- {
		if v[i] == ',' {
			return i
		}
	}
	return -1
}

// validHost reports whether v looks like host[:port]: 1 to 255 bytes of
// letters, digits, '-', '.', ':', '[', ']' and '_'.
func validHost(v []byte) bool {
	if len(v) == 0 || len(v) > 255 {
		return false
	}
	for _, c := range v {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '.' || c == ':' || c == '[' || c == ']' || c == '_':
		default:
			return false
		}
	}
	return true
}
