package httpguard

import (
	"net/netip"

	"github.com/waitroom/waitroom/internal/ascii"
)

// ParseAddr parses an IPv4 or IPv6 address written as netip.ParseAddr
// accepts it, except that an IPv6 zone ("fe80::1%eth0") is refused. Unlike
// netip.ParseAddr it takes bytes and allocates nothing, also on malformed
// input, so it can run on every request's headers.
func ParseAddr(b []byte) (netip.Addr, bool) {
	for _, c := range b {
		switch c {
		case '.':
			a, ok := parseIPv4(b)
			if !ok {
				return netip.Addr{}, false
			}
			return netip.AddrFrom4(a), true
		case ':':
			return parseIPv6(b)
		}
	}
	return netip.Addr{}, false
}

// parseIPv4 parses dotted-quad decimal: four fields of 1 to 3 digits, no
// leading zeros, each at most 255.
func parseIPv4(s []byte) (a [4]byte, ok bool) {
	val, digits, field := 0, 0, 0
	for i, c := range s {
		switch {
		case '0' <= c && c <= '9':
			if digits == 1 && val == 0 {
				return a, false // leading zero
			}
			val = val*10 + int(c-'0')
			digits++
			if val > 255 {
				return a, false
			}
		case c == '.':
			if i == 0 || i == len(s)-1 || s[i-1] == '.' || field == 3 {
				return a, false
			}
			a[field] = byte(val)
			field++
			val, digits = 0, 0
		default:
			return a, false
		}
	}
	if field != 3 || digits == 0 {
		return a, false
	}
	a[3] = byte(val)
	return a, true
}

// parseIPv6 follows netip's parser: groups of 1 to 4 hex digits, at most
// one "::", and an optional dotted-quad in the last 32 bits.
func parseIPv6(s []byte) (netip.Addr, bool) {
	var ip [16]byte
	ellipsis := -1
	if len(s) >= 2 && s[0] == ':' && s[1] == ':' {
		ellipsis = 0
		s = s[2:]
		if len(s) == 0 {
			return netip.IPv6Unspecified(), true
		}
	}
	i := 0
	for i < 16 {
		off, acc := 0, 0
		for ; off < len(s); off++ {
			c := s[off]
			v, ok := ascii.Unhex(c)
			if !ok {
				break
			}
			if off > 3 {
				return netip.Addr{}, false // more than 4 digits
			}
			acc = acc<<4 | int(v)
		}
		if off == 0 {
			return netip.Addr{}, false
		}
		if off < len(s) && s[off] == '.' {
			if (ellipsis < 0 && i != 12) || i+4 > 16 {
				return netip.Addr{}, false
			}
			a, ok := parseIPv4(s)
			if !ok {
				return netip.Addr{}, false
			}
			copy(ip[i:], a[:])
			i += 4
			s = s[len(s):]
			break
		}
		ip[i], ip[i+1] = byte(acc>>8), byte(acc)
		i += 2
		s = s[off:]
		if len(s) == 0 {
			break
		}
		if s[0] != ':' || len(s) == 1 {
			return netip.Addr{}, false
		}
		s = s[1:]
		if s[0] == ':' {
			if ellipsis >= 0 {
				return netip.Addr{}, false
			}
			ellipsis = i
			s = s[1:]
			if len(s) == 0 {
				break
			}
		}
	}
	if len(s) != 0 {
		return netip.Addr{}, false
	}
	if i < 16 {
		if ellipsis < 0 {
			return netip.Addr{}, false
		}
		n := 16 - i
		for j := i - 1; j >= ellipsis; j-- {
			ip[j+n] = ip[j]
		}
		for j := ellipsis + n - 1; j >= ellipsis; j-- {
			ip[j] = 0
		}
	} else if ellipsis >= 0 {
		return netip.Addr{}, false // "::" must stand for at least one group
	}
	return netip.AddrFrom16(ip), true
}

// parseForwardedAddr parses one X-Forwarded-For element: an address,
// optionally with a port ("1.2.3.4:5678", "[2001:db8::1]:443") as some
// proxies write it. The result is unmapped (::ffff:1.2.3.4 → 1.2.3.4).
func parseForwardedAddr(el []byte) (netip.Addr, bool) {
	if len(el) > 0 && el[0] == '[' {
		end := -1
		for i, c := range el {
			if c == ']' {
				end = i
				break
			}
		}
		if end < 0 || !validPort(el[end+1:], true) {
			return netip.Addr{}, false
		}
		a, ok := parseIPv6(el[1:end])
		return a.Unmap(), ok
	}
	colons, last := 0, -1
	for i, c := range el {
		if c == ':' {
			colons++
			last = i
		}
	}
	if colons == 1 {
		if !validPort(el[last:], false) {
			return netip.Addr{}, false
		}
		a, ok := parseIPv4(el[:last])
		return netip.AddrFrom4(a), ok
	}
	a, ok := ParseAddr(el)
	return a.Unmap(), ok
}

// validPort reports whether p is ":" followed by 1 to 5 digits (or, when
// optional, empty).
func validPort(p []byte, optional bool) bool {
	if len(p) == 0 {
		return optional
	}
	if p[0] != ':' || len(p) < 2 || len(p) > 6 {
		return false
	}
	for _, c := range p[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
