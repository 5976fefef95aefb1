package ascii

import (
	"bytes"
	"strings"
	"testing"
)

func TestLower(t *testing.T) {
	for c := range 256 {
		want := byte(c)
		if 'A' <= c && c <= 'Z' {
			want = byte(c) + 32
		}
		if got := Lower(byte(c)); got != want {
			t.Fatalf("Lower(%#x) = %#x, want %#x", c, got, want)
		}
	}
	if got := string(AppendLower([]byte("x:"), "Content-TYPE é\xff")); got != "x:content-type é\xff" {
		t.Fatalf("AppendLower: %q", got)
	}
	if got := string(AppendLower(nil, []byte("ABC"))); got != "abc" {
		t.Fatalf("AppendLower of bytes: %q", got)
	}
}

func TestEqualFold(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"Content-Length", "content-length", true},
		{"CHUNKED", "chunked", true},
		{"chunked", "chunke", false},
		{"chunked", "chunkeD ", false},
		{"a", "b", false},
		{"@", "`", false}, // 0x40 and 0x60 differ by the case bit but are not letters
		{"[", "{", false},
		{"\u212a", "k", false}, // KELVIN SIGN: Unicode folding says equal, ASCII does not
		{"é", "É", false},
		{"\xff", "\xff", true},
	} {
		if got := EqualFold(c.a, c.b); got != c.want {
			t.Errorf("EqualFold(%q, %q) = %v", c.a, c.b, got)
		}
		if got := EqualFold([]byte(c.a), c.b); got != c.want {
			t.Errorf("EqualFold([]byte(%q), %q) = %v", c.a, c.b, got)
		}
		if got := EqualFold(c.b, []byte(c.a)); got != c.want {
			t.Errorf("EqualFold(%q, []byte(%q)) = %v", c.b, c.a, got)
		}
		if ascii := !strings.ContainsFunc(c.a+c.b, func(r rune) bool { return r >= 0x80 }); ascii && c.want != strings.EqualFold(c.a, c.b) {
			t.Errorf("EqualFold(%q, %q) disagrees with strings.EqualFold on ASCII", c.a, c.b)
		}
	}
	for _, c := range []struct {
		s, prefix string
		want      bool
	}{
		{"X-Forwarded-For", "x-forwarded-", true},
		{"x-forwarded", "x-forwarded-", false},
		{"__HOST-id", "__Host-", true},
		{"", "", true},
		{"abc", "", true},
		{"abd", "abc", false},
	} {
		if got := HasPrefixFold(c.s, c.prefix); got != c.want {
			t.Errorf("HasPrefixFold(%q, %q) = %v", c.s, c.prefix, got)
		}
		if got := HasPrefixFold([]byte(c.s), c.prefix); got != c.want {
			t.Errorf("HasPrefixFold([]byte(%q), %q) = %v", c.s, c.prefix, got)
		}
	}
}

func TestTrimOWS(t *testing.T) {
	for in, want := range map[string]string{
		"":                "",
		" \t ":            "",
		"\t gzip , br \t": "gzip , br",
		"a":               "a",
		"\r\na\n\r":       "\r\na\n\r", // only SP and HTAB are OWS
		"\v a\f":          "\v a\f",
	} {
		if got := TrimOWS([]byte(in)); string(got) != want {
			t.Errorf("TrimOWS(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnhex(t *testing.T) {
	const digits = "0123456789abcdef"
	for c := range 256 {
		v, ok := Unhex(byte(c))
		i := strings.IndexByte(digits, Lower(byte(c)))
		if ok != (i >= 0) || ok && v != byte(i) {
			t.Fatalf("Unhex(%q) = %d, %v", byte(c), v, ok)
		}
	}
}

// The helpers sit on the proxy's per-request path: they must not
// allocate.
func TestAllocs(t *testing.T) {
	name, value := []byte("Transfer-Encoding"), []byte(" \tchunked\t ")
	buf := make([]byte, 0, 64)
	n := testing.AllocsPerRun(100, func() {
		_ = EqualFold(name, "transfer-encoding")
		_ = HasPrefixFold(name, "x-forwarded-")
		_ = EqualFold(TrimOWS(value), "chunked")
		buf = AppendLower(buf[:0], name)
		_, _ = Unhex(value[3])
	})
	if n != 0 {
		t.Fatalf("%v allocations per run, want 0", n)
	}
}

var sink bool

func BenchmarkEqualFold(b *testing.B) {
	names := [][]byte{[]byte("Content-Length"), []byte("X-Forwarded-For"), []byte("transfer-encoding"), []byte("Cookie")}
	for b.Loop() {
		for _, n := range names {
			sink = EqualFold(n, "transfer-encoding") || EqualFold(n, "cookie") || HasPrefixFold(n, "x-forwarded-")
		}
	}
}

// BenchmarkEqualFoldBytes is the standard library's Unicode-aware
// comparison, for scale.
func BenchmarkEqualFoldBytes(b *testing.B) {
	names := [][]byte{[]byte("Content-Length"), []byte("X-Forwarded-For"), []byte("transfer-encoding"), []byte("Cookie")}
	te, ck, xf := []byte("transfer-encoding"), []byte("cookie"), []byte("x-forwarded-")
	for b.Loop() {
		for _, n := range names {
			sink = bytes.EqualFold(n, te) || bytes.EqualFold(n, ck) || len(n) >= len(xf) && bytes.EqualFold(n[:len(xf)], xf)
		}
	}
}

func BenchmarkTrimOWS(b *testing.B) {
	v := []byte("\t  keep-alive, Upgrade  ")
	for b.Loop() {
		sink = len(TrimOWS(v)) == 0
	}
}

func BenchmarkUnhex(b *testing.B) {
	s := []byte("0123456789abcdefABCDEFxyz")
	var acc byte
	for b.Loop() {
		for _, c := range s {
			v, ok := Unhex(c)
			if ok {
				acc += v
			}
		}
	}
	sink = acc == 0
}

// FuzzEqualFold checks EqualFold against a byte-by-byte Lower comparison.
func FuzzEqualFold(f *testing.F) {
	f.Add("Content-Length", "content-length")
	f.Add("@[`{", "`{@[")
	f.Fuzz(func(t *testing.T, a, b string) {
		want := len(a) == len(b)
		for i := 0; want && i < len(a); i++ {
			want = Lower(a[i]) == Lower(b[i])
		}
		if got := EqualFold(a, b); got != want {
			t.Fatalf("EqualFold(%q, %q) = %v", a, b, got)
		}
	})
}
