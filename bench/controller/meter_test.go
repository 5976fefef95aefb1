package main

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/sim"
	"github.com/waitroom/waitroom/proxy/meter"
)

// TestSimMeterIsProxyMeter feeds the same traffic to proxy/meter (as
// `waitroom serve` makes it) and to admission/sim's model of it, which the
// simulated benchmark measures with, and checks that every tick both
// report the same figures: requests, 503s and failures over the last
// second with the partly counted oldest slot, the latency histogram's
// percentiles and mean, requests in flight, active visitors over their
// epochs (completed ones leaving at once) and completions.
func TestSimMeterIsProxyMeter(t *testing.T) {
	base := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	now := base
	real := meter.New(meter.Options{Clock: func() time.Time { return now }, Shards: 4})
	ev := real.Event("bench")
	model := sim.NewMeterModel(base)
	rng := rand.New(rand.NewPCG(1, 2))

	type visitor struct {
		real  meter.Presence
		model sim.MeterPresence
	}
	visitors := make([]visitor, 300)
	type request struct {
		tok   meter.Token
		start time.Time
		v     *visitor
	}
	var open []request
	tick := base.Add(370 * time.Millisecond) // the engine ticks at some phase of the meter's seconds
	for step := 0; step < 20_000; step++ {
		now = now.Add(time.Duration(rng.IntN(30)) * time.Millisecond)
		for !tick.After(now) {
			// Measure at the tick's own time, as the engine does.
			at := now
			now = tick
			got, want := model.Measure("bench", tick), ev.Measure(tick)
			if !same(got, want) {
				t.Fatalf("at %s: the model measures\n%+v\nproxy/meter measures\n%+v", tick.Sub(base), got, want)
			}
			now = at
			tick = tick.Add(time.Second)
		}
		switch r := rng.IntN(10); {
		case r < 5 || len(open) == 0: // a request goes out
			v := &visitors[rng.IntN(len(visitors))]
			ev.SeenAt(&v.real, now)
			model.Seen(&v.model, now)
			open = append(open, request{tok: ev.StartAt(now), start: now, v: v})
			model.Start()
		default: // one comes back: 200, a checkout, a 503 or a failure
			i := rng.IntN(len(open))
			q := open[i]
			open = append(open[:i], open[i+1:]...)
			status, failed := 200, false
			switch k := rng.IntN(20); {
			case k == 0:
				failed = true
			case k < 4:
				status = 503
			}
			ev.DoneAt(q.tok, now, status, failed)
			model.Done(now, now.Sub(q.start), status, failed)
			if status == 200 && rng.IntN(15) == 0 {
				if a, b := ev.Complete(&q.v.real), model.Complete(&q.v.model); a != b {
					t.Fatalf("Complete: proxy/meter %v, the model %v", a, b)
				}
			}
		}
	}
}

// same compares two measurements, the weighted sums to a rounding error.
func same(a, b admission.Measurements) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) <= 1e-9*max(1, math.Abs(y)) }
	return near(a.RequestRate, b.RequestRate) && near(a.ErrorRate, b.ErrorRate) && near(a.Answered, b.Answered) &&
		a.LatencyP50 == b.LatencyP50 && a.LatencyP95 == b.LatencyP95 &&
		math.Abs(float64(a.LatencyMean-b.LatencyMean)) <= 1 && a.InFlight == b.InFlight && a.Active == b.Active &&
		a.Completions == b.Completions
}
