// Package proxyproto reads the PROXY protocol header (HAProxy's
// "proxy-protocol.txt", versions 1 and 2) that a layer-4 load balancer
// puts in front of a TCP connection to name the client it accepted, and
// wraps a net.Listener so that each accepted connection's RemoteAddr is
// that client.
//
// The wrapper trusts only the peers its Config says are load balancers: a
// connection from anyone else is closed at once, before a byte is read, so
// that no client can name itself as someone else. From a trusted peer the
// header is required, must arrive within Config.Timeout and must be well
// formed; otherwise the connection is closed. A LOCAL command (the
// balancer's own health check), an UNKNOWN (v1) or AF_UNSPEC or AF_UNIX
// (v2) address keeps the peer's own address. A v2 header's PP2_TYPE_SSL
// TLV with the client bit says the client's connection was TLS
// (Conn.ClientTLS, which httpguard.Trusted.Proto reads); other TLVs are
// skipped, but they must fill the header's length exactly.
//
// Headers are read off the accept path, one goroutine per pending
// connection, so that a slow or silent peer never holds up Accept;
// Accept returns only connections whose header has been read, so their
// RemoteAddr is final when a caller (a per-client connection limit, the
// HTTP server) first looks at it.
//
// It is not an HTTP-level client address reader: that is
// proxy/httpguard.Trusted, which also applies on top of this one (a
// client that the PROXY header names may itself be a trusted proxy whose
// X-Forwarded-For is then read).
package proxyproto
