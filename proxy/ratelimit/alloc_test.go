package ratelimit

import (
	"net/netip"
	"testing"
	"time"
)

// TestAllocs: a tracked address costs no allocation, allowed or refused,
// and neither does reading its rate.
func TestAllocs(t *testing.T) {
	l, c := newTestLimiter(t, Config{PerIP: Bucket{Rate: 5, Burst: 2}, PerPrefix: Bucket{Rate: 50, Burst: 20}, TableSize: 1024})
	addrs := []netip.Addr{addr("192.0.2.1"), addr("::ffff:192.0.2.77"), addr("2001:db8:5::1"), addr("fe80::1%eth0")}
	for _, a := range addrs {
		l.Allow(a)
	}
	i := 0
	tests := []struct {
		name string
		fn   func()
	}{
		{"Allow", func() { l.Allow(addrs[i%len(addrs)]); i++ }},
		{"Allow with time passing", func() { c.Add(37 * time.Millisecond); l.Allow(addrs[i%len(addrs)]); i++ }},
		{"AllowAt", func() { l.AllowAt(addrs[i%len(addrs)], c.Now()); i++ }},
		{"Rate", func() { l.Rate(addrs[i%len(addrs)]); i++ }},
		{"PrefixRate", func() { l.PrefixRate(addrs[i%len(addrs)]); i++ }},
		{"Prefix", func() { l.Prefix(addrs[i%len(addrs)]); i++ }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(1000, tc.fn); n != 0 {
				t.Errorf("%v allocations per call, want 0", n)
			}
		})
	}
}
