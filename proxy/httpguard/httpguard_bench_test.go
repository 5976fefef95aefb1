package httpguard

import (
	"testing"

	"github.com/valyala/fasthttp"
)

func BenchmarkCheck(b *testing.B) {
	var h fasthttp.RequestHeader
	raw := "GET /events/summer HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n" +
		"Accept: text/html\r\nAccept-Language: en-GB,en;q=0.9\r\n" + cookieHeader(2048) + "\r\n"
	if err := h.Read(bufioReader(raw)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := Check(&h); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClientIP(b *testing.B) {
	tr := trustedSet(b, "10.0.0.0/8")
	ctx := newCtx("10.0.0.1:1234", fasthttp.HeaderXForwardedFor, "6.6.6.6, 1.2.3.4, 10.1.1.1")
	b.ReportAllocs()
	for b.Loop() {
		_ = tr.ClientIP(ctx)
	}
}

func BenchmarkSameSitePath(b *testing.B) {
	ret := []byte("/events/summer/seats?section=A&row=%2012")
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := SameSitePath(ret); !ok {
			b.Fatal("refused")
		}
	}
}
