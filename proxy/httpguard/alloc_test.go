package httpguard

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// TestNoAllocations holds the per-request functions to zero allocations.
func TestNoAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are checked in the full run")
	}
	tr := trustedSet(t, "10.0.0.0/8")
	ctx := newCtx("10.0.0.1:1234",
		fasthttp.HeaderXForwardedFor, "6.6.6.6, 2001:db8::1, 1.2.3.4, 10.1.1.1",
		fasthttp.HeaderXForwardedProto, "https",
		fasthttp.HeaderXForwardedHost, "shop.example")
	var h fasthttp.RequestHeader
	if err := h.Read(bufioReader("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n" + cookieHeader(4096) + "\r\n")); err != nil {
		t.Fatal(err)
	}
	ret := []byte("/events/summer?x=%2F")
	tests := []struct {
		name string
		fn   func()
	}{
		{"Check", func() { _ = Check(&h) }},
		{"ClientIP", func() { _ = tr.ClientIP(ctx) }},
		{"Proto", func() { _ = tr.Proto(ctx) }},
		{"Host", func() { _ = tr.Host(ctx) }},
		{"Forwarded", func() { _, _, _ = tr.Forwarded(ctx) }},
		{"SameSitePath", func() { _, _ = SameSitePath(ret) }},
		{"ParseAddr", func() { _, _ = ParseAddr([]byte("2001:db8::1")) }},
		{"ParseAddr malformed", func() { _, _ = ParseAddr([]byte("2001:db8::1::")) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn() // warm fasthttp's per-header buffers
			if n := testing.AllocsPerRun(200, tt.fn); n != 0 {
				t.Fatalf("%v allocations per call", n)
			}
		})
	}
}
