package httpguard

import (
	"bytes"
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/internal/ascii"
)

// Sentinel errors of Check; every one of them means "answer 400 and close
// the connection": the request's framing is ambiguous, so nothing after it
// on the connection can be trusted either.
var (
	// ErrLengthAndChunked: both Content-Length and Transfer-Encoding.
	ErrLengthAndChunked = errors.New("httpguard: both content-length and transfer-encoding")
	// ErrContentLength: a Content-Length that is repeated, empty, not all
	// digits or too long.
	ErrContentLength = errors.New("httpguard: invalid or repeated content-length")
	// ErrTransferEncoding: a Transfer-Encoding other than exactly one
	// "chunked".
	ErrTransferEncoding = errors.New("httpguard: transfer-encoding other than chunked")
	// ErrFolding: obsolete line folding (a header line starting with a
	// space or tab).
	ErrFolding = errors.New("httpguard: obsolete line folding")
	// ErrMalformed: a header line without a colon, a name that is not a
	// token, or a bare CR or LF.
	ErrMalformed = errors.New("httpguard: malformed header line")
)

// Error codes of Classify, the "error" field of the JSON error body.
const (
	CodeBadRequest      = "bad_request"
	CodeHeadersTooLarge = "headers_too_large"
	CodePayloadTooLarge = "payload_too_large"
	CodeRequestTimeout  = "request_timeout"
)

// maxContentLengthDigits bounds a Content-Length: 18 digits stay below
// 2^63 and are far beyond any body the proxy accepts.
const maxContentLengthDigits = 18

// Check refuses the request-smuggling shapes that fasthttp lets through,
// looking at h.RawHeaders(), the header block exactly as it was received.
// Run it first on every request; on an error answer 400 and close the
// connection. It returns nil for a header that was not parsed from the
// wire (no raw bytes). It allocates nothing.
func Check(h *fasthttp.RequestHeader) error {
	raw := h.RawHeaders()
	lengths, chunked := 0, 0
	for len(raw) > 0 {
		i := bytes.IndexByte(raw, '\n')
		if i < 0 {
			// fasthttp hands over only complete blocks; be strict anyway.
			return ErrMalformed
		}
		if i == 0 || raw[i-1] != '\r' {
			return ErrMalformed // bare LF
		}
		line := raw[:i-1]
		raw = raw[i+1:]
		if len(line) == 0 {
			break // the blank line that ends the block
		}
		if line[0] == ' ' || line[0] == '\t' {
			return ErrFolding
		}
		// fasthttp has refused other control characters in values already.
		if bytes.IndexByte(line, '\r') >= 0 {
			return ErrMalformed // bare CR
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return ErrMalformed
		}
		name := line[:colon]
		for _, c := range name {
			if !tokenTable[c] {
				return ErrMalformed
			}
		}
		switch {
		case len(name) == len("content-length") && ascii.EqualFold(name, "content-length"):
			lengths++
			if lengths > 1 || !validLength(ascii.TrimOWS(line[colon+1:])) {
				return ErrContentLength
			}
		case len(name) == len("transfer-encoding") && ascii.EqualFold(name, "transfer-encoding"):
			chunked++
			if chunked > 1 || !ascii.EqualFold(ascii.TrimOWS(line[colon+1:]), "chunked") {
				return ErrTransferEncoding
			}
		}
	}
	if lengths > 0 && chunked > 0 {
		return ErrLengthAndChunked
	}
	return nil
}

// Classify maps an error of the fasthttp server (what its ErrorHandler
// receives) or of Check to the status and error code to answer with:
// headers beyond the server's ReadBufferSize → 431 "headers_too_large",
// a body beyond MaxRequestBodySize → 413 "payload_too_large", a read
// timeout → 408 "request_timeout", anything else (malformed or smuggling-ish
// framing, a broken chunk, a missing Host) → 400 "bad_request". The
// connection must be closed after the answer (fasthttp's ErrorHandler path
// does so by itself).
func Classify(err error) (status int, code string) {
	var small *fasthttp.ErrSmallBuffer
	var te interface{ Timeout() bool }
	switch {
	case errors.As(err, &small):
		return fasthttp.StatusRequestHeaderFieldsTooLarge, CodeHeadersTooLarge
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return fasthttp.StatusRequestEntityTooLarge, CodePayloadTooLarge
	case errors.As(err, &te) && te.Timeout():
		return fasthttp.StatusRequestTimeout, CodeRequestTimeout
	}
	return fasthttp.StatusBadRequest, CodeBadRequest
}

// validLength reports whether v is a Content-Length: 1 to 18 digits.
func validLength(v []byte) bool {
	if len(v) == 0 || len(v) > maxContentLengthDigits {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// tokenTable holds the bytes of an RFC 9110 token (a header name).
var tokenTable = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// HasBody reports whether the request declares a body: a positive
// Content-Length, or chunked.
//
// With the server's StreamRequestBody, fasthttp v1.74 does not discard
// what a handler leaves unread of a body: the rest of it is parsed as the
// next request on the connection (verified by TestUnreadBodyIsNotARequest).
// Behind a proxy that reuses connections for several clients, that is
// request smuggling. So a handler that answers such a request without
// reading its body to the end (the waiting-room page, an error) must close
// the connection: if HasBody { ctx.SetConnectionClose() }.
// upstream.Forward does so itself when it fails.
func HasBody(h *fasthttp.RequestHeader) bool {
	cl := h.ContentLength()
	return cl > 0 || cl == -1
}
