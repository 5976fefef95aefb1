// Package httpguard holds the checks the proxy runs on every untrusted
// request before anything else looks at it: request-smuggling shapes in the
// raw header block (Check), the classification of fasthttp's own parse
// errors into a status and an error code (Classify), the client address and
// forwarded scheme and host behind trusted proxies (Trusted), and the
// validation of a return URL so that waitroom is never an open redirect
// (SameSitePath), and whether a request declares a body that must be read
// or its connection closed (HasBody).
//
// Everything on the request path allocates nothing: the functions work on
// the bytes fasthttp already holds and keep no reference to them after they
// return (a slice they return points into the request and is valid only
// until the handler returns).
//
// What fasthttp v1.74 already refuses while parsing (the server's
// ErrorHandler sees the error; Classify maps it to 400 unless said
// otherwise): a duplicate Content-Length (even with equal values), a
// Content-Length that is not all digits ("+5", "-1", "5, 5", "abc", ""),
// whitespace between a header name and its colon, a first header line that
// starts with whitespace, two Transfer-Encoding lines, a Transfer-Encoding
// other than "chunked" or "identity" (case-insensitive), any
// Transfer-Encoding in an HTTP/1.0 request, control characters in values,
// a duplicate Host, a missing Host in HTTP/1.1, and a header block larger
// than the server's ReadBufferSize (431).
//
// What fasthttp accepts and Check refuses: Content-Length together with
// Transfer-Encoding (fasthttp silently lets chunked win and drops the
// length), Transfer-Encoding "identity" (obsolete; the body would be
// ignored), obsolete line folding (fasthttp joins a line that starts with a
// space or tab to the previous header), header names with whitespace inside
// ("Transfer Encoding"), and lines ended by a bare LF or holding a bare CR.
// A broken chunked body (a size that is not hex, too long, followed by junk
// or a bare LF, or data not followed by CRLF) only shows when the body is
// read: with StreamRequestBody the reader of ctx.RequestBodyStream() gets
// the error, and proxy/upstream turns it into upstream.ErrClient (400).
//
// One more hazard sits in fasthttp itself: with StreamRequestBody, what a
// handler leaves unread of a request body is parsed as the next request on
// the connection. HasBody tells a handler that answers without reading the
// body to close the connection.
//
// It is not a web application firewall: it does not look at paths, query
// strings or bodies beyond their framing, and it does not rate-limit.
package httpguard
