package ascii

// Lower returns c lower-cased when it is an ASCII upper-case letter, else
// c.
func Lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		c += 'a' - 'A'
	}
	return c
}

// AppendLower appends s to dst with its ASCII letters lower-cased.
func AppendLower[T string | []byte](dst []byte, s T) []byte {
	for i := 0; i < len(s); i++ {
		dst = append(dst, Lower(s[i]))
	}
	return dst
}

// EqualFold reports whether a and b are equal with ASCII letters compared
// case-insensitively.
func EqualFold[A, B string | []byte](a A, b B) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		// Equal bytes, or a letter in both cases: the bytes differ in the
		// case bit (0x20) alone and are letters.
		if d := a[i] ^ b[i]; d != 0 && (d != 0x20 || a[i]|0x20 < 'a' || a[i]|0x20 > 'z') {
			return false
		}
	}
	return true
}

// HasPrefixFold reports whether s begins with prefix, ASCII letters
// compared case-insensitively.
func HasPrefixFold[A, B string | []byte](s A, prefix B) bool {
	return len(s) >= len(prefix) && EqualFold(s[:len(prefix)], prefix)
}

// TrimOWS returns b without the optional whitespace (SP and HTAB) at its
// start and end.
func TrimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// Unhex returns the value of the hexadecimal digit c (either case), and
// whether c is one.
func Unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
