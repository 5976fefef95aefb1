package iplist

import (
	"cmp"
	"net/netip"
	"slices"
)

// Set is an immutable set of IP ranges: sorted, merged, disjoint intervals
// per address family, searched by bisection. Contains does not allocate.
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are IPv4 addresses, both in
// the prefixes a Set is built from and in lookups. A Set is safe for
// concurrent use.
type Set struct {
	v4 []span4
	v6 []span6
}

type span4 struct{ lo, hi uint32 }

// u128 is a 128-bit address as two halves.
type u128 struct{ hi, lo uint64 }

func (a u128) cmp(b u128) int {
	if c := cmp.Compare(a.hi, b.hi); c != 0 {
		return c
	}
	return cmp.Compare(a.lo, b.lo)
}

func (a u128) next() (u128, bool) {
	if a.lo != ^uint64(0) {
		return u128{a.hi, a.lo + 1}, true
	}
	if a.hi != ^uint64(0) {
		return u128{a.hi + 1, 0}, true
	}
	return a, false // the last address
}

type span6 struct{ lo, hi u128 }

// The IPv4-mapped block ::ffff:0.0.0.0/96 as a 128-bit range.
var (
	mappedLo = u128{0, 0x0000_ffff_0000_0000}
	mappedHi = u128{0, 0x0000_ffff_ffff_ffff}
)

func addr128(a netip.Addr) u128 {
	b := a.As16()
	return u128{be64(b[:8]), be64(b[8:])}
}

func be64(b []byte) uint64 {
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

func addr32(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// NewSet builds a Set of prefixes. Invalid prefixes are skipped; host bits
// are ignored.
func NewSet(prefixes []netip.Prefix) *Set {
	s := &Set{}
	for _, p := range prefixes {
		if !p.IsValid() {
			continue
		}
		p = p.Masked()
		a, bits := p.Addr(), p.Bits()
		if a.Is4() {
			lo := addr32(a)
			s.v4 = append(s.v4, span4{lo, lo | hostMask32(bits)})
			continue
		}
		lo := addr128(a)
		hi := u128{lo.hi | hostMask64(bits), lo.lo | hostMask64(bits-64)}
		s.v6 = append(s.v6, span6{lo, hi})
		// The part inside ::ffff:0:0/96 is IPv4 as well.
		ilo, ihi := maxU(lo, mappedLo), minU(hi, mappedHi)
		if ilo.cmp(ihi) <= 0 {
			s.v4 = append(s.v4, span4{uint32(ilo.lo), uint32(ihi.lo)})
		}
	}
	s.v4 = merge4(s.v4)
	s.v6 = merge6(s.v6)
	return s
}

// hostMask32 is the host part of an IPv4 prefix of bits bits.
func hostMask32(bits int) uint32 {
	if bits <= 0 {
		return ^uint32(0)
	}
	return ^uint32(0) >> bits
}

// hostMask64 is the host part of a 64-bit half with bits network bits
// (bits may be negative or over 64).
func hostMask64(bits int) uint64 {
	switch {
	case bits <= 0:
		return ^uint64(0)
	case bits >= 64:
		return 0
	}
	return ^uint64(0) >> bits
}

func maxU(a, b u128) u128 {
	if a.cmp(b) >= 0 {
		return a
	}
	return b
}

func minU(a, b u128) u128 {
	if a.cmp(b) <= 0 {
		return a
	}
	return b
}

func merge4(s []span4) []span4 {
	if len(s) == 0 {
		return nil
	}
	slices.SortFunc(s, func(a, b span4) int { return cmp.Compare(a.lo, b.lo) })
	out := s[:1]
	for _, x := range s[1:] {
		last := &out[len(out)-1]
		// Overlapping or adjacent: extend.
		if last.hi == ^uint32(0) || x.lo <= last.hi+1 {
			last.hi = max(last.hi, x.hi)
			continue
		}
		out = append(out, x)
	}
	return slices.Clip(out)
}

func merge6(s []span6) []span6 {
	if len(s) == 0 {
		return nil
	}
	slices.SortFunc(s, func(a, b span6) int { return a.lo.cmp(b.lo) })
	out := s[:1]
	for _, x := range s[1:] {
		last := &out[len(out)-1]
		after, ok := last.hi.next()
		if !ok || x.lo.cmp(after) <= 0 {
			last.hi = maxU(last.hi, x.hi)
			continue
		}
		out = append(out, x)
	}
	return slices.Clip(out)
}

// Contains reports whether a is in the set. The zone is ignored; the zero
// Addr is in no set.
func (s *Set) Contains(a netip.Addr) bool {
	a = a.Unmap()
	switch {
	case a.Is4():
		x := addr32(a)
		lo, hi := 0, len(s.v4)
		for lo < hi { // first span with hi >= x
			m := int(uint(lo+hi) >> 1)
			if s.v4[m].hi < x {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return lo < len(s.v4) && s.v4[lo].lo <= x
	case a.Is6():
		x := addr128(a)
		lo, hi := 0, len(s.v6)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if s.v6[m].hi.cmp(x) < 0 {
				lo = m + 1
			} else {
				hi = m
			}
		}
		return lo < len(s.v6) && s.v6[lo].lo.cmp(x) <= 0
	}
	return false
}

// Len is the number of disjoint ranges (IPv4 and IPv6) after merging.
func (s *Set) Len() int { return len(s.v4) + len(s.v6) }

// Prefixes returns the set as a minimal list of prefixes covering exactly
// its addresses, IPv4 first, for logs and tests.
func (s *Set) Prefixes() []netip.Prefix {
	var out []netip.Prefix
	for _, r := range s.v4 {
		out = appendRange(out, u128{0, uint64(r.lo)}, u128{0, uint64(r.hi)}, true)
	}
	for _, r := range s.v6 {
		out = appendRange(out, r.lo, r.hi, false)
	}
	return out
}

// appendRange splits [lo, hi] into aligned prefixes.
func appendRange(out []netip.Prefix, lo, hi u128, v4 bool) []netip.Prefix {
	width := 128
	if v4 {
		width = 32
	}
	for lo.cmp(hi) <= 0 {
		// The largest block that starts at lo and ends at or before hi.
		size := trailingZeros(lo, width)
		for size > 0 && blockEnd(lo, size).cmp(hi) > 0 {
			size--
		}
		out = append(out, netip.PrefixFrom(fromU128(lo, v4), width-size))
		end := blockEnd(lo, size)
		next, ok := end.next()
		if !ok || end.cmp(hi) >= 0 {
			break
		}
		lo = next
	}
	return out
}

// trailingZeros counts the zero low bits of a, at most width.
func trailingZeros(a u128, width int) int {
	n := 0
	for n < width {
		var bit uint64
		if n < 64 {
			bit = a.lo >> n & 1
		} else {
			bit = a.hi >> (n - 64) & 1
		}
		if bit != 0 {
			break
		}
		n++
	}
	return n
}

// blockEnd is the last address of the block of 2^size addresses at lo.
func blockEnd(lo u128, size int) u128 {
	return u128{lo.hi | hostMask64(128-size), lo.lo | hostMask64(64-size)}
}

func fromU128(a u128, v4 bool) netip.Addr {
	if v4 {
		x := uint32(a.lo)
		return netip.AddrFrom4([4]byte{byte(x >> 24), byte(x >> 16), byte(x >> 8), byte(x)})
	}
	var b [16]byte
	for i := range 8 {
		b[i] = byte(a.hi >> (56 - 8*i))
		b[8+i] = byte(a.lo >> (56 - 8*i))
	}
	return netip.AddrFrom16(b)
}
