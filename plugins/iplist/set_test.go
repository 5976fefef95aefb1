package iplist

import (
	"context"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"

	"github.com/waitroom/waitroom/challenge"
)

func prefixes(ss ...string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}

func strs(ps []netip.Prefix) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

func TestSetMerge(t *testing.T) {
	tests := []struct {
		name string
		in   []netip.Prefix
		want []string // Prefixes() of the set
		len  int
	}{
		{"empty", nil, nil, 0},
		{"adjacent halves merge", prefixes("10.0.0.0/25", "10.0.0.128/25"), []string{"10.0.0.0/24"}, 1},
		{"contained", prefixes("10.0.0.0/8", "10.1.0.0/16", "10.255.255.255/32"), []string{"10.0.0.0/8"}, 1},
		{"duplicates", prefixes("192.0.2.0/24", "192.0.2.0/24"), []string{"192.0.2.0/24"}, 1},
		{"gap stays", prefixes("192.0.2.0/25", "192.0.2.192/26"), []string{"192.0.2.0/25", "192.0.2.192/26"}, 2},
		{"host bits masked", prefixes("192.0.2.77/24"), []string{"192.0.2.0/24"}, 1},
		{"unaligned union", prefixes("10.0.0.1/32", "10.0.0.2/31", "10.0.0.4/30"), []string{"10.0.0.1/32", "10.0.0.2/31", "10.0.0.4/30"}, 1},
		{"whole v4", prefixes("0.0.0.0/0", "1.2.3.4/32"), []string{"0.0.0.0/0"}, 1},
		{"top of v4", prefixes("255.255.255.255/32", "255.255.255.254/32"), []string{"255.255.255.254/31"}, 1},
		{"v6", prefixes("2001:db8::/33", "2001:db8:8000::/33"), []string{"2001:db8::/32"}, 1},
		{"top of v6", prefixes("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/128"),
			[]string{"ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127"}, 1},
		{"across the 64-bit halves", prefixes("2001:db8:0:0:ffff:ffff:ffff:ffff/128", "2001:db8:0:1::/128"),
			[]string{"2001:db8::ffff:ffff:ffff:ffff/128", "2001:db8:0:1::/128"}, 1},
		// A mapped prefix is IPv4 as well (and stays in the IPv6 table).
		{"mapped prefix", prefixes("::ffff:192.0.2.0/120"), []string{"192.0.2.0/24", "::ffff:192.0.2.0/120"}, 2},
		{"v6 covering the mapped block", prefixes("::/80"), []string{"0.0.0.0/0", "::/80"}, 2},
		{"invalid skipped", []netip.Prefix{{}}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSet(tt.in)
			if got := strs(s.Prefixes()); !slices.Equal(got, tt.want) {
				t.Errorf("Prefixes() = %v, want %v", got, tt.want)
			}
			if s.Len() != tt.len {
				t.Errorf("Len() = %d, want %d", s.Len(), tt.len)
			}
		})
	}
}

func TestSetContains(t *testing.T) {
	s := NewSet(prefixes("192.0.2.0/24", "198.51.100.8/29", "2001:db8::/32", "::ffff:203.0.113.0/120"))
	tests := []struct {
		addr string
		want bool
	}{
		{"192.0.2.0", true}, {"192.0.2.255", true}, {"192.0.1.255", false}, {"192.0.3.0", false},
		{"198.51.100.8", true}, {"198.51.100.15", true}, {"198.51.100.7", false}, {"198.51.100.16", false},
		{"::ffff:192.0.2.9", true}, {"203.0.113.5", true}, {"::ffff:203.0.113.5", true},
		{"2001:db8::1", true}, {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", true}, {"2001:db9::", false},
		{"2001:db8::1%eth0", true}, {"::", false}, {"0.0.0.0", false}, {"255.255.255.255", false},
		// An IPv4-compatible (not mapped) address is IPv6.
		{"::192.0.2.9", false},
	}
	for _, tt := range tests {
		if got := s.Contains(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("Contains(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	if s.Contains(netip.Addr{}) {
		t.Error("Contains(zero Addr) = true")
	}
	if NewSet(nil).Contains(netip.MustParseAddr("1.2.3.4")) {
		t.Error("empty set contains an address")
	}
}

// Against brute force: random prefixes, random addresses (many near the
// prefixes' edges).
func TestSetContainsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		var ps []netip.Prefix
		for range rng.IntN(40) + 1 {
			if rng.IntN(2) == 0 {
				a := netip.AddrFrom4([4]byte{10, byte(rng.IntN(4)), byte(rng.IntN(256)), byte(rng.IntN(256))})
				ps = append(ps, netip.PrefixFrom(a, 14+rng.IntN(19)))
			} else {
				b := [16]byte{0x20, 0x01, 0x0d, 0xb8, byte(rng.IntN(4))}
				for i := 5; i < 16; i++ {
					b[i] = byte(rng.IntN(256))
				}
				ps = append(ps, netip.PrefixFrom(netip.AddrFrom16(b), 30+rng.IntN(99)))
			}
		}
		s := NewSet(ps)
		probe := func(a netip.Addr) {
			want := false
			for _, p := range ps {
				if p.Masked().Contains(a) {
					want = true
				}
			}
			if got := s.Contains(a); got != want {
				t.Fatalf("round %d: Contains(%s) = %v, want %v (prefixes %v)", round, a, got, want, ps)
			}
		}
		for _, p := range ps {
			p = p.Masked()
			probe(p.Addr())
			probe(p.Addr().Prev())
			last := lastAddr(p)
			probe(last)
			probe(last.Next())
		}
		for range 200 {
			probe(netip.AddrFrom4([4]byte{10, byte(rng.IntN(4)), byte(rng.IntN(256)), byte(rng.IntN(256))}))
		}
		// Prefixes() covers exactly the same addresses.
		again := NewSet(s.Prefixes())
		if !slices.Equal(again.v4, s.v4) || !slices.Equal(again.v6, s.v6) {
			t.Fatalf("round %d: NewSet(Prefixes()) differs", round)
		}
	}
}

// lastAddr is the last address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	p = p.Masked()
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func TestSetContainsAllocs(t *testing.T) {
	s := NewSet(prefixes("192.0.2.0/24", "2001:db8::/32"))
	v4, v6 := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")
	if n := testing.AllocsPerRun(100, func() { s.Contains(v4); s.Contains(v6) }); n != 0 {
		t.Errorf("%v allocations per Contains", n)
	}
	sig := NewSignal(s, "")
	r := &challenge.Request{IP: v4}
	if n := testing.AllocsPerRun(100, func() { sig.Check(context.Background(), r) }); n != 0 {
		t.Errorf("%v allocations per Check", n)
	}
}

func TestSignal(t *testing.T) {
	s := NewSet(prefixes("192.0.2.0/24"))
	for _, tt := range []struct {
		reason, ip string
		want       challenge.Finding
	}{
		{"", "192.0.2.1", challenge.Finding{Suspicion: 1, Reason: DefaultReason}},
		{"hosting_aws", "192.0.2.1", challenge.Finding{Suspicion: 1, Reason: "hosting_aws"}},
		{"", "198.51.100.1", challenge.Finding{}},
		{"", "", challenge.Finding{}},
	} {
		r := &challenge.Request{}
		if tt.ip != "" {
			r.IP = netip.MustParseAddr(tt.ip)
		}
		got, err := NewSignal(s, tt.reason).Check(context.Background(), r)
		if err != nil || got != tt.want {
			t.Errorf("reason %q, ip %q: %+v, %v; want %+v", tt.reason, tt.ip, got, err, tt.want)
		}
	}
}
