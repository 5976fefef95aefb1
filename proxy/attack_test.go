package proxy

import (
	"os"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/internal/testkit/caddytest"
)

// The attack suite: request shapes that try to reach a gated path
// without a pass, sent as raw bytes over TCP to waitroom itself
// (TestAttack), and through real nginx auth_request (TestNginxAuthRequestAttack)
// and real Caddy forward_auth (TestCaddyForwardAuthAttack) in front of the
// same recording origin. Every row asserts that the origin never saw a
// gated path without a pass, judged the way origins read paths (see
// originReadings), and never got a header a client forged.

// attack is one request shape.
type attack struct {
	name string
	// raw is what the client sends: {{HOST}} is the server's host:port,
	// {{PASS}} a valid pass for event "show", {{UA}} the user agent it is
	// bound to, {{SMUGLEN}} and {{SMUGHEX}} the length of smuggled in
	// decimal and hex, {{LONGLEN}} the length of a long body around it.
	raw string
	// reqs is how many responses the client waits for at most (1 when 0):
	// the requests in raw that a server might answer.
	reqs int
	// want are waitroom's answers when it is the front server, in order;
	// the connection may not carry more. (Fronted by nginx or Caddy, the
	// statuses are theirs and only logged.)
	want []int
	// mayReset: the server closes the connection with unread bytes, and
	// the kernel's reset can beat the response to the client; then no
	// response is fine.
	mayReset bool
	// pass: the request carries the pass, and the origin must see it as
	// that visitor.
	pass bool
	// halfClose shuts the client's sending side after raw, so that a
	// server waiting for more sees the end.
	halfClose bool
}

// longBody is more than the proxy reads away of a body it does not use.
const longBody = 100000

// smuggled is a request for the gated path hidden in another's body.
const smuggled = "GET /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\n\r\n"

// get is a GET for target with the usual head.
func get(target string) string {
	return "GET " + target + " HTTP/1.1\r\nHost: {{HOST}}\r\n\r\n"
}

// forgedHeaders are client headers that waitroom sets for the origin, or
// that origins trust for routing or the client address, in the spellings
// servers and frameworks read alike (CGI, PHP, Rails and Django read "_"
// as "-"). Each carries the value "forged", which must never reach the
// origin.
const forgedHeaders = forgedRouting + "X-Original-URI: forged\r\n"

// forgedRouting are forgedHeaders without X-Original-URI, which an
// auth_request front that sends its own X-Forwarded-Uri and passes a
// client's X-Original-URI on to waitroom would have refused (401: the two
// disagree) before any other forged header could be seen at the site.
const forgedRouting = "X-Original-URL: forged\r\nX-Rewrite-URL: forged\r\n" +
	"X-Waitroom-Visitor: forged\r\nX_Waitroom_Visitor: forged\r\nX-Waitroom-Event: forged\r\nX_Waitroom_Event: forged\r\n" +
	"X-Forwarded-For: forged\r\nX_Forwarded_For: forged\r\nX-Forwarded-Host: forged\r\nX_Original_URL: forged\r\n" +
	"X-Forwarded-Prefix: /forged\r\nX_Forwarded_Prefix: /forged\r\n"

var attacks = []attack{
	// Absolute-form: accepted only for the request's own Host, then
	// forwarded in origin-form.
	{name: "absolute-form with a fragment", raw: get("http://{{HOST}}#/events/secret"), want: []int{400}},
	{name: "absolute-form with a fragment for another host", raw: "GET http://x#/events/secret HTTP/1.1\r\nHost: x\r\n\r\n", want: []int{400}},
	{name: "absolute-form for another host", raw: get("http://other.example/events/secret"), want: []int{400}},
	{name: "absolute-form for another host, pass path", raw: get("http://other.example/static/x"), want: []int{400}},
	{name: "absolute-form for another port", raw: get("http://127.0.0.1:1/events/secret"), want: []int{400}},
	{name: "absolute-form for its own host", raw: get("http://{{HOST}}/events/secret"), want: []int{200}},
	{name: "absolute-form, scheme in capitals", raw: get("HTTP://{{HOST}}/EVENTS/secret"), want: []int{200}},
	{name: "absolute-form with userinfo", raw: get("http://user:pw@{{HOST}}/events/secret"), want: []int{400}},
	{name: "absolute-form with the host as userinfo", raw: get("http://{{HOST}}@other.example/events/secret"), want: []int{400}},
	{name: "absolute-form with the gated path in the query", raw: get("http://{{HOST}}?/events/secret"), want: []int{200}},
	{name: "absolute-form, another scheme", raw: get("ftp://{{HOST}}/events/secret"), want: []int{400}},
	// fasthttp refuses a relative target before the handler.
	{name: "relative target", raw: get("events/secret"), want: []int{400}},

	// A missing or odd Host.
	{name: "HTTP/1.0 //path without Host", raw: "GET //events/secret HTTP/1.0\r\n\r\n", want: []int{400}},
	{name: "HTTP/1.0 pass path without Host", raw: "GET /static/x HTTP/1.0\r\n\r\n", want: []int{400}},
	{name: "HTTP/1.0 //path with Host", raw: "GET //events/secret HTTP/1.0\r\nHost: {{HOST}}\r\n\r\n", want: []int{200}},
	// fasthttp refuses HTTP/1.1 without Host before the handler.
	{name: "HTTP/1.1 without Host", raw: "GET /events/secret HTTP/1.1\r\n\r\n", want: []int{400}},
	{name: "Host with a path", raw: "GET /static/x HTTP/1.1\r\nHost: {{HOST}}/events/secret\r\n\r\n", want: []int{400}},
	{name: "two Host headers", raw: "GET /static/x HTTP/1.1\r\nHost: {{HOST}}\r\nHost: other.example\r\n\r\n", want: []int{400}},

	// Case, trailing dots and spaces: origins that fold them serve the
	// gated page.
	{name: "upper case", raw: get("/EVENTS/secret"), want: []int{200}},
	{name: "mixed case", raw: get("/Events/secret"), want: []int{200}},
	{name: "the directory itself", raw: get("/eVeNtS"), want: []int{200}},
	{name: "trailing dot", raw: get("/events./secret"), want: []int{200}},
	{name: "trailing dots", raw: get("/events../secret"), want: []int{200}},
	{name: "encoded trailing dot", raw: get("/events%2e/secret"), want: []int{200}},
	{name: "encoded trailing space", raw: get("/events%20/secret"), want: []int{200}},
	{name: "encoded letter", raw: get("/%65vents/secret"), want: []int{200}},
	{name: "encoded capital", raw: get("/%45VENTS/secret"), want: []int{200}},
	{name: "empty segments", raw: get("//events//secret"), want: []int{200}},
	// Letters beyond ASCII whose case mapping is an ASCII letter: Java's
	// equalsIgnoreCase (Spring, Tomcat with case-insensitive matching),
	// NTFS's upper-case table (IIS static files) and .NET's
	// ToLowerInvariant read them as "s", "i" and "k".
	{name: "long s for s", raw: get("/%C5%BFhow/seats"), want: []int{200}},
	{name: "long s for s, lower-case hex", raw: get("/%c5%bfHOW/seats"), want: []int{200}},
	{name: "dotless i for i", raw: get("/t%C4%B1ckets/x"), want: []int{200}},
	{name: "dotted capital I for i", raw: get("/T%C4%B0CKETS/x"), want: []int{200}},
	{name: "Kelvin sign for k", raw: get("/chec%E2%84%AAout/pay"), want: []int{403}},

	// Path parameters, which Tomcat, Jetty and Spring strip.
	{name: "path parameter", raw: get("/events;x/secret"), want: []int{400}},
	{name: "path parameter in an empty segment", raw: get("/;x/events/secret"), want: []int{400}},
	{name: "dot-dot with a path parameter", raw: get("/static/..;/events/secret"), want: []int{400}},
	{name: "encoded path parameter", raw: get("/events%3Bx/secret"), want: []int{400}},
	{name: "dot-dot with an encoded path parameter", raw: get("/static/..%3B/events/secret"), want: []int{400}},

	// Dot-segments, plain and encoded.
	{name: "dot-dot", raw: get("/static/../events/secret"), want: []int{200}},
	{name: "encoded dot-dot", raw: get("/static/%2e%2e/events/secret"), want: []int{200}},
	{name: "encoded dot-dot in capitals", raw: get("/static/%2E%2E/events/secret"), want: []int{200}},
	{name: "half-encoded dot-dot", raw: get("/static/.%2e/events/secret"), want: []int{200}},
	{name: "dot-dot above the root", raw: get("/../events/secret"), want: []int{400}},
	{name: "three dots (Windows reads ..)", raw: get("/static/.../events/secret"), want: []int{400}},
	// Double encoding is forwarded as it came: the origin decodes once
	// and gets a segment literally named "%2e%2e", a file name, not a
	// dot-segment. Only an origin that decodes twice (IIS before
	// MS01-026) would read "..", and no proxy can guard one that does:
	// any "%25" could then be anything.
	{name: "double-encoded dot-dot", raw: get("/static/%252e%252e/events/secret"), want: []int{200}},
	{name: "double-encoded dot-dot with encoded digits", raw: get("/static/%25%32%65%25%32%65/events/secret"), want: []int{200}},

	// Slashes and backslashes, encoded and raw; NUL.
	{name: "encoded slashes", raw: get("/static%2F..%2Fevents/secret"), want: []int{400}},
	{name: "encoded slash after dot-dot", raw: get("/static/..%2fevents/secret"), want: []int{400}},
	{name: "encoded backslash", raw: get("/static/..%5Cevents/secret"), want: []int{400}},
	{name: "raw backslash", raw: get(`/static/..\events/secret`), want: []int{400}},
	{name: "encoded NUL", raw: get("/events%00/secret"), want: []int{400}},
	{name: "encoded NUL on a pass path", raw: get("/static/x%00.js"), want: []int{400}},
	{name: "malformed escape", raw: get("/static/%zz/../events/secret"), want: []int{400}},
	{name: "IIS %u escape", raw: get("/%u0065vents/secret"), want: []int{400}},
	// An overlong UTF-8 dot is no dot to any current origin (Tomcat read
	// it as one until CVE-2008-2938): forwarded as it came.
	{name: "overlong UTF-8 dot-dot", raw: get("/static/%C0%AE%C0%AE/events/secret"), want: []int{200}},

	// Bytes that have no place in a request-target.
	{name: "UTF-8 bytes", raw: get("/\xc3\xa9vents/secret"), want: []int{400}},
	{name: "byte 0xff", raw: get("/events\xff/secret"), want: []int{400}},
	// fasthttp refuses these before the handler: a control byte in the
	// target, and a request line whose third part (after the second
	// space) is not an HTTP version.
	{name: "tab in the target", raw: get("/static/x\t/events/secret"), want: []int{400}},
	{name: "space in the target", raw: get("/static/x /events/secret"), want: []int{400}},
	{name: "HTTP/0.9 request line", raw: "GET /events/secret\r\n\r\n", want: []int{400}},

	// Methods.
	{name: "asterisk with GET", raw: get("*"), want: []int{400}},
	{name: "asterisk with OPTIONS", raw: "OPTIONS * HTTP/1.1\r\nHost: {{HOST}}\r\n\r\n", want: []int{204}},
	{name: "CONNECT", raw: "CONNECT {{HOST}} HTTP/1.1\r\nHost: {{HOST}}\r\n\r\n", want: []int{405}},
	{name: "CONNECT with a path", raw: "CONNECT /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\n\r\n", want: []int{405}},
	{name: "TRACE on the gated path", raw: "TRACE /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\n\r\n", want: []int{405}},
	{name: "TRACE on a pass path", raw: "TRACE /static/x HTTP/1.1\r\nHost: {{HOST}}\r\n\r\n", want: []int{405}},
	{name: "lower-case method", raw: "get /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\n\r\n", want: []int{200}},

	// waitroom's reserved prefix, spelled otherwise: never the origin's.
	{name: "reserved prefix in capitals", raw: get("/_WR/api/status?event=show"), want: []int{404}},
	{name: "reserved prefix with a trailing dot", raw: get("/_wr./auth"), want: []int{404}},
	{name: "reserved prefix encoded", raw: get("/%5Fwr/x"), want: []int{404}},
	{name: "reserved prefix behind dot-dot", raw: get("/static/../_Wr/x"), want: []int{404}},

	// Headers a client must not get to the origin.
	{name: "forged headers on a pass path", raw: "GET /static/hdr HTTP/1.1\r\nHost: {{HOST}}\r\n" + forgedHeaders + "\r\n", want: []int{200}},
	{name: "forged routing headers on a pass path", raw: "GET /static/hdr HTTP/1.1\r\nHost: {{HOST}}\r\n" + forgedRouting + "\r\n", want: []int{200}},
	// Kept lines go to the origin as received, adjacent ones in one run:
	// a dropped line between kept ones, in any case and without
	// whitespace, must still be cut out of the run.
	{name: "forged headers between kept ones, re-cased, without whitespace", want: []int{200},
		raw: "GET /static/hdr HTTP/1.1\r\nHost: {{HOST}}\r\nX-Keep-A: 1\r\nx-waitroom-visitor:forged\r\nX-Keep-B: 2 \r\n" +
			"X-WAITROOM-EVENT:\tforged \r\nX-Keep-C:3\r\nx_original_url:forged\r\nX-Keep-D: 4\r\n\r\n"},
	// fasthttp would trim the space, other servers too; refused.
	{name: "forged headers with a space before the colon", want: []int{400},
		raw: "GET /static/hdr HTTP/1.1\r\nHost: {{HOST}}\r\nX-Original-URL : forged\r\nX-Rewrite-URL\t: forged\r\n" +
			"X-Waitroom-Visitor : forged\r\nX-Forwarded-Prefix : /forged\r\n\r\n"},
	{name: "forged headers in a chunked body's trailer", want: []int{200},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n" +
			"X-Original-URL: forged\r\nX-Waitroom-Visitor: forged\r\nX_Waitroom_Visitor: forged\r\n\r\n"},
	{name: "forged headers on the gated path", raw: "GET /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\n" + forgedHeaders + "\r\n", want: []int{200}},

	// A client address from an untrusted peer's headers: the direct rig
	// lets 192.0.2.0/24 skip the queue, and none of these may put a
	// client there.
	{name: "spoofed client address in a bypass network", want: []int{200},
		raw: "GET /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\nX-Forwarded-For: 192.0.2.1\r\nForwarded: for=192.0.2.1\r\n" +
			"X-Real-IP: 192.0.2.1\r\nCF-Connecting-IP: 192.0.2.1\r\nTrue-Client-IP: 192.0.2.1\r\nX-Client-IP: 192.0.2.1\r\n\r\n"},

	// Request smuggling: framing the front and the origin could read
	// differently is refused, and a body waitroom answers without reading
	// is read away, so the next request on the connection is a request.
	{name: "CL.TE", reqs: 2, want: []int{400},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled},
	{name: "TE.CL", reqs: 2, want: []int{400},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nTransfer-Encoding: chunked\r\nContent-Length: 48\r\n\r\n0\r\n\r\n" + smuggled},
	{name: "folded Transfer-Encoding", reqs: 2, want: []int{400},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nTransfer-Encoding:\r\n chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" + smuggled},
	{name: "Transfer-Encoding with a space before the colon", reqs: 2, want: []int{400},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nTransfer-Encoding : chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" + smuggled},
	{name: "Transfer-Encoding not chunked", reqs: 2, want: []int{400},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n" + smuggled},
	{name: "two Transfer-Encodings", reqs: 2, want: []int{400},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n" + smuggled},
	{name: "duplicate Content-Length", reqs: 2, want: []int{400},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nContent-Length: 0\r\nContent-Length: 48\r\n\r\n" + smuggled},
	{name: "Content-Length with a sign", reqs: 2, want: []int{400},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nContent-Length: +0\r\n\r\n" + smuggled},
	{name: "Content-Length as a list", reqs: 2, want: []int{400},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nContent-Length: 0, 0\r\n\r\n" + smuggled},
	{name: "chunk size not hex", reqs: 2, want: []int{400},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n" + smuggled},
	{name: "negative chunk size", reqs: 2, want: []int{400},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nhello\r\n0\r\n\r\n" + smuggled},
	{name: "chunk size with 0x", reqs: 2, want: []int{400},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n" + smuggled},
	{name: "chunk size overflowing 64 bits", reqs: 2, want: []int{400},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000005\r\nhello\r\n0\r\n\r\n" + smuggled},
	{name: "chunk shorter than its size", reqs: 2, want: []int{400},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n" + smuggled},
	{name: "pipelined after a valid chunked body", reqs: 2, want: []int{200, 200},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" + smuggled},
	{name: "pipelined behind a gated POST's unread body", reqs: 2, want: []int{200, 200},
		raw: "POST /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\nContent-Length: 5\r\n\r\nhello" + smuggled},
	{name: "request in a gated POST's unread body", reqs: 2, want: []int{200, 200},
		raw: "POST /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\nContent-Length: {{SMUGLEN}}\r\n\r\n" + smuggled + get("/static/after")},
	{name: "request in a gated POST's unread chunked body", reqs: 2, want: []int{200, 200},
		raw: "POST /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\nTransfer-Encoding: chunked\r\n\r\n{{SMUGHEX}}\r\n" + smuggled + "\r\n0\r\n\r\n" + get("/static/after")},
	{name: "request in a blocked POST's unread body", reqs: 2, want: []int{403, 200},
		raw: "POST /checkout/pay HTTP/1.1\r\nHost: {{HOST}}\r\nContent-Length: {{SMUGLEN}}\r\n\r\n" + smuggled + get("/static/after")},
	{name: "request in an expect-continue body", reqs: 2, want: []int{200, 200},
		raw: "POST /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\nExpect: 100-continue\r\nContent-Length: {{SMUGLEN}}\r\n\r\n" +
			smuggled + get("/static/after")},
	{name: "request in a GET's body", reqs: 2, want: []int{200, 200},
		raw: "GET /static/x HTTP/1.1\r\nHost: {{HOST}}\r\nContent-Length: {{SMUGLEN}}\r\n\r\n" + smuggled + get("/static/after")},
	{name: "request in a pass-path POST's body", reqs: 2, want: []int{200, 200},
		raw: "POST /static/up HTTP/1.1\r\nHost: {{HOST}}\r\nContent-Length: {{SMUGLEN}}\r\n\r\n" + smuggled + get("/static/after")},
	// More than the drain limit: waitroom answers and closes instead of
	// reading it all, so the request at the end is never parsed.
	{name: "request behind a long unread body", want: []int{200}, mayReset: true,
		raw: "POST /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\nContent-Length: {{LONGLEN}}\r\n\r\n" +
			strings.Repeat("a", longBody) + smuggled},
	// fasthttp does not answer a head with bare LF line ends while the
	// connection stays open (it waits for more); at the client's end of
	// input it refuses it.
	{name: "bare LF line ends", raw: "GET /events/secret HTTP/1.1\nHost: {{HOST}}\n\n", halfClose: true, want: []int{400}},

	// Upgrades: a tunnel to the origin would carry requests past the gate.
	// The recording origin answers an upgrade with a plain 200, so the
	// connection must stay HTTP and the next request be waitroom's.
	{name: "WebSocket upgrade the origin refuses", reqs: 2, want: []int{200, 200},
		raw: "GET /static/ws HTTP/1.1\r\nHost: {{HOST}}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
			"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n" + smuggled},
	{name: "h2c upgrade", reqs: 2, want: []int{200, 200},
		raw: "GET /static/h2c HTTP/1.1\r\nHost: {{HOST}}\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n" +
			"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n" + smuggled},
	{name: "h2 prior knowledge", raw: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", want: []int{400}},
	// Paths under the reserved prefix that leave it again: nginx sends
	// what it normalises into /_wr/ to waitroom, never to the site.
	{name: "out of the reserved prefix", raw: get("/_wr/../events/secret"), want: []int{200}},
	{name: "out of the reserved prefix, encoded", raw: get("/_wr/%2e%2e/events/secret"), want: []int{200}},

	// The new ways past the room: a crawler's User-Agent without its
	// published addresses, and the no-JavaScript form and status page
	// asked to send the visitor to the gated path or another host.
	{name: "crawler User-Agent on the gated path", want: []int{200},
		raw: "GET /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\nUser-Agent: Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)\r\n\r\n"},
	{name: "no-JS join returning to the gated path", want: []int{303},
		raw: "POST /_wr/nojs/join HTTP/1.1\r\nHost: {{HOST}}\r\nOrigin: http://{{HOST}}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 36\r\n\r\nevent=show&return=%2Fevents%2Fsecret"},
	{name: "no-JS status returning to another host", raw: get("/_wr/nojs/status?event=show&return=//evil.example/events/secret"), want: []int{401}},

	// Credentials in headers, for native apps: only a valid pass of the
	// path's event, once, in Authorization: Bearer or X-Waitroom-Pass;
	// and the auth endpoint's Envoy form never leaves the prefix.
	{name: "a bearer token that is no pass", want: []int{200},
		raw: "GET /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\nAuthorization: Bearer forged\r\nUser-Agent: {{UA}}\r\n\r\n"},
	{name: "the pass in Authorization twice", want: []int{200},
		raw: "GET /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\nAuthorization: Bearer {{PASS}}\r\nAuthorization: Bearer {{PASS}}\r\nUser-Agent: {{UA}}\r\n\r\n"},
	{name: "the pass under another scheme", want: []int{200},
		raw: "GET /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\nAuthorization: Basic {{PASS}}\r\nUser-Agent: {{UA}}\r\n\r\n"},
	{name: "a forged X-Waitroom-Pass", want: []int{200},
		raw: "GET /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\nX-Waitroom-Pass: forged\r\nUser-Agent: {{UA}}\r\n\r\n"},
	{name: "the auth endpoint's Envoy form, out of the prefix", raw: get("/_wr/auth/../../events/secret"), want: []int{200}},
	{name: "the auth endpoint's Envoy form, encoded dot-dot", raw: get("/_wr/auth/%2e%2e/%2e%2e/events/secret"), want: []int{200}},

	// The control: with a pass the harness sees the origin serve the
	// gated path, as that visitor, without a forged header.
	{name: "control: a valid pass", pass: true, want: []int{200},
		raw: "GET /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\nCookie: wr_pass_show={{PASS}}\r\nUser-Agent: {{UA}}\r\n\r\n"},
	{name: "control: a valid pass and forged routing headers", pass: true, want: []int{200},
		raw: "GET /EVENTS/secret HTTP/1.1\r\nHost: {{HOST}}\r\nCookie: wr_pass_show={{PASS}}\r\nUser-Agent: {{UA}}\r\n" + forgedRouting + "\r\n"},
	{name: "control: a valid pass as a bearer token", pass: true, want: []int{200},
		raw: "GET /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\nAuthorization: Bearer {{PASS}}\r\nUser-Agent: {{UA}}\r\n\r\n"},
	{name: "control: a valid pass and a forged X-Original-URI", pass: true, want: []int{200},
		raw: "GET /events/secret HTTP/1.1\r\nHost: {{HOST}}\r\nCookie: wr_pass_show={{PASS}}\r\nUser-Agent: {{UA}}\r\n" + forgedHeaders + "\r\n"},
}

// TestAttack sends every attack to waitroom as the front server, served
// exactly as in production (Proxy.Server).
func TestAttack(t *testing.T) {
	r := newRig(t, withEventsRoute, withBypass([]string{"192.0.2.0/24"}, ""))
	runAttacks(t, r, front{name: "waitroom", addr: strings.TrimPrefix(r.url, "http://"), direct: true})
}

// TestNginxAuthRequestAttack sends every attack through nginx running the
// shipped configs/nginx-auth-request.conf: nginx asks /_wr/auth with the
// raw $request_uri and forwards that same URI to the site.
func TestNginxAuthRequestAttack(t *testing.T) {
	r := newRig(t, withEventsRoute, authRequestMode)
	ngx := startNginxAuthRequest(t, r)
	runAttacks(t, r, front{name: "nginx", addr: ngx.Addr, passThrough: []string{"x-forwarded-for"}})
}

// startCaddyForwardAuth runs Caddy with the shipped
// configs/caddy-forward-auth.Caddyfile's site block, pointed at the rig's
// waitroom and its origin as the site.
func startCaddyForwardAuth(t *testing.T, r *rig) *caddytest.Server {
	t.Helper()
	conf, err := os.ReadFile("../configs/caddy-forward-auth.Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	const open = "shop.example.com {\n"
	i, j := strings.Index(string(conf), open), strings.LastIndex(string(conf), "}")
	if i < 0 || j < i {
		t.Fatalf("configs/caddy-forward-auth.Caddyfile no longer has a site block %q", open)
	}
	site := string(conf[i+len(open) : j])
	for old, new := range map[string]string{
		"127.0.0.1:8080": strings.TrimPrefix(r.url, "http://"),
		"127.0.0.1:9000": r.origin.addr,
	} {
		if !strings.Contains(site, old) {
			t.Fatalf("configs/caddy-forward-auth.Caddyfile no longer has %q", old)
		}
		site = strings.ReplaceAll(site, old, new)
	}
	return caddytest.Start(t, caddytest.Options{Site: site})
}

// TestCaddyForwardAuthAttack sends every attack through a real Caddy
// forward_auth running the shipped configs/caddy-forward-auth.Caddyfile.
// (Without its request_header lines, this suite finds a client's
// X_Waitroom_Visitor, X-Original-URL and X-Rewrite-URL at the site.)
func TestCaddyForwardAuthAttack(t *testing.T) {
	r := newRig(t, withEventsRoute, authRequestMode)
	cdy := startCaddyForwardAuth(t, r)
	runAttacks(t, r, front{name: "caddy", addr: cdy.Addr, passThrough: []string{"x-forwarded-for"}})
}
