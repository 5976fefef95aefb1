package ratelimit

import (
	"net/netip"
	"sync/atomic"
	"testing"
)

// Run with: go test -run '^$' -bench . -benchmem -cpu 1,2 ./proxy/ratelimit/

func benchLimiter(b *testing.B) (*Limiter, []netip.Addr) {
	l, err := New(Config{PerIP: Bucket{Rate: 1e6, Burst: 1000}, PerPrefix: Bucket{Rate: 1e7, Burst: 10000}})
	if err != nil {
		b.Fatal(err)
	}
	addrs := make([]netip.Addr, 4096)
	for i := range addrs {
		if i%4 == 3 {
			addrs[i] = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, byte(i >> 8), byte(i), 15: 1})
		} else {
			addrs[i] = netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 1})
		}
		l.Allow(addrs[i])
	}
	return l, addrs
}

// BenchmarkAllow is a join or status poll's rate-limit check from an
// address already tracked, from every core at once.
func BenchmarkAllow(b *testing.B) {
	l, addrs := benchLimiter(b)
	var next atomic.Uint32
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := next.Add(1) * 997
		for pb.Next() {
			l.Allow(addrs[i%uint32(len(addrs))])
			i++
		}
	})
}

// BenchmarkAllowNewAddresses is a flood of never-seen addresses against a
// full table: every call evicts.
func BenchmarkAllowNewAddresses(b *testing.B) {
	l, err := New(Config{PerIP: Bucket{Rate: 1, Burst: 5}, PerPrefix: Bucket{Rate: 10, Burst: 50}, TableSize: 1 << 12})
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Uint32
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		hi := next.Add(1)
		var i uint32
		for pb.Next() {
			l.Allow(netip.AddrFrom16([16]byte{0x20, 0x01, byte(hi), byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i), 15: 1}))
			i++
		}
	})
}

// BenchmarkRate is the risk scorer's read of an address's rate.
func BenchmarkRate(b *testing.B) {
	l, addrs := benchLimiter(b)
	var next atomic.Uint32
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := next.Add(1) * 997
		for pb.Next() {
			l.Rate(addrs[i%uint32(len(addrs))])
			i++
		}
	})
}
