package challenge

import (
	"context"
	"net/netip"
	"testing"
	"time"
)

// scoreDefaultSet is the default signal set (headers 60, rate 40, ja4 30,
// consistency 40, client 30) and a real Chrome join.
func scoreDefaultSet(tb testing.TB, slow bool) (*Scorer, *Request) {
	tb.Helper()
	h, err := NewHeaderSignal(HeaderOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	rate, err := NewRateSignal(RateOptions{Window: time.Minute, PerIP: RateLimit{4, 12}, PerPrefix: RateLimit{8, 24},
		PerFingerprint: RateLimit{1000, 10000}, Long: RateWindow{Window: time.Hour, PerIP: RateLimit{30, 120},
			PerPrefix: RateLimit{100, 400}, PerFingerprint: RateLimit{20000, 200000}}, MaxKeys: 100_000})
	if err != nil {
		tb.Fatal(err)
	}
	j, err := NewJA4Signal(JA4Options{Good: []string{ja4Chrome}, Unknown: 0.1})
	if err != nil {
		tb.Fatal(err)
	}
	cons, err := NewConsistencySignal(ConsistencyOptions{Data: DefaultFingerprints()})
	if err != nil {
		tb.Fatal(err)
	}
	sigs := []WeightedSignal{{"headers", 60, h, false}, {"rate", 40, rate, false}, {"ja4", 30, j, false},
		{"consistency", 40, cons, false}, {"client", 30, ClientSignal{}, false}}
	if slow {
		sigs = append(sigs, WeightedSignal{"external", 50, scoreFixed{f: Finding{0.2, "ext"}}, true})
	}
	s, err := NewScorer(sigs, ScorerOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	r := hdrReq(hdrChromeH1)
	r.IP = netip.MustParseAddr("192.0.2.1")
	r.JA4 = "t13d1517h2_8daaf6152771_cb7bf5808d99"
	return s, r
}

func BenchmarkScore(b *testing.B) {
	for _, slow := range []bool{false, true} {
		name := "fast signals"
		if slow {
			name = "with a slow signal"
		}
		b.Run(name, func(b *testing.B) {
			s, r := scoreDefaultSet(b, slow)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				s.Score(ctx, r)
			}
		})
	}
}
