package proxy

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/internal/ascii"
)

// cookie returns the value of the first cookie called name in the
// request's Cookie headers, or nil. It reads the raw header values in
// place, where fasthttp's CookieBytes would parse, decode and validate
// every cookie of the request into a list first: a gated request and a
// status poll only need waitroom's one cookie, and a malformed value fails
// the token's verification anyway. Names compare exactly (RFC 6265); a
// value may be quoted. It allocates nothing.
func cookie(h *fasthttp.RequestHeader, name []byte) []byte {
	for _, line := range h.PeekAll(fasthttp.HeaderCookie) {
		if v, ok := cookieIn(line, name); ok {
			return v
		}
	}
	return nil
}

// cookieIn finds name in one Cookie header value ("a=1; b=2").
func cookieIn(line, name []byte) ([]byte, bool) {
	for len(line) > 0 {
		pair := line
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			pair, line = line[:i], line[i+1:]
		} else {
			line = nil
		}
		eq := bytes.IndexByte(pair, '=')
		if eq < 0 || !bytes.Equal(ascii.TrimOWS(pair[:eq]), name) {
			continue
		}
		v := ascii.TrimOWS(pair[eq+1:])
		if n := len(v); n >= 2 && v[0] == '"' && v[n-1] == '"' {
			v = v[1 : n-1]
		}
		return v, true
	}
	return nil, false
}
