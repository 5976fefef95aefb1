package httpguard

import (
	"net/netip"

	"github.com/waitroom/waitroom/internal/ascii"
)

// walkForwarded finds the client in RFC 7239 Forwarded lines from a
// trusted peer, with the same right-to-left rules as X-Forwarded-For (see
// ClientIP).
//
// A quoted string may hold a comma or a semicolon, so the elements cannot
// be split from the right. The lines are scanned from the left instead,
// remembering the right-most element that would end a walk from the right
// (untrusted, or malformed) and the trusted element just to its right;
// the answer is the same.
func (t *Trusted) walkForwarded(values [][]byte, peer netip.Addr) netip.Addr {
	var (
		stop      netip.Addr // the right-most untrusted element
		stopBad   bool       // the right-most stop is malformed
		stopped   bool       // some element stops the walk
		right     netip.Addr // the trusted element just right of the stop
		haveRight bool
		first     netip.Addr // the leftmost element, when all are trusted
		any       bool
	)
	for _, line := range values {
		s := fwdScanner{b: line}
		for {
			a, bad, ok := s.next()
			if !ok {
				break
			}
			switch {
			case bad || !t.Contains(a):
				stop, stopBad, stopped, haveRight = a, bad, true, false
			case stopped && !haveRight:
				right, haveRight = a, true
			case !any:
				first = a
			}
			any = true
		}
	}
	switch {
	case !stopped && any:
		return first
	case !stopped:
		return peer
	case !stopBad:
		return stop
	case haveRight:
		return right
	}
	return peer
}

// fwdScanner reads the elements of one Forwarded header line
// (RFC 7239 §4):
//
//	Forwarded         = 1#forwarded-element
//	forwarded-element = [ forwarded-pair ] *( ";" [ forwarded-pair ] )
//	forwarded-pair    = token "=" value
//	value             = token / quoted-string
//
// Optional whitespace is allowed around "," (the list rule) and ";".
type fwdScanner struct {
	b []byte
	i int
}

// next returns the for= address of the next element. bad is true when
// the element is malformed; after a syntax error the rest of the line
// counts as that one malformed element. ok is false at the end of the
// line. Empty list elements ("a, , b") are skipped, as RFC 9110 §5.6.1
// asks of a recipient.
func (s *fwdScanner) next() (a netip.Addr, bad, ok bool) {
	for {
		s.ows()
		if s.i >= len(s.b) {
			return netip.Addr{}, false, false
		}
		if s.b[s.i] != ',' {
			break
		}
		s.i++
	}
	seenFor := false
	for {
		s.ows()
		if s.i < len(s.b) && s.b[s.i] != ',' && s.b[s.i] != ';' {
			name := s.token()
			if len(name) == 0 || s.i >= len(s.b) || s.b[s.i] != '=' {
				return s.fail()
			}
			s.i++
			value, quoted, valid := s.value()
			if !valid {
				return s.fail()
			}
			if ascii.EqualFold(name, "for") {
				if seenFor {
					bad = true // each parameter at most once per element
				}
				seenFor = true
				if !bad {
					var node bool
					a, node = parseNode(value, quoted)
					bad = !node
				}
			}
			s.ows()
		}
		if s.i >= len(s.b) || s.b[s.i] == ',' {
			break
		}
		if s.b[s.i] != ';' {
			return s.fail()
		}
		s.i++
	}
	if s.i < len(s.b) {
		s.i++ // the comma
	}
	if !seenFor {
		bad = true
	}
	if bad {
		a = netip.Addr{}
	}
	return a, bad, true
}

// fail consumes the rest of the line as one malformed element.
func (s *fwdScanner) fail() (netip.Addr, bool, bool) {
	s.i = len(s.b)
	return netip.Addr{}, true, true
}

func (s *fwdScanner) ows() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t') {
		s.i++
	}
}

// token consumes an RFC 9110 token.
func (s *fwdScanner) token() []byte {
	start := s.i
	for s.i < len(s.b) && isTchar(s.b[s.i]) {
		s.i++
	}
	return s.b[start:s.i]
}

// value consumes a token or a quoted-string; for a quoted string it
// returns what is between the quotes, with any escapes left in place.
func (s *fwdScanner) value() (v []byte, quoted, ok bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		v = s.token()
		return v, false, len(v) > 0
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			v = s.b[start:s.i]
			s.i++
			return v, true, true
		case c == '\\':
			if s.i+1 >= len(s.b) || !isQDText(s.b[s.i+1]) && s.b[s.i+1] != '"' && s.b[s.i+1] != '\\' {
				return nil, true, false
			}
			s.i += 2
		case isQDText(c):
			s.i++
		default:
			return nil, true, false
		}
	}
	return nil, true, false // unterminated
}

// parseNode parses a for= node that names an address (RFC 7239 §6):
// IPv4 or "[" IPv6 "]", either with an optional ":" port (digits, or an
// obfuscated port "_..."), the IPv6 form and any port only quoted, as a
// token cannot hold them. "unknown" and obfuscated names are not
// addresses. The result is unmapped.
func parseNode(v []byte, quoted bool) (netip.Addr, bool) {
	if len(v) == 0 {
		return netip.Addr{}, false
	}
	var host, port []byte
	if v[0] == '[' {
		end := -1
		for i, c := range v {
			if c == ']' {
				end = i
				break
			}
		}
		if end < 0 || !quoted {
			return netip.Addr{}, false
		}
		host, port = v[1:end], v[end+1:]
		a, ok := parseIPv6(host)
		if !ok || !validNodePort(port) {
			return netip.Addr{}, false
		}
		return a.Unmap(), true
	}
	host = v
	for i, c := range v {
		if c == ':' {
			host, port = v[:i], v[i:]
			if len(port) == 0 || !quoted {
				return netip.Addr{}, false
			}
			break
		}
	}
	a, ok := parseIPv4(host)
	if !ok || !validNodePort(port) {
		return netip.Addr{}, false
	}
	return netip.AddrFrom4(a), true
}

// validNodePort reports whether p is empty or ":" and a port: 1 to 5
// digits, or "_" and letters, digits, ".", "_" and "-".
func validNodePort(p []byte) bool {
	if len(p) == 0 {
		return true
	}
	if p[0] != ':' || len(p) < 2 {
		return false
	}
	p = p[1:]
	if p[0] == '_' {
		for _, c := range p[1:] {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
				return false
			}
		}
		return len(p) > 1
	}
	if len(p) > 5 {
		return false
	}
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isTchar reports whether c may appear in an RFC 9110 token.
func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// isQDText reports whether c may appear unescaped in a quoted-string.
func isQDText(c byte) bool {
	return c == '\t' || c == ' ' || c == 0x21 || 0x23 <= c && c <= 0x5B || 0x5D <= c && c <= 0x7E || c >= 0x80
}
