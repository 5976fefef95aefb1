package target

import (
	"errors"

	"github.com/waitroom/waitroom/internal/ascii"
)

// Errors of Parse. Each one means "answer 400 and forward nothing".
var (
	// ErrEmpty: no request-target at all.
	ErrEmpty = errors.New("target: empty request-target")
	// ErrForm: neither origin-form, absolute-form with http or https, nor
	// asterisk-form (authority-form, a relative path, another scheme).
	ErrForm = errors.New("target: unsupported request-target form")
	// ErrAuthority: an absolute-form authority that is empty, carries user
	// information ("user@host") or holds bytes no host name has.
	ErrAuthority = errors.New("target: invalid authority")
	// ErrFragment: a "#" anywhere in the target; clients never send one.
	ErrFragment = errors.New("target: fragment in request-target")
	// ErrByte: a control character, a space, DEL or a byte beyond ASCII.
	ErrByte = errors.New("target: control or non-ASCII byte in request-target")
	// ErrBackslash: a raw "\" in the path, which some servers read as "/".
	ErrBackslash = errors.New("target: backslash in path")
	// ErrEscape: a "%" not followed by two hex digits.
	ErrEscape = errors.New("target: malformed percent-escape")
	// ErrNUL: "%00" in the path.
	ErrNUL = errors.New("target: encoded NUL in path")
	// ErrEncodedSlash: "%2F" or "%5C" in the path, without
	// Options.EncodedSlashes.
	ErrEncodedSlash = errors.New("target: encoded slash in path")
	// ErrSemicolon: a path parameter (";") with SemicolonsRefuse, or an
	// encoded one ("%3B") in either mode.
	ErrSemicolon = errors.New("target: path parameter in path")
	// ErrDotSegment: ".." above the root, or a segment of three or more
	// dots.
	ErrDotSegment = errors.New("target: dot-segment escapes the root")
)

// Form is the form a request-target came in (RFC 9112 §3.2).
type Form uint8

// Forms of a request-target.
const (
	FormOrigin Form = iota
	FormAbsolute
	FormAsterisk
)

// Semicolons says what happens to a path parameter (";" and what follows
// it up to the end of its segment).
type Semicolons uint8

// Values of Options.Semicolons.
const (
	// SemicolonsRefuse refuses a path with ";" (ErrSemicolon).
	SemicolonsRefuse Semicolons = iota
	// SemicolonsStrip removes every path parameter from the path, which is
	// then routed and forwarded without them.
	SemicolonsStrip
)

// Options loosen Parse. The zero value is the strictest.
type Options struct {
	// EncodedSlashes keeps "%2F" and "%5C" in the path (encoded) instead
	// of refusing them; Target.EncodedSlash then reports them, so that a
	// caller can refuse them on routes that do not allow them.
	EncodedSlashes bool
	// Semicolons says what happens to path parameters.
	Semicolons Semicolons
}

// Target is a parsed, normalised request-target. Reuse one (Parse resets
// it); it is not safe for concurrent use.
type Target struct {
	// Form is the form the target came in.
	Form Form
	// Path is the normalised path, percent-encoded, starting with "/"
	// ("*" for asterisk-form). It points into the Target's buffer.
	Path []byte
	// Query is what followed the first "?", unchanged; HasQuery says
	// whether there was a "?" at all.
	Query    []byte
	HasQuery bool
	// Authority is an absolute-form target's host[:port], lower-cased;
	// empty for the other forms.
	Authority []byte
	// Scheme is "http" or "https" for absolute-form, "" otherwise.
	Scheme string
	// EncodedSlash is true when Path holds "%2F" or "%5C" (only with
	// Options.EncodedSlashes).
	EncodedSlash bool

	// raw is the path as it came (it points into Parse's input).
	raw []byte

	buf  []byte // Path, then Authority, then URI's copy
	segs []int  // start offsets of the segments written to buf
}

// Normalised reports whether the path came already in the form Path has:
// no dot-segment, no "//", no escape of an unreserved character, upper-case
// hex, no path parameter stripped. A caller that cannot forward Path itself
// (the auth_request endpoint: the front proxy sends the site the original
// target) must refuse a target that is not, since origins normalise other
// targets in ways that disagree ("/a//../b" is "/b" to path.Clean but
// "/a/b" to the WHATWG URL parser, "//host/a" is "/a" to Go's net/http).
func (t *Target) Normalised() bool {
	return t.Form != FormAsterisk && string(t.raw) == string(t.Path)
}

// URI returns what the origin receives: Path, and "?" and Query when the
// target had a query. It points into the Target's buffer and is valid
// until the next Parse or URI.
func (t *Target) URI() []byte {
	if !t.HasQuery {
		return t.Path
	}
	// Path and Authority stay valid if the append moves buf: they keep
	// the old array.
	start := len(t.buf)
	t.buf = append(t.buf, t.Path...)
	t.buf = append(t.buf, '?')
	t.buf = append(t.buf, t.Query...)
	uri := t.buf[start:]
	t.buf = t.buf[:start]
	return uri
}

var asterisk = []byte("*")

// Parse parses and normalises raw, a request-target as it came on the
// request line (the bytes are not kept: Query points into raw, so raw must
// outlive the Target's use). On an error the Target holds nothing useful.
func (t *Target) Parse(raw []byte, o Options) error {
	*t = Target{buf: t.buf[:0], segs: t.segs[:0]}
	if len(raw) == 0 {
		return ErrEmpty
	}
	for _, c := range raw {
		switch {
		case c <= ' ' || c >= 0x7f:
			return ErrByte
		case c == '#':
			return ErrFragment
		}
	}
	rest := raw
	switch {
	case raw[0] == '/':
	case len(raw) == 1 && raw[0] == '*':
		t.Form, t.Path = FormAsterisk, asterisk
		return nil
	default:
		var err error
		if rest, err = t.absolute(raw); err != nil {
			return err
		}
	}
	path := rest
	for i, c := range rest {
		if c == '?' {
			path, t.Query, t.HasQuery = rest[:i], rest[i+1:], true
			break
		}
	}
	t.raw = path
	if err := t.normalise(path, o); err != nil {
		return err
	}
	if len(t.Authority) > 0 {
		// The authority still points into raw; keep it lower-cased in buf,
		// after the path.
		start := len(t.buf)
		t.buf = ascii.AppendLower(t.buf, t.Authority)
		t.Authority = t.buf[start:]
		t.Path = t.buf[:start]
	}
	return nil
}

// absolute parses "scheme://authority" off raw and returns the rest, which
// is empty or starts with "/" or "?" (an empty path is "/").
func (t *Target) absolute(raw []byte) ([]byte, error) {
	i := 0
	for i < len(raw) && raw[i] != ':' {
		i++
	}
	if i+3 > len(raw) || raw[i+1] != '/' || raw[i+2] != '/' {
		return nil, ErrForm
	}
	switch scheme := raw[:i]; {
	case ascii.EqualFold(scheme, "http"):
		t.Scheme = "http"
	case ascii.EqualFold(scheme, "https"):
		t.Scheme = "https"
	default:
		return nil, ErrForm
	}
	rest := raw[i+3:]
	j := 0
	for j < len(rest) && rest[j] != '/' && rest[j] != '?' {
		j++
	}
	auth := rest[:j]
	if len(auth) == 0 || len(auth) > 255 {
		return nil, ErrAuthority
	}
	for _, c := range auth {
		if !hostByte(c) {
			return nil, ErrAuthority // "@" (user information) among them
		}
	}
	t.Form, t.Authority = FormAbsolute, auth
	return rest[j:], nil
}

// hostByte reports whether c may appear in host[:port]: a reg-name's
// unreserved characters, digits, "." and ":", and "[" "]" for IPv6.
func hostByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c == '-' || c == '.' || c == '_' || c == '~' || c == ':' || c == '[' || c == ']'
}

// normalise writes the normalised form of path to t.buf and points t.Path
// at it. An empty path (absolute-form "http://h" or "http://h?q") is "/".
func (t *Target) normalise(path []byte, o Options) error {
	if len(path) == 0 {
		path = rootPath
	}
	t.buf = append(t.buf[:0], '/')
	trailing := false
	for i := 0; i < len(path); {
		// One segment: path[i:j], between slashes.
		if path[i] == '/' {
			i++
			trailing = true
			continue
		}
		seg := segmentAt(path, i)
		i += len(seg)
		trailing = false
		start := len(t.buf)
		if err := t.segment(seg, o); err != nil {
			return err
		}
		written := t.buf[start:]
		switch dots(written) {
		case 0:
		case 1: // "."
			t.buf = t.buf[:start]
			trailing = true
			continue
		case 2: // ".."
			t.buf = t.buf[:start]
			if len(t.segs) == 0 {
				return ErrDotSegment
			}
			t.buf = t.buf[:t.segs[len(t.segs)-1]]
			t.segs = t.segs[:len(t.segs)-1]
			trailing = true
			continue
		default:
			return ErrDotSegment
		}
		if len(written) == 0 {
			// A segment that was only a path parameter ("/;x/"): nothing
			// of it stays, as if it were empty.
			t.buf = t.buf[:start]
			trailing = true
			continue
		}
		t.segs = append(t.segs, start)
		t.buf = append(t.buf, '/')
	}
	// Every kept segment wrote a "/" after itself; drop the last one unless
	// the path ended in a slash (or a dot-segment, which stands for one).
	if len(t.segs) > 0 && !trailing {
		t.buf = t.buf[:len(t.buf)-1]
	}
	t.Path = t.buf
	return nil
}

var rootPath = []byte("/")

// segmentAt returns the segment of path that starts at i: up to the next
// "/" or the end.
func segmentAt(path []byte, i int) []byte {
	j := i
	for j < len(path) && path[j] != '/' {
		j++
	}
	return path[i:j]
}

// segment appends one segment's normalised bytes to t.buf.
func (t *Target) segment(seg []byte, o Options) error {
	for k := 0; k < len(seg); k++ {
		c := seg[k]
		switch c {
		case '\\':
			return ErrBackslash
		case ';':
			if o.Semicolons == SemicolonsRefuse {
				return ErrSemicolon
			}
			return nil // the rest of the segment is the parameter
		case '%':
			if k+2 >= len(seg) {
				return ErrEscape
			}
			hi, ok1 := ascii.Unhex(seg[k+1])
			lo, ok2 := ascii.Unhex(seg[k+2])
			if !ok1 || !ok2 {
				return ErrEscape
			}
			b := hi<<4 | lo
			k += 2
			switch {
			case b == 0:
				return ErrNUL
			case b == ';':
				// Decoded before or after parameters are split off
				// (servers differ), so it is a parameter to some and a
				// name to others: Jetty refuses it as ambiguous, and so
				// does waitroom, in either Semicolons mode.
				return ErrSemicolon
			case b == '/' || b == '\\':
				if !o.EncodedSlashes {
					return ErrEncodedSlash
				}
				t.EncodedSlash = true
			case unreserved(b):
				t.buf = append(t.buf, b)
				continue
			}
			t.buf = append(t.buf, '%', upperHex[b>>4], upperHex[b&15])
		default:
			t.buf = append(t.buf, c)
		}
	}
	return nil
}

// dots returns how many bytes s has when it is all dots, else 0.
func dots(s []byte) int {
	if len(s) == 0 {
		return 0
	}
	for _, c := range s {
		if c != '.' {
			return 0
		}
	}
	return len(s)
}

const upperHex = "0123456789ABCDEF"

// unreserved reports whether c is an RFC 3986 unreserved character.
func unreserved(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c == '-' || c == '.' || c == '_' || c == '~'
}

// Key appends to dst the form of a normalised path that routes match on:
// each segment without its trailing dots and encoded spaces ("%20"), and
// lower-cased when fold is set. A trailing "/" is kept.
func Key(dst, path []byte, fold bool) []byte {
	for i := 0; i < len(path); {
		if path[i] == '/' {
			dst = append(dst, '/')
			i++
			continue
		}
		seg := segmentAt(path, i)
		i += len(seg)
		for {
			n := len(seg)
			switch {
			case n > 0 && seg[n-1] == '.':
				seg = seg[:n-1]
				continue
			case n >= 3 && seg[n-3] == '%' && seg[n-2] == '2' && seg[n-1] == '0':
				seg = seg[:n-3]
				continue
			}
			break
		}
		if fold {
			dst = appendFold(dst, seg)
		} else {
			dst = append(dst, seg...)
		}
	}
	return dst
}

// unicodeFolds are the UTF-8 escapes (in lower case) of the letters beyond ASCII whose
// Unicode case mapping is an ASCII letter, with that letter: "ſ" (long s,
// upper case "S"), "ı" (dotless i, upper case "I"), "İ" (dotted capital I,
// lower case "i") and "K" (Kelvin sign, lower case "k"). Origins that
// ignore case with Unicode rules (Java's equalsIgnoreCase in Spring and
// Tomcat, .NET's ToLowerInvariant, NTFS's upper-case table under IIS) read
// "/%C5%BFhow" as "/show", so a folded key does too.
var unicodeFolds = [...]struct {
	esc    string
	letter byte
}{{"%c5%bf", 's'}, {"%c4%b1", 'i'}, {"%c4%b0", 'i'}, {"%e2%84%aa", 'k'}}

// appendFold appends seg lower-cased, with unicodeFolds' escapes (in
// either hex case) as their ASCII letter.
func appendFold(dst, seg []byte) []byte {
	for k := 0; k < len(seg); k++ {
		c := seg[k]
		if c == '%' {
			if esc, letter, ok := unicodeFold(seg[k:]); ok {
				dst = append(dst, letter)
				k += len(esc) - 1
				continue
			}
		}
		dst = append(dst, ascii.Lower(c))
	}
	return dst
}

// unicodeFold reports whether s starts with one of unicodeFolds' escapes.
func unicodeFold(s []byte) (string, byte, bool) {
	for _, f := range unicodeFolds {
		if len(s) >= len(f.esc) && ascii.EqualFold(s[:len(f.esc)], f.esc) {
			return f.esc, f.letter, true
		}
	}
	return "", 0, false
}

// ValidHost reports whether h is a plausible Host header: host[:port], 1
// to 255 bytes of letters, digits, "-", ".", "_", "~", ":", "[" and "]".
func ValidHost(h []byte) bool {
	if len(h) == 0 || len(h) > 255 {
		return false
	}
	for _, c := range h {
		if !hostByte(c) {
			return false
		}
	}
	return true
}

// SameAuthority reports whether an absolute-form target's authority
// (lower-cased, as Target.Authority holds it) names the same host and port
// as the Host header host, ignoring ASCII case and the scheme's default
// port (":80" for http, ":443" for https) on either side.
func SameAuthority(authority, host []byte, scheme string) bool {
	def := ":80"
	if scheme == "https" {
		def = ":443"
	}
	authority = trimPort(authority, def)
	host = trimPort(host, def)
	if len(authority) != len(host) {
		return false
	}
	for i := range authority {
		if ascii.Lower(authority[i]) != ascii.Lower(host[i]) {
			return false
		}
	}
	return true
}

// trimPort removes port (":80") from the end of h.
func trimPort(h []byte, port string) []byte {
	if n := len(h) - len(port); n > 0 && string(h[n:]) == port {
		return h[:n]
	}
	return h
}
