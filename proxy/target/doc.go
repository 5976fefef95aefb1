// Package target parses an HTTP request-target once, into the one
// normalised path that is both routed and forwarded.
//
// The gate is only as good as the agreement between the path waitroom
// routes and the path the origin serves. Two parsers of one request line
// disagree somewhere (a fragment, "//", "%2F", a path parameter, a case the
// origin folds), and that disagreement walks around the gate. So the proxy
// parses the raw request-target with Parse, routes on Target.Path, and sends
// the origin exactly Target.URI(): there is no second parse.
//
// # What Parse accepts
//
//   - origin-form ("/path?query"), the usual one;
//   - absolute-form ("http://host/path?query", "https://..."), which the
//     caller must check against the Host header (Target.Authority) and which
//     is forwarded in origin-form;
//   - asterisk-form ("*"), which the caller answers itself (OPTIONS only).
//
// Authority-form (CONNECT's "host:port") and anything else is ErrForm.
//
// # How a path is normalised
//
//   - percent-encoded unreserved characters (ALPHA, DIGIT, "-", ".", "_",
//     "~") are decoded; every other escape is kept, with upper-case hex;
//   - dot-segments are removed (RFC 3986 §5.2.4), after decoding, so
//     "%2e%2e" is ".." too; ".." above the root is refused, and so is a
//     segment of three or more dots (Windows servers read it as "..");
//   - empty segments ("//") are collapsed;
//   - a trailing "/" is kept.
//
// Refused with an error (the proxy answers 400 and forwards nothing): a
// fragment ("#"), control characters, spaces and bytes beyond ASCII, a raw
// backslash in the path, a malformed escape, "%00", an encoded slash or
// backslash ("%2F", "%5C") unless Options.EncodedSlashes keeps them, and a
// path parameter (";", which Tomcat, Jetty and Spring strip before they
// route) unless Options.Semicolons strips it, and an encoded one ("%3B")
// always, since servers that decode before they split parameters read it
// as one and the others as part of a name (Jetty refuses it as
// ambiguous). The query is kept as it came,
// after the same byte checks.
//
// # Matching
//
// Key derives the form routes are matched on: lower-cased (unless a route
// is case-sensitive), with the escapes of "ſ", "ı", "İ" and the Kelvin sign
// folded to "s", "i", "i" and "k" as Unicode case rules fold them (Java's
// equalsIgnoreCase, .NET's ToLowerInvariant and NTFS do), and with every
// segment's trailing dots and encoded spaces removed, since Windows file
// systems and IIS ignore them ("/events./x" is "/events/x" there). Route patterns go through Key too,
// so both sides are compared in one form.
//
// Everything here allocates nothing once a Target's buffers have grown; a
// Target is not safe for concurrent use (pool them).
//
// Normalised reports whether a target came already normalised. A caller
// that cannot forward Path itself — the auth_request endpoint, where the
// front proxy sends the site the original target — refuses one that did
// not: sites normalise such targets in ways that disagree ("/a//../b" is
// "/b" to path.Clean and "/a/b" to the WHATWG URL parser; "//h/a" is "/a"
// to Go's net/http).
//
// ValidHost and SameAuthority check a Host header and compare it with an
// absolute-form authority.
//
// What this package is not: it does not know routes or methods (package
// proxy does), and it does not decode the query.
package target
