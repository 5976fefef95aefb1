package iplist

import (
	"math/rand/v2"
	"net/netip"
	"testing"
)

// A set the size of the big providers' lists together (AWS ~10k, Azure
// ~60k prefixes before merging).
func benchSet(b *testing.B) (*Set, []netip.Addr) {
	rng := rand.New(rand.NewPCG(3, 4))
	var ps []netip.Prefix
	for range 50_000 {
		a := netip.AddrFrom4([4]byte{byte(rng.IntN(224)), byte(rng.IntN(256)), byte(rng.IntN(256)), 0})
		ps = append(ps, netip.PrefixFrom(a, 20+rng.IntN(9)))
	}
	for range 20_000 {
		var x [16]byte
		x[0], x[1] = 0x20, byte(rng.IntN(256))
		for i := 2; i < 6; i++ {
			x[i] = byte(rng.IntN(256))
		}
		ps = append(ps, netip.PrefixFrom(netip.AddrFrom16(x), 32+rng.IntN(33)))
	}
	s := NewSet(ps)
	addrs := make([]netip.Addr, 1024)
	for i := range addrs {
		if i%2 == 0 {
			addrs[i] = netip.AddrFrom4([4]byte{byte(rng.IntN(224)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))})
		} else {
			var x [16]byte
			x[0], x[1] = 0x20, byte(rng.IntN(256))
			for j := 2; j < 16; j++ {
				x[j] = byte(rng.IntN(256))
			}
			addrs[i] = netip.AddrFrom16(x)
		}
	}
	return s, addrs
}

func BenchmarkSetContains(b *testing.B) {
	s, addrs := benchSet(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s.Contains(addrs[i&1023])
		i++
	}
}

func BenchmarkNewSet(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	ps := make([]netip.Prefix, 70_000)
	for i := range ps {
		a := netip.AddrFrom4([4]byte{byte(rng.IntN(224)), byte(rng.IntN(256)), byte(rng.IntN(256)), 0})
		ps[i] = netip.PrefixFrom(a, 24)
	}
	b.ReportAllocs()
	for b.Loop() {
		NewSet(ps)
	}
}
