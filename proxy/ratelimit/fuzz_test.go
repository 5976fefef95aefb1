package ratelimit

import (
	"net/netip"
	"testing"
	"time"
)

// FuzzAllow drives a limiter with arbitrary shapes and arrival sequences
// and checks the token-bucket bound: over any run, no address and no
// prefix gets more than Burst + (elapsed / interval) requests through, and
// every refusal names a positive wait no longer than the bucket takes to
// refill.
func FuzzAllow(f *testing.F) {
	f.Add(uint8(2), uint8(3), uint8(5), uint8(8), []byte{0, 0, 0, 1, 0, 2, 10, 3, 200, 4})
	f.Add(uint8(1), uint8(1), uint8(1), uint8(1), []byte{7, 7, 7, 7, 7, 7})
	f.Add(uint8(100), uint8(10), uint8(3), uint8(2), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Fuzz(func(t *testing.T, ipRate, ipBurst, pRate, pBurst uint8, ops []byte) {
		cfg := Config{
			PerIP:     Bucket{Rate: float64(ipRate%50) / 4, Burst: int(ipBurst%8) + 1},
			PerPrefix: Bucket{Rate: float64(pRate%50) / 2, Burst: int(pBurst%16) + 1},
			TableSize: 64, // more than the addresses used: nothing is forgotten
		}
		l, c := newTestLimiter(t, cfg)
		// 8 addresses in 2 /24s (one of them also written mapped) and 2 /48s.
		addrs := []netip.Addr{
			addr("10.0.0.1"), addr("10.0.0.2"), addr("::ffff:10.0.0.1"), addr("10.0.1.1"),
			addr("2001:db8:1::1"), addr("2001:db8:1:ff::2"), addr("2001:db8:2::1"), addr("10.0.1.200"),
		}
		type count struct {
			n           int64
			first, last int64
		}
		perIP := map[netip.Addr]*count{}
		perPrefix := map[netip.Prefix]*count{}
		note := func(m *count, now int64) {
			if m.n == 0 {
				m.first = now
			}
			m.n++
			m.last = now
		}
		now := int64(0)
		for i := 0; i+1 < len(ops); i += 2 {
			now += int64(ops[i+1]) * int64(time.Millisecond) * 7
			c.Set(time.Duration(now))
			a := addrs[int(ops[i])%len(addrs)]
			ok, retry := l.Allow(a)
			if !ok {
				maxWait := max(l.ip.tolerance+l.ip.interval, l.prefix.tolerance+l.prefix.interval)
				if retry <= 0 || int64(retry) > maxWait {
					t.Fatalf("refused with retry %v (buckets refill in at most %v)", retry, time.Duration(maxWait))
				}
				continue
			}
			if retry != 0 {
				t.Fatalf("allowed with retry %v", retry)
			}
			ua := a.Unmap()
			if perIP[ua] == nil {
				perIP[ua] = &count{}
			}
			note(perIP[ua], now)
			p := l.Prefix(a)
			if perPrefix[p] == nil {
				perPrefix[p] = &count{}
			}
			note(perPrefix[p], now)
		}
		bound := func(g gcra, burst int, m *count) bool {
			if g.interval == 0 {
				return true
			}
			return m.n*g.interval <= int64(burst)*g.interval+(m.last-m.first)
		}
		for a, m := range perIP {
			if !bound(l.ip, cfg.PerIP.Burst, m) {
				t.Errorf("%v: %d allowed in %v, over burst %d + rate %v", a, m.n, time.Duration(m.last-m.first), cfg.PerIP.Burst, cfg.PerIP.Rate)
			}
		}
		for p, m := range perPrefix {
			if !bound(l.prefix, cfg.PerPrefix.Burst, m) {
				t.Errorf("%v: %d allowed in %v, over burst %d + rate %v", p, m.n, time.Duration(m.last-m.first), cfg.PerPrefix.Burst, cfg.PerPrefix.Rate)
			}
		}
	})
}
