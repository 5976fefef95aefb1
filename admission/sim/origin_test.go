package sim

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestOriginLatency: a FIFO server at a quarter of its capacity answers
// within about its base latency; past its capacity, latency and errors
// grow.
func TestOriginLatency(t *testing.T) {
	for _, tc := range []struct {
		shoppers int
		maxP95   time.Duration
		minP95   time.Duration
	}{{30, 150 * time.Millisecond, 0}, {400, 0, time.Second}} {
		o := newOrigin(Origin{Capacity: []CapacityStep{{PerMinute: 200}}}, rand.New(rand.NewPCG(1, 2)))
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range tc.shoppers {
			o.enter(&visitor{}, start.Add(time.Duration(i)*time.Millisecond))
		}
		var worst time.Duration
		for s := 1; s <= 60; s++ {
			now := start.Add(time.Duration(s) * time.Second)
			o.step(now, time.Minute)
			// keep the population constant
			for len(o.serving) < tc.shoppers {
				o.enter(&visitor{}, now)
			}
			if s > 10 {
				worst = max(worst, o.measure().LatencyP95)
			}
		}
		if tc.maxP95 > 0 && worst > tc.maxP95 {
			t.Errorf("%d shoppers: worst p95 %v, want ≤ %v", tc.shoppers, worst, tc.maxP95)
		}
		if tc.minP95 > 0 && worst < tc.minP95 {
			t.Errorf("%d shoppers: worst p95 %v, want ≥ %v (overloaded)", tc.shoppers, worst, tc.minP95)
		}
	}
}
