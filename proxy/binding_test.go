package proxy

import (
	"net/netip"
	"testing"
)

// TestBinderMatches: a cached token's binding is checked without hashing
// only when the request's inputs are the ones it was verified with; any
// other inputs are hashed and compared.
func TestBinderMatches(t *testing.T) {
	bd := Binding{UserAgent: true, IPPrefix: true}
	ip := netip.MustParseAddr("198.51.100.7")
	verified := bd.binder([]byte("Mozilla/5.0 A"), ip)
	want := verified.hash().String()
	with := verified.signals()
	cases := []struct {
		name string
		ua   string
		ip   string
		ok   bool
	}{
		{"same inputs", "Mozilla/5.0 A", "198.51.100.7", true},
		{"same /24", "Mozilla/5.0 A", "198.51.100.200", true},
		{"other /24", "Mozilla/5.0 A", "198.51.101.7", false},
		{"other user agent", "Mozilla/5.0 B", "198.51.100.7", false},
		{"ipv6", "Mozilla/5.0 A", "2001:db8::1", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := bd.binder([]byte(c.ua), netip.MustParseAddr(c.ip))
			if got := b.matches(&with, want); got != c.ok {
				t.Fatalf("matches = %v, want %v", got, c.ok)
			}
			// Without the memo (inputs unknown), the hash decides alike.
			if got := b.matches(&signals{ua: "\x00"}, want); got != c.ok {
				t.Fatalf("by hash: matches = %v, want %v", got, c.ok)
			}
		})
	}
	// A token verified with other inputs (signals) but bound to this
	// request's hash still matches: the memo only saves work.
	ob := bd.binder([]byte("Mozilla/5.0 B"), ip)
	other := ob.signals()
	b := bd.binder([]byte("Mozilla/5.0 A"), ip)
	if !b.matches(&other, want) {
		t.Fatal("the hash was not consulted")
	}
}
