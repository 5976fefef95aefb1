package httpguard

import (
	"bytes"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/internal/ascii"
)

// FuzzParseAddr holds ParseAddr to netip.ParseAddr (less zones).
func FuzzParseAddr(f *testing.F) {
	for _, s := range []string{"1.2.3.4", "::", "::1", "2001:db8::1", "::ffff:1.2.3.4", "1:2:3:4:5:6:1.2.3.4",
		"01.2.3.4", "1::2::3", "fe80::1%eth0", "1.2.3.4:80", "[::1]", "12345::", "::1.2.3.4", "1:2:3:4:5:6:7::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseAddr([]byte(s))
		want, err := netip.ParseAddr(s)
		if err == nil && want.Zone() != "" {
			if ok {
				t.Fatalf("%q: a zone was accepted", s)
			}
			return
		}
		if ok != (err == nil) {
			t.Fatalf("%q: ok = %v, netip error = %v", s, ok, err)
		}
		if ok && got != want {
			t.Fatalf("%q: got %v, netip %v", s, got, want)
		}
	})
}

// FuzzClientIP walks arbitrary X-Forwarded-For values from a trusted
// peer: the answer is the peer or an address written in the header, and
// it is never a trusted one unless the whole walk was trusted.
func FuzzClientIP(f *testing.F) {
	for _, s := range []string{"1.2.3.4", "6.6.6.6, 1.2.3.4, 10.1.1.1", "garbage", "1.2.3.4,,10.0.0.9",
		"[2001:db8::1]:80, 10.0.0.2", "::ffff:10.1.1.1", " , ", "1.2.3.4:99999"} {
		f.Add(s)
	}
	tr := NewTrusted([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")})
	f.Fuzz(func(t *testing.T, xff string) {
		if strings.ContainsAny(xff, "\r\n") {
			return
		}
		ctx := newCtx("10.0.0.1:1", fasthttp.HeaderXForwardedFor, xff)
		got := tr.ClientIP(ctx)
		if !got.IsValid() {
			t.Fatalf("%q: invalid result", xff)
		}
		if got == netip.MustParseAddr("10.0.0.1") {
			return
		}
		found := false
		for _, el := range strings.Split(xff, ",") {
			if a, ok := parseForwardedAddr(ascii.TrimOWS([]byte(el))); ok && a == got {
				found = true
			}
		}
		if !found {
			t.Fatalf("%q: %v is not in the header", xff, got)
		}
	})
}

// FuzzSameSitePath: whatever is accepted is returned unchanged and, read
// by net/url, has no scheme, no host, no user, and a path that does not
// start with "//" (before or after decoding).
func FuzzSameSitePath(f *testing.F) {
	for _, s := range []string{"/", "/a?b=c", "//evil", "/\\evil", "/%2F%2Fevil", "https://x", "/a%zz", "/%5c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := SameSitePath([]byte(s))
		if !ok {
			return
		}
		if string(got) != s {
			t.Fatalf("%q: returned %q", s, got)
		}
		u, err := url.Parse(s)
		if err != nil {
			t.Fatalf("%q accepted but url.Parse fails: %v", s, err)
		}
		if u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
			t.Fatalf("%q accepted: scheme %q host %q", s, u.Scheme, u.Host)
		}
		if strings.HasPrefix(u.Path, "//") || strings.HasPrefix(u.EscapedPath(), "//") || strings.Contains(u.Path, "\\") {
			t.Fatalf("%q accepted: path %q", s, u.Path)
		}
	})
}

// FuzzCheck feeds arbitrary header blocks through fasthttp's parser and
// Check: no panic, and an accepted block never carries both framing
// headers, a second Content-Length, or a folded line.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"Host: a\r\n", "Host: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n",
		"Host: a\r\nX: b\r\n c\r\n", "Host: a\nX: b\r\n", "Host: a\r\nTransfer-Encoding: identity\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, head string) {
		var h fasthttp.RequestHeader
		if err := h.Read(bufioReader("POST / HTTP/1.1\r\n" + head + "\r\n")); err != nil {
			return
		}
		if Check(&h) != nil {
			return
		}
		raw := h.RawHeaders()
		lower := bytes.ToLower(raw)
		cl := bytes.Count(lower, []byte("\ncontent-length:")) + boolInt(bytes.HasPrefix(lower, []byte("content-length:")))
		te := bytes.Count(lower, []byte("\ntransfer-encoding:")) + boolInt(bytes.HasPrefix(lower, []byte("transfer-encoding:")))
		if cl > 1 || (cl > 0 && te > 0) {
			t.Fatalf("accepted %q", raw)
		}
		if bytes.Contains(raw, []byte("\n ")) || bytes.Contains(raw, []byte("\n\t")) {
			t.Fatalf("accepted folding in %q", raw)
		}
		if h.ContentLength() == -1 && te != 1 {
			t.Fatalf("chunked without one Transfer-Encoding line in %q", raw)
		}
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
