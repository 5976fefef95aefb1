package httpguard

import "github.com/waitroom/waitroom/internal/ascii"

// MaxReturnPath bounds the length of a return URL SameSitePath accepts.
const MaxReturnPath = 2048

// SameSitePath validates a return URL for the "no open redirect" rule and
// returns it unchanged (the same slice) when it is safe to put in a
// Location header or a redirect field: an absolute path on this site,
// optionally followed by a query.
//
// Accepted: "/", "/events/summer", "/a/b?x=1&y=%2F". Refused: anything
// that does not start with exactly one "/" ("//evil.example",
// "/\evil.example", "https://evil.example", "evil", ""), any backslash,
// control character, space, non-ASCII byte or '#', a malformed
// percent-escape, a path whose percent-decoding starts with "//" or "/\"
// or holds a backslash or control character ("/%2F%2Fevil.example",
// "/%5Cevil"), and anything longer than MaxReturnPath. It allocates
// nothing.
func SameSitePath(raw []byte) (path []byte, ok bool) {
	if len(raw) == 0 || len(raw) > MaxReturnPath || raw[0] != '/' {
		return nil, false
	}
	inQuery := false
	// prev is the previous decoded byte of the path; decoding must never
	// produce "//" at its start.
	var prev byte
	decoded := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c <= ' ' || c >= 0x7f || c == '\\' || c == '#' {
			return nil, false
		}
		if c == '%' {
			if i+2 >= len(raw) {
				return nil, false
			}
			hi, ok1 := ascii.Unhex(raw[i+1])
			lo, ok2 := ascii.Unhex(raw[i+2])
			if !ok1 || !ok2 {
				return nil, false
			}
			i += 2
			c = hi<<4 | lo
			if c < ' ' || c == 0x7f || c == '\\' {
				return nil, false
			}
		} else if c == '?' && !inQuery {
			inQuery = true
		}
		if inQuery {
			continue
		}
		if decoded == 1 && prev == '/' && c == '/' {
			return nil, false
		}
		prev = c
		decoded++
	}
	return raw, true
}
