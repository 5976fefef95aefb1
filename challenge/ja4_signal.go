package challenge

import (
	"context"
	"errors"
	"fmt"
)

// Reasons of JA4Signal.
const (
	ReasonJA4KnownBad = "ja4_known_bad"
	ReasonJA4Unknown  = "ja4_unknown"
)

// ErrInvalidJA4 is returned (wrapped) for a string that is not a JA4
// fingerprint.
var ErrInvalidJA4 = errors.New("challenge: not a JA4 fingerprint")

// ValidJA4 reports whether s has the form of a JA4 fingerprint:
// section a of 10 characters (protocol t, q or d; a version 10–13, s2, s3,
// d1–d3 or 00; d or i; two 2-digit counts; two ASCII letters or digits),
// then "_" and 12 lower-case hex digits, twice.
func ValidJA4(s string) bool {
	if len(s) != 36 || s[10] != '_' || s[23] != '_' {
		return false
	}
	if s[0] != 't' && s[0] != 'q' && s[0] != 'd' {
		return false
	}
	switch s[1:3] {
	case "10", "11", "12", "13", "s2", "s3", "d1", "d2", "d3", "00":
	default:
		return false
	}
	if s[3] != 'd' && s[3] != 'i' {
		return false
	}
	for i := 4; i < 8; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	if !ja4Alnum(s[8]) || !ja4Alnum(s[9]) {
		return false
	}
	for _, part := range []string{s[11:23], s[24:]} {
		for i := 0; i < len(part); i++ {
			if c := part[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// JA4Entry is a fingerprint with the suspicion it carries.
type JA4Entry struct {
	// Fingerprint is a full JA4 fingerprint (see ValidJA4).
	Fingerprint string
	// Suspicion from 0 to 1.
	Suspicion float64
}

// JA4Options configures a JA4Signal.
type JA4Options struct {
	// Bad fingerprints: those of automation tools, with their suspicion
	// (1 for "certainly a tool").
	Bad []JA4Entry
	// Good fingerprints: those of real browsers; suspicion 0.
	Good []string
	// Data are fingerprints from a data file (DefaultFingerprints, an
	// operator's): tools count as Bad with suspicion 1, browsers as Good.
	// A fingerprint also in Bad or Good keeps that entry's judgement, and
	// one listed in Data under several clients counts once. A fingerprint
	// on no list with the TLSStack of a Data entry is judged as that
	// entry: the same client resuming a session on another connection.
	Data []Fingerprint
	// Unknown is the suspicion of a fingerprint in neither list, 0 to 1.
	// It is meaningful with a Good list that covers the browsers visitors
	// use; without one, every visitor is unknown.
	Unknown float64
}

// JA4Signal judges a request by its TLS client fingerprint
// (Request.JA4) against lists of known fingerprints. A request without a
// fingerprint (waitroom did not see the TLS handshake) is not judged:
// suspicion 0. It is immutable and safe for concurrent use.
type JA4Signal struct {
	known   map[string]float64
	stacks  map[string]float64 // Data's, by TLSStack
	unknown float64
}

// NewJA4Signal returns a JA4Signal for o. It fails, listing every
// problem, for an invalid fingerprint, a suspicion outside 0..1 or a
// fingerprint listed twice in Bad and Good (also as both bad and good).
func NewJA4Signal(o JA4Options) (*JA4Signal, error) {
	var errs []error
	s := &JA4Signal{known: make(map[string]float64, len(o.Bad)+len(o.Good)+len(o.Data)),
		stacks: make(map[string]float64, len(o.Data)), unknown: o.Unknown}
	add := func(what string, i int, fp string, sus float64) {
		switch {
		case !ValidJA4(fp):
			errs = append(errs, fmt.Errorf("%w: %s[%d] %q", ErrInvalidJA4, what, i, fp))
			return
		case !(sus >= 0 && sus <= 1):
			errs = append(errs, fmt.Errorf("challenge: %s[%d]: suspicion %v is not 0 to 1", what, i, sus))
			return
		}
		if _, dup := s.known[fp]; dup {
			errs = append(errs, fmt.Errorf("challenge: %s[%d]: %s is listed twice", what, i, fp))
			return
		}
		s.known[fp] = sus
	}
	for i, e := range o.Bad {
		add("bad", i, e.Fingerprint, e.Suspicion)
	}
	for i, fp := range o.Good {
		add("good", i, fp, 0)
	}
	for _, f := range o.Data {
		if _, dup := s.known[f.JA4]; dup {
			continue
		}
		if !ValidJA4(f.JA4) {
			errs = append(errs, fmt.Errorf("%w: data %s %q", ErrInvalidJA4, f.Client, f.JA4))
			continue
		}
		sus := 0.0
		if f.Kind == FingerprintTool {
			sus = 1
		}
		s.known[f.JA4] = sus
		if prev, dup := s.stacks[TLSStack(f.JA4)]; !dup || prev < sus {
			s.stacks[TLSStack(f.JA4)] = sus
		}
	}
	if !(o.Unknown >= 0 && o.Unknown <= 1) {
		errs = append(errs, fmt.Errorf("challenge: unknown suspicion %v is not 0 to 1", o.Unknown))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// Check implements Signal.
func (s *JA4Signal) Check(_ context.Context, r *Request) (Finding, error) {
	if r.JA4 == "" {
		return Finding{}, nil
	}
	sus, ok := s.known[r.JA4]
	if !ok && len(s.stacks) > 0 && ValidJA4(r.JA4) {
		var buf [ja4StackLen]byte
		sus, ok = s.stacks[string(appendTLSStack(buf[:0], r.JA4))]
	}
	switch {
	case ok && sus > 0:
		return Finding{Suspicion: sus, Reason: ReasonJA4KnownBad}, nil
	case ok:
		return Finding{}, nil
	case s.unknown > 0:
		return Finding{Suspicion: s.unknown, Reason: ReasonJA4Unknown}, nil
	}
	return Finding{}, nil
}

var _ Signal = (*JA4Signal)(nil)
