package challenge

import (
	"context"
	"net/netip"
	"testing"
	"time"
)

func benchSignal(b *testing.B, s Signal, r *Request) {
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.Check(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHeaderSignal(b *testing.B) {
	s, err := NewHeaderSignal(HeaderOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("chrome", func(b *testing.B) { benchSignal(b, s, hdrReq(hdrChromeH1)) })
	b.Run("firefox", func(b *testing.B) { benchSignal(b, s, hdrReq(hdrFirefox)) })
	b.Run("curl", func(b *testing.B) { benchSignal(b, s, hdrReq("Host: x\nUser-Agent: curl/8.5.0\nAccept: */*")) })
}

func BenchmarkJA4Signal(b *testing.B) {
	s, err := NewJA4Signal(JA4Options{Bad: []JA4Entry{{ja4Tool, 1}}, Good: []string{ja4Chrome}, Unknown: 0.1})
	if err != nil {
		b.Fatal(err)
	}
	benchSignal(b, s, &Request{JA4: ja4Chrome})
}

func BenchmarkJA4(b *testing.B) {
	h := ja4SpecHello()
	b.ReportAllocs()
	for b.Loop() {
		JA4(h)
	}
}

func BenchmarkRateSignal(b *testing.B) {
	s, err := NewRateSignal(RateOptions{Window: time.Minute, PerIP: RateLimit{20, 120}, PerPrefix: RateLimit{100, 1000}, MaxKeys: 100_000})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("one address", func(b *testing.B) { benchSignal(b, s, &Request{IP: netip.MustParseAddr("192.0.2.1")}) })
	b.Run("many addresses", func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		r := &Request{}
		i := uint32(0)
		for b.Loop() {
			i++
			r.IP = netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
			s.Check(ctx, r)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			r := &Request{IP: netip.MustParseAddr("192.0.2.1")}
			for pb.Next() {
				s.Check(context.Background(), r)
			}
		})
	})
}

func BenchmarkKnownBadSignal(b *testing.B) {
	l := KnownBadLists{Visitors: []string{"v1"}, JA4: []string{ja4Tool}, IPs: []string{"192.0.2.66"}}
	s, err := NewKnownBadSignal(l)
	if err != nil {
		b.Fatal(err)
	}
	benchSignal(b, s, &Request{Visitor: "0123456789abcdef0123456789abcdef", JA4: ja4Chrome, IP: netip.MustParseAddr("2001:db8::1")})
}
