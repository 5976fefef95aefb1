package challenge

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/bits-and-blooms/bloom/v3"
)

// Reasons of KnownBadSignal.
const (
	ReasonKnownBadVisitor = "known_bad_visitor"
	ReasonKnownBadJA4     = "known_bad_ja4"
	ReasonKnownBadIP      = "known_bad_ip"
)

// DefaultKnownBadFalsePositiveRate is the default chance that a key not
// on any list is taken for a listed one: one in a million, since a false
// positive treats a visitor as a known bot. A million keys then take
// about 3.4 MiB.
const DefaultKnownBadFalsePositiveRate = 1e-6

// ErrInvalidKnownBad is returned (wrapped) by NewKnownBadSignal.
var ErrInvalidKnownBad = errors.New("challenge: invalid known-bad lists")

// KnownBadLists are the keys of a KnownBadSignal.
type KnownBadLists struct {
	// Visitors are visitor ids (Request.Visitor).
	Visitors []string
	// JA4 are JA4 fingerprints (Request.JA4).
	JA4 []string
	// IPs are single addresses; IPv4-mapped IPv6 addresses count as IPv4.
	// Ranges belong in a range list (plugins/iplist), not here.
	IPs []string
	// FalsePositiveRate is the chance, above 0 and below 1, that an
	// unlisted key is taken for a listed one; 0 means
	// DefaultKnownBadFalsePositiveRate.
	FalsePositiveRate float64
}

// KnownBadSignal judges a request by whether its visitor id, JA4
// fingerprint or address is on a known-bad list: suspicion 1 on a hit.
// The lists are kept in one Bloom filter, each key prefixed with its kind
// ("visitor:", "ja4:", "ip:") so that kinds never collide; a false
// positive is possible at the configured rate, a false negative is not.
// It is immutable and safe for concurrent use; Check allocates nothing
// for keys under 200 bytes.
type KnownBadSignal struct {
	f *bloom.BloomFilter // nil when the lists are empty
	n int
}

// NewKnownBadSignal builds the filter from l. Empty strings, addresses
// that do not parse and JA4 strings that are not fingerprints are errors,
// all listed in the one error (wrapping ErrInvalidKnownBad).
func NewKnownBadSignal(l KnownBadLists) (*KnownBadSignal, error) {
	var errs []error
	fp := l.FalsePositiveRate
	if fp == 0 {
		fp = DefaultKnownBadFalsePositiveRate
	}
	if !(fp > 0 && fp < 1) {
		errs = append(errs, fmt.Errorf("%w: false positive rate %v is not between 0 and 1", ErrInvalidKnownBad, l.FalsePositiveRate))
	}
	n := len(l.Visitors) + len(l.JA4) + len(l.IPs)
	var keys [][]byte
	if n > 0 {
		keys = make([][]byte, 0, n)
	}
	for i, v := range l.Visitors {
		if v == "" {
			errs = append(errs, fmt.Errorf("%w: visitor %d is empty", ErrInvalidKnownBad, i))
			continue
		}
		keys = append(keys, knownBadKey(nil, kbVisitor, v))
	}
	for i, j := range l.JA4 {
		if !ValidJA4(j) {
			errs = append(errs, fmt.Errorf("%w: ja4 %d: %q is not a JA4 fingerprint", ErrInvalidKnownBad, i, j))
			continue
		}
		keys = append(keys, knownBadKey(nil, kbJA4, j))
	}
	for i, s := range l.IPs {
		a, err := netip.ParseAddr(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: ip %d: %q is not an IP address", ErrInvalidKnownBad, i, s))
			continue
		}
		keys = append(keys, knownBadIPKey(nil, a))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s := &KnownBadSignal{n: len(keys)}
	if len(keys) > 0 {
		s.f = bloom.NewWithEstimates(uint(len(keys)), fp)
		for _, k := range keys {
			s.f.Add(k)
		}
	}
	return s, nil
}

// Len is the number of keys the filter was built from.
func (s *KnownBadSignal) Len() int { return s.n }

// Key kinds, the prefixes that keep them apart.
const (
	kbVisitor = "visitor:"
	kbJA4     = "ja4:"
	kbIP      = "ip:"
)

func knownBadKey(b []byte, kind, v string) []byte {
	b = append(b, kind...)
	return append(b, v...)
}

// knownBadIPKey is "ip:" and the address's canonical text (IPv4 for a
// mapped address, no zone).
func knownBadIPKey(b []byte, a netip.Addr) []byte {
	b = append(b, kbIP...)
	return a.Unmap().WithZone("").AppendTo(b)
}

// Check implements Signal.
func (s *KnownBadSignal) Check(_ context.Context, r *Request) (Finding, error) {
	if s.f == nil {
		return Finding{}, nil
	}
	var buf [200]byte
	if r.Visitor != "" && s.f.Test(knownBadKey(buf[:0], kbVisitor, r.Visitor)) {
		return Finding{Suspicion: 1, Reason: ReasonKnownBadVisitor}, nil
	}
	if r.JA4 != "" && s.f.Test(knownBadKey(buf[:0], kbJA4, r.JA4)) {
		return Finding{Suspicion: 1, Reason: ReasonKnownBadJA4}, nil
	}
	if r.IP.IsValid() && s.f.Test(knownBadIPKey(buf[:0], r.IP)) {
		return Finding{Suspicion: 1, Reason: ReasonKnownBadIP}, nil
	}
	return Finding{}, nil
}

var _ Signal = (*KnownBadSignal)(nil)
