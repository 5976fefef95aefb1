package memstore

import (
	"io"
	"strings"

	"github.com/waitroom/waitroom/internal/fsutil"
)

// escape turns a name (event, lane) into a file name: bytes outside
// [A-Za-z0-9_-] become %XX, and the empty name is "%". It is injective,
// and the result never contains '.', which separates the parts of a
// member file's name.
func escape(s string) string {
	if s == "" {
		return "%"
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plain(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// unescape reverses escape.
func unescape(s string) (string, bool) {
	if s == "%" {
		return "", true
	}
	if s == "" {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plain(c) {
			b.WriteByte(c)
			continue
		}
		if c != '%' || i+2 >= len(s) {
			return "", false
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", false
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return b.String(), true
}

func plain(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// writeAtomic replaces dir/name with data, atomically and durably
// (fsutil.WriteFile).
func writeAtomic(dir, name string, data []byte) error {
	return fsutil.WriteFile(dir, name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
