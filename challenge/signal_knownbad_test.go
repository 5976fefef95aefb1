package challenge

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

func TestKnownBadSignal(t *testing.T) {
	s, err := NewKnownBadSignal(KnownBadLists{
		Visitors: []string{"v-bad-1", "v-bad-2"},
		JA4:      []string{ja4Tool},
		IPs:      []string{"192.0.2.66", "2001:db8::66", "::ffff:198.51.100.9"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 6 {
		t.Errorf("Len = %d, want 6", s.Len())
	}
	ip := netip.MustParseAddr
	tests := []struct {
		name string
		r    Request
		want Finding
	}{
		{"clean", Request{Visitor: "v-good", JA4: ja4Chrome, IP: ip("192.0.2.1")}, Finding{}},
		{"empty", Request{}, Finding{}},
		{"visitor", Request{Visitor: "v-bad-2", IP: ip("192.0.2.1")}, Finding{1, ReasonKnownBadVisitor}},
		{"ja4", Request{JA4: ja4Tool}, Finding{1, ReasonKnownBadJA4}},
		{"ip", Request{IP: ip("192.0.2.66")}, Finding{1, ReasonKnownBadIP}},
		{"ipv6", Request{IP: ip("2001:db8::66")}, Finding{1, ReasonKnownBadIP}},
		{"mapped request, plain list", Request{IP: ip("::ffff:192.0.2.66")}, Finding{1, ReasonKnownBadIP}},
		{"plain request, mapped list", Request{IP: ip("198.51.100.9")}, Finding{1, ReasonKnownBadIP}},
		{"zone ignored", Request{IP: ip("2001:db8::66%eth0")}, Finding{1, ReasonKnownBadIP}},
		// Kinds are kept apart: a visitor id that is a listed IP's text.
		{"kinds apart", Request{Visitor: "192.0.2.66", JA4: "v-bad-1"}, Finding{}},
		{"visitor reported first", Request{Visitor: "v-bad-1", JA4: ja4Tool, IP: ip("192.0.2.66")}, Finding{1, ReasonKnownBadVisitor}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Check(context.Background(), &tt.r)
			if err != nil || got != tt.want {
				t.Errorf("Check = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestKnownBadSignalEmpty(t *testing.T) {
	s, err := NewKnownBadSignal(KnownBadLists{})
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := s.Check(context.Background(), &Request{Visitor: "x", IP: netip.MustParseAddr("192.0.2.1")}); f != (Finding{}) {
		t.Errorf("empty lists: %+v", f)
	}
}

// The false positive rate holds roughly: with 10 000 listed visitors at
// 1e-3, about 10 of 10 000 unlisted ones hit.
func TestKnownBadSignalFalsePositives(t *testing.T) {
	var l KnownBadLists
	for i := range 10000 {
		l.Visitors = append(l.Visitors, fmt.Sprintf("listed-%d", i))
	}
	l.FalsePositiveRate = 1e-3
	s, err := NewKnownBadSignal(l)
	if err != nil {
		t.Fatal(err)
	}
	hits := 0
	for i := range 10000 {
		if f, _ := s.Check(context.Background(), &Request{Visitor: fmt.Sprintf("other-%d", i)}); f.Suspicion > 0 {
			hits++
		}
	}
	if hits > 40 {
		t.Errorf("%d false positives in 10000 at rate 1e-3", hits)
	}
	for _, v := range l.Visitors {
		if f, _ := s.Check(context.Background(), &Request{Visitor: v}); f.Suspicion != 1 {
			t.Fatalf("listed %s missed", v)
		}
	}
}

func TestNewKnownBadSignalInvalid(t *testing.T) {
	_, err := NewKnownBadSignal(KnownBadLists{
		Visitors:          []string{"ok", ""},
		JA4:               []string{"nope"},
		IPs:               []string{"192.0.2.0/24", "300.1.1.1"},
		FalsePositiveRate: 1,
	})
	if !errors.Is(err, ErrInvalidKnownBad) {
		t.Fatalf("%v, want ErrInvalidKnownBad", err)
	}
	for _, w := range []string{"false positive rate 1", "visitor 1 is empty", `ja4 0: "nope"`, `ip 0: "192.0.2.0/24"`, `ip 1: "300.1.1.1"`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}
