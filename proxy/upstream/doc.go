// Package upstream forwards the proxy's admitted requests to an origin: a
// pool of addresses behind one name, with keep-alive connections,
// least-loaded balancing, active health checks, load shedding, retries of
// what is safe to retry, streaming both ways and WebSocket pass-through.
//
// It is not the proxy's router, gate or waiting room (package proxy
// decides whether and where a request goes, and answers the errors), and it
// does not speak HTTP/2 to origins.
//
// # Connections and balancing
//
// Each address has a fasthttp.HostClient used as its connection pool
// (dialing, MaxConns, MaxConnWaitTimeout, idle clean-up, read and write
// buffers); the round trip itself is waitroom's own, on connections taken
// from that pool. (fasthttp.LBClient is not used: it can only run
// HostClient.Do, which allocates per streamed response, cannot hand over a
// connection for a WebSocket, and has no health checks to take an address
// out of rotation.) A request goes to the healthy address with the fewest
// requests in flight, ties spread round-robin; an address that refused a
// connection is passed over for a second while another is healthy.
//
// # Headers sent to the origin
//
// The request line is the client's method and target (an absolute-form
// target is reduced to its path and query) with HTTP/1.1. The headers are
// the client's, as received, in order, with their spelling, except:
//
//   - Host is the client's, or Config.Host when set.
//   - Hop-by-hop headers are removed (RFC 9110 §7.6.1): Connection and
//     every header it names, Keep-Alive, Proxy-Connection, TE, Trailer,
//     Transfer-Encoding, Upgrade (kept for a WebSocket upgrade), and
//     Proxy-Authorization and Proxy-Authenticate.
//   - Expect is removed: the front server has already answered
//     100-continue.
//   - Framing is waitroom's: Content-Length for a body of known length
//     (and for an empty POST), Transfer-Encoding: chunked for a chunked
//     one; request trailers are dropped.
//   - Every header whose name starts with X-Waitroom- is removed. Then
//     X-Waitroom-Visitor and X-Waitroom-Event are set when Forward says
//     so. An origin can therefore rely on them: when present, they come
//     from waitroom, which verified the visitor's pass for that event.
//   - X-Forwarded-For: from an untrusted peer, it is set to the client's
//     address; from a trusted proxy (Forward.KeepForwarded), the incoming
//     values are kept and the peer's address is appended, as every proxy
//     in a chain does. X-Real-Ip is set to the client's address
//     (Forward.ClientIP) either way.
//   - X-Forwarded-Proto and X-Forwarded-Host are set by waitroom (from
//     Forward.Proto and Forward.Host, which believe a trusted proxy only).
//     Other X-Forwarded-* headers and the client-address headers origins
//     trust (CF-Connecting-IP, True-Client-IP, X-Client-IP,
//     X-Cluster-Client-IP) are kept from a trusted proxy only; Forwarded
//     (RFC 7239) and a client's X-Real-Ip are removed.
//   - Headers that rewrite the path at origins that trust them
//     (X-Original-URL, X-Rewrite-URL, X-Original-URI, X-Original-Method)
//     are removed: the origin serves the path waitroom routed, nothing
//     else.
//   - Any spelling with "_" for "-" of a header waitroom manages
//     (X_Waitroom_Visitor, X_Forwarded_For, Content_Length) is removed:
//     CGI, PHP, Rails and Django read it as the dashed name.
//   - The request-target is Forward.Target, the caller's normalised
//     origin-form target (package proxy/target): the request's own is
//     never read.
//   - Cookies named in Forward.StripCookies (waitroom's ticket and pass)
//     are removed from Cookie; the header goes when none is left. Headers
//     named in Forward.StripHeaders (the bypass secret) are removed.
//
// # Headers sent to the client
//
// The origin's status and headers, except the hop-by-hop ones (as above;
// a 101 keeps Connection: Upgrade and Upgrade) and X-Waitroom-Complete,
// which Forward reads ("1" sets Outcome.Complete: the visitor finished,
// e.g. bought) and removes. The status line is HTTP/1.1; framing is the
// front server's (a chunked or close-delimited body reaches the client
// chunked). Interim responses (100, 103) are dropped.
//
// # Bodies
//
// A request body streams from the client to the origin as the front
// server reads it (StreamRequestBody), so uploads use bounded memory. If
// the client's body breaks (an invalid chunk size, a connection cut short
// of its Content-Length), Forward stops, closes the origin connection in
// the middle of the request and returns ErrClient: the origin saw a
// message without its end (no last chunk, or fewer bytes than the
// Content-Length) and will not act on it as a complete request. A body
// longer than Config.MaxRequestBodySize is refused the same way
// (ErrTooLarge), or before the origin is contacted when its length is
// declared. (fasthttp's own MaxRequestBodySize does not apply to streamed
// bodies.)
//
// A response body with a Content-Length up to Config.BufferBodySize is read
// whole before Forward returns, freeing the origin connection at once.
// Larger, chunked and close-delimited bodies stream after the handler has
// returned, from the origin's read buffer to the client; the client is
// flushed whenever the origin has nothing more buffered, so server-sent
// events arrive as they are sent. ReadTimeout applies to every wait for
// more of the body, so endless streams live as long as bytes flow (send a
// comment line as a heartbeat if events are rarer than ReadTimeout).
//
// # Retries, timeouts, shedding
//
// A request is sent again (preferably to another address) only when the
// connection failed before any byte of a response arrived, the method is
// idempotent and there was no body — at most Config.Retries times. A
// failure to connect is always retried on the other addresses: nothing
// reached the origin. A connection idle in the pool for more than a second
// is probed (one non-blocking read) before it is used, so that a
// connection the origin closed meanwhile costs neither a retry nor a
// request that cannot be retried.
// Forward returns ErrShed at once, never queueing, when MaxInFlight
// requests are in flight (until their bodies are relayed, WebSockets
// closed), and when an address's MaxConns connections are all busy for
// MaxConnWaitTimeout. Config.ReservedAdmitted of MaxInFlight is kept for
// requests with Forward.Admitted: the others are shed (ErrShed wrapping
// ErrReserved) once they hold the rest.
//
// A request with a streamed body takes its in-flight slot and an origin
// connection only once the body's first bytes have arrived: a client that
// sends a head and stalls holds nothing of the origin's until its read
// deadline (the front server's body timeout) ends it with ErrBodyTimeout.
// Forward.Body, when set, is read instead of the streamed body (the proxy
// passes a reader that enforces a minimum rate).
//
// # WebSocket
//
// A GET with Connection: upgrade and Upgrade: websocket is sent with those
// headers; if the origin answers 101, Forward hijacks the client's
// connection, relays the 101 and then splices bytes both ways until either
// side closes (then both are closed). The dial and the handshake are bound
// by DialTimeout, WriteTimeout and ReadTimeout; the spliced connection has
// no deadline. A WebSocket counts as in flight while it is open. Any other
// answer to an upgrade is relayed as a normal response.
package upstream
