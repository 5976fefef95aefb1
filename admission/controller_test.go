package admission

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

func TestControllerDefaults(t *testing.T) {
	c := NewController(ControllerConfig{}, 0)
	want := ControllerConfig{Tick: time.Second, TargetP95: 800 * time.Millisecond, TargetErrorRate: 0.01,
		InitialActive: 50, MinActive: 10, Increase: 0, Decrease: 0.7}
	if c.cfg != want {
		t.Errorf("config = %+v, want %+v", c.cfg, want)
	}
	if c.perSeat != DefaultVisitorsPerSeat {
		t.Errorf("visitors per seat = %v, want %v", c.perSeat, DefaultVisitorsPerSeat)
	}
	out := c.Step(ControllerInput{Now: ctlEpoch})
	if out.Limit != 50 || out.Admit != 50 || out.SoldOut {
		t.Errorf("first step = %+v, want limit 50, admit 50", out)
	}
}

func TestControllerGrowsWhileHealthy(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  ControllerConfig
		next func(l float64) float64
	}{
		{"default step, 5% of the limit", ControllerConfig{}, func(l float64) float64 { return l + max(2, 0.05*l) }},
		{"default step, at least 2", ControllerConfig{InitialActive: 20}, func(l float64) float64 { return l + max(2, 0.05*l) }},
		{"configured step", ControllerConfig{Increase: 3}, func(l float64) float64 { return l + 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewController(tc.cfg, 1.5)
			want := float64(c.cfg.InitialActive)
			for i := range 30 {
				// The limit is in use: everyone it allows is active.
				out := c.Step(ControllerInput{Now: at(i), Measurements: healthy(int(want))})
				want = tc.next(want)
				if out.Limit != int(want) {
					t.Fatalf("tick %d: limit %d, want %d", i, out.Limit, int(want))
				}
			}
		})
	}
}

func TestControllerDecrease(t *testing.T) {
	cfg := ControllerConfig{InitialActive: 100}
	slow := Measurements{RequestRate: 200, LatencyP95: 2 * time.Second}
	failing := Measurements{RequestRate: 200, LatencyP95: 300 * time.Millisecond, ErrorRate: 0.05}
	for _, tc := range []struct {
		name string
		bad  Measurements
	}{{"latency", slow}, {"errors", failing}} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewController(cfg, 1.5)
			bad := func(active int) Measurements { m := tc.bad; m.Active = active; return m }
			// A breach at a binding limit cuts it by Decrease.
			if out := c.Step(ControllerInput{Now: at(0), Measurements: bad(100)}); out.Limit != 70 || out.Admit != 0 {
				t.Fatalf("after a breach: %+v, want limit 70, admit 0", out)
			}
			// While the visitors admitted before are still there, the
			// breach goes on, but that is the old load: no new decrease.
			for i := 1; i <= 10; i++ {
				if out := c.Step(ControllerInput{Now: at(i), Measurements: bad(100 - 2*i)}); out.Limit != 70 {
					t.Fatalf("tick %d, still draining: limit %d, want 70", i, out.Limit)
				}
			}
			// Usage reaches the limit at tick 15; the measurements of
			// tick 16 are the first of a whole tick at that level: an
			// origin still failing then is cut again.
			for i := 11; i <= 15; i++ {
				if out := c.Step(ControllerInput{Now: at(i), Measurements: bad(100 - 2*i)}); out.Limit != 70 {
					t.Fatalf("tick %d: limit %d, want 70", i, out.Limit)
				}
			}
			if out := c.Step(ControllerInput{Now: at(16), Measurements: bad(70)}); out.Limit != 49 {
				t.Fatalf("tick 16, still failing at the new level: limit %d, want 49", out.Limit)
			}
		})
	}

	t.Run("marginal breaches cut less", func(t *testing.T) {
		for _, tc := range []struct {
			m    Measurements
			want float64
		}{
			{Measurements{RequestRate: 200, LatencyP95: 801 * time.Millisecond}, 0.97},     // a tenth of the cut at least
			{Measurements{RequestRate: 200, LatencyP95: 880 * time.Millisecond}, 0.94},     // 10 % over: a fifth of it
			{Measurements{RequestRate: 200, LatencyP95: 1000 * time.Millisecond}, 0.85},    // 25 % over: half
			{Measurements{RequestRate: 200, LatencyP95: 1200 * time.Millisecond}, 0.7},     // 50 % over: all
			{Measurements{RequestRate: 200, LatencyP95: 5 * time.Second}, 0.7},             // never more
			{Measurements{RequestRate: 200, ErrorRate: 0.015}, 0.85},                       // half again the error target
			{Measurements{RequestRate: 200, ErrorRate: 0.5, LatencyP95: time.Second}, 0.7}, // the worse of the two
		} {
			c := NewController(cfg, 1.5)
			m := tc.m
			m.Active = 100
			c.Step(ControllerInput{Now: at(0), Measurements: m})
			if want := 100 * tc.want; math.Abs(c.limit-want) > 1e-9 {
				t.Errorf("p95 %v, error rate %v: limit %v, want %v", m.LatencyP95, m.ErrorRate, c.limit, want)
			}
		}
	})

	t.Run("one bad tick costs one decrease", func(t *testing.T) {
		c := NewController(cfg, 1.5)
		for i := range 20 {
			m := healthy(int(c.limit)) // the limit is in use
			if i == 1 || i == 2 {
				m = slow
				m.Active = int(c.limit)
			}
			c.Step(ControllerInput{Now: at(i), Measurements: m})
		}
		// Growth at tick 0, the decrease at tick 1; tick 2's breach is in
		// the cooldown; then 17 healthy ticks of growth.
		want := (100 + 5) * 0.7
		for range 17 {
			want += max(2, 0.05*want)
		}
		if math.Abs(c.limit-want) > 1e-9 {
			t.Errorf("limit %v, want %v", c.limit, want)
		}
	})

	t.Run("at least three ticks apart", func(t *testing.T) {
		c := NewController(ControllerConfig{InitialActive: 1000}, 1.5)
		var limits []int
		for i := range 7 {
			// Usage always at the limit: each decrease shows at once.
			m := slow
			m.Active = int(c.limit)
			limits = append(limits, c.Step(ControllerInput{Now: at(i), Measurements: m}).Limit)
		}
		want := []int{700, 700, 700, 489, 489, 489, 342}
		for i := range want {
			if limits[i] != want[i] && limits[i] != want[i]+1 {
				t.Fatalf("limits %v, want %v", limits, want)
			}
		}
	})

	t.Run("cut from what is in use", func(t *testing.T) {
		// The limit was not binding (a lull): the cut applies to usage.
		c := NewController(ControllerConfig{InitialActive: 200}, 1.5)
		m := slow
		m.Active = 45
		if out := c.Step(ControllerInput{Now: at(0), Measurements: m}); out.Limit != 35 || out.Admit != 0 {
			t.Errorf("after a breach at usage 45 under a limit of 200: %+v, want limit 35 (0.7 × 45/0.9), admit 0", out)
		}
	})

	t.Run("never below MinActive", func(t *testing.T) {
		c := NewController(ControllerConfig{InitialActive: 12, MinActive: 10}, 1.5)
		for i := range 50 {
			m := slow
			m.Active = 5
			if out := c.Step(ControllerInput{Now: at(i), Measurements: m}); out.Limit != 10 {
				t.Fatalf("tick %d: limit %d, want 10", i, out.Limit)
			}
		}
	})
}

func TestControllerHoldsWithoutMeasurements(t *testing.T) {
	c := NewController(ControllerConfig{}, 1.5)
	for i := range 20 {
		// Everyone allowed is active, but nothing was measured.
		out := c.Step(ControllerInput{Now: at(i), Measurements: Measurements{Active: 50}})
		if out.Limit != 50 || out.Admit != 0 {
			t.Fatalf("tick %d: %+v, want limit 50, admit 0", i, out)
		}
	}
}

func TestControllerMaxActive(t *testing.T) {
	s := newSimRun(ControllerConfig{}, 6000) // an origin that takes far more
	s.caps.MaxActive = 80
	for s.tick < 300 {
		in, out := s.step()
		_, shows := s.pending()
		if out.Limit > 80 {
			t.Fatalf("tick %d: limit %d above MaxActive", s.tick, out.Limit)
		}
		if used := float64(in.Active) + shows; used > 80+1 {
			t.Fatalf("tick %d: %v active or coming, above MaxActive", s.tick, used)
		}
	}
	if got := s.outs[len(s.outs)-1].Limit; got != 80 {
		t.Errorf("limit %d, want it at MaxActive", got)
	}
}

func TestControllerMaxNewPerMinute(t *testing.T) {
	for _, perMin := range []int{30, 120, 1000} {
		s := newSimRun(ControllerConfig{}, 1e6)
		s.caps.MaxNewPerMinute = perMin
		for s.tick < 600 {
			s.step()
		}
		// The bucket's burst (5 s of the pace) at most in a tick, and
		// after the first minute the even pace: 5 s never admit more
		// than 5 s of the cap and the burst.
		burst := max(1, int(float64(perMin)*5/60))
		sum := 0
		for i, n := range s.admitted {
			if n > burst {
				t.Fatalf("cap %d: tick %d admitted %d, above the burst %d", perMin, i, n, burst)
			}
			if i >= 65 {
				five := 0
				for _, k := range s.admitted[i-4 : i+1] {
					five += k
				}
				if float64(five) > math.Ceil(float64(perMin)*5/60)+float64(burst) {
					t.Fatalf("cap %d: %d admitted in the 5 s up to tick %d", perMin, five, i)
				}
			}
			sum += n
			if i >= 60 {
				sum -= s.admitted[i-60]
			}
			if sum > perMin {
				t.Fatalf("cap %d: %d admitted in the minute up to tick %d", perMin, sum, i)
			}
		}
		if got := s.perMinute(120, 600); got < 0.9*float64(perMin) {
			t.Errorf("cap %d: %.0f admitted per minute, want the cap used", perMin, got)
		}
	}

	t.Run("the engine's count", func(t *testing.T) {
		// The engine counted admissions the controller does not know of
		// (another leader's): the larger count is honoured.
		c := NewController(ControllerConfig{}, 1.5)
		caps := Caps{MaxNewPerMinute: 100}
		out := c.Step(ControllerInput{Now: at(0), Measurements: healthy(0), Caps: caps, AdmittedLastMinute: 97})
		if out.Admit != 3 {
			t.Errorf("admit %d, want 3", out.Admit)
		}
		out = c.Step(ControllerInput{Now: at(1), Measurements: healthy(3), Caps: caps, AdmittedLastMinute: 100})
		if out.Admit != 0 {
			t.Errorf("admit %d with the minute used up, want 0", out.Admit)
		}
	})
}

func TestControllerInventory(t *testing.T) {
	for _, tc := range []struct {
		name      string
		active    int
		pending   int
		remaining int
		admit     int
		soldOut   bool
	}{
		{"room under the limit", 0, 0, 1000, 100, false},
		{"bounded by seats × 1.5", 20, 0, 40, 40, false},
		{"pending counts", 20, 10, 40, 30, false},
		{"full", 60, 0, 40, 0, false},
		{"over", 70, 0, 40, 0, false},
		{"sold out", 0, 0, 0, 0, true},
		{"negative remaining", 10, 0, -3, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewController(ControllerConfig{InitialActive: 100}, 1.5)
			out := c.Step(ControllerInput{Now: ctlEpoch, Measurements: Measurements{Active: tc.active},
				Pending: tc.pending, Remaining: tc.remaining, RemainingKnown: true})
			if out.Admit != tc.admit || out.SoldOut != tc.soldOut {
				t.Errorf("%+v, want admit %d, sold out %v", out, tc.admit, tc.soldOut)
			}
		})
	}

	t.Run("unknown remaining", func(t *testing.T) {
		c := NewController(ControllerConfig{}, 1.5)
		out := c.Step(ControllerInput{Now: ctlEpoch, Remaining: 0})
		if out.SoldOut || out.Admit != 50 {
			t.Errorf("%+v: an unknown inventory bounds nothing", out)
		}
	})

	t.Run("selling out", func(t *testing.T) {
		s := newSimRun(ControllerConfig{}, 600)
		s.remaining = 300
		soldOutAt := -1
		for s.tick < 1200 && soldOutAt < 0 {
			in, out := s.step()
			_, shows := s.pending() // this tick's admissions included
			// Visitors already in may outnumber what is left as seats
			// sell; those let in now may not.
			if bound := float64(in.Remaining) * 1.5; out.Admit > 0 && float64(in.Active)+shows > bound+1 {
				t.Fatalf("tick %d: %d active and %.1f coming (%d let in now) for %d seats", s.tick, in.Active, shows, out.Admit, in.Remaining)
			}
			if out.SoldOut {
				soldOutAt = s.tick
				if out.Admit != 0 || in.Remaining != 0 {
					t.Errorf("sold out with %d remaining, admitting %d", in.Remaining, out.Admit)
				}
			}
		}
		if soldOutAt < 0 {
			t.Fatal("never sold out")
		}
	})
}

func TestControllerIdleQueue(t *testing.T) {
	t.Run("nobody waiting", func(t *testing.T) {
		s := newSimRun(ControllerConfig{}, 600)
		s.queue = 0
		for s.tick < 600 {
			_, out := s.step()
			if out.Limit > 50 {
				t.Fatalf("tick %d: limit %d grew above the initial 50 with nobody to admit", s.tick, out.Limit)
			}
		}
		// After ten idle minutes the limit is back near the floor, and a
		// crowd arriving now is let in by that, not by a stale limit.
		if l := s.outs[len(s.outs)-1].Limit; l > 11 {
			t.Errorf("limit %d after ten idle minutes, want it at MinActive", l)
		}
		s.queue = math.Inf(1)
		if _, out := s.step(); out.Admit > 11 {
			t.Errorf("a crowd after the lull: %d let in at once", out.Admit)
		}
	})

	t.Run("a trickle", func(t *testing.T) {
		// Visitors arrive at 20 a minute, well under what the origin
		// takes: the limit follows what is in use, plus room to grow.
		s := newSimRun(ControllerConfig{}, 600)
		s.queue = 0
		for s.tick < 1200 {
			s.queue += 1.0 / 3
			in, out := s.step()
			_, shows := s.pending()
			used := float64(in.Active) + shows
			if s.tick > 300 && float64(out.Limit) > max(float64(DefaultInitialActive)/2, used/0.9+10) {
				t.Fatalf("tick %d: limit %d for %.0f in use", s.tick, out.Limit, used)
			}
		}
	})
}

// TestControllerPendingNoShows: pending numbers of visitors who never came
// do not hold room for their whole grace.
func TestControllerPendingNoShows(t *testing.T) {
	run := func(noShow float64) float64 {
		s := newSimRun(ControllerConfig{}, 200)
		s.noShow, s.grace = noShow, 120
		for s.tick < 600 {
			s.step()
		}
		return s.perMinute(120, 600)
	}
	base, withNoShows := run(0), run(0.5)
	if math.Abs(withNoShows-base) > 0.1*base {
		t.Errorf("%.0f admitted per minute with half the visitors no-shows, %.0f with none: want about the same", withNoShows, base)
	}
}

// TestControllerConvergence: in the test's origin model, the admission
// rate settles within ±15 % of the origin's capacity within 30 ticks of a
// change of capacity (200/min → 100/min → 200/min), measured over any
// minute starting 30 ticks after the change; the origin's error rate
// stays under 1 % once converged.
func TestControllerConvergence(t *testing.T) {
	for _, tc := range []struct {
		name       string
		journey    float64
		claimDelay int
		noShow     float64
	}{
		{"20s journeys", 20, 2, 0.2},
		{"15s journeys, fast claims", 15, 1, 0.1},
		{"30s journeys, no no-shows", 30, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const phase = 240
			capacities := []float64{200, 100, 200}
			s := newSimRun(ControllerConfig{}, capacities[0])
			s.origin.journey, s.claimDelay, s.noShow = tc.journey, tc.claimDelay, tc.noShow
			errs := make([]float64, 0, phase*len(capacities))
			for s.tick < phase*len(capacities) {
				s.origin.perMin = capacities[s.tick/phase]
				before := s.errSum
				s.step()
				errs = append(errs, s.errSum-before)
			}
			for p, c := range capacities {
				from, to := p*phase+30, (p+1)*phase
				for start := from; start+60 <= to; start++ {
					if got := s.perMinute(start, start+60); math.Abs(got-c) > 0.15*c {
						t.Errorf("capacity %.0f/min: %.0f admitted in the minute from tick %d (phase tick %d)", c, got, start, start-p*phase)
						break
					}
				}
				mean := 0.0
				for _, e := range errs[from:to] {
					mean += e
				}
				if mean /= float64(to - from); mean > 0.01 {
					t.Errorf("capacity %.0f/min: origin error rate %.2f%% once converged", c, 100*mean)
				}
				t.Logf("capacity %3.0f/min: %.0f admitted per minute from tick 30 of the phase", c, s.perMinute(from, to))
			}
		})
	}
}

func TestControllerStateRoundTrip(t *testing.T) {
	s := newSimRun(ControllerConfig{}, 200)
	for s.tick < 150 {
		s.step()
	}
	state := s.ctl.MarshalState()
	if !json.Valid(state) {
		t.Fatalf("state is not JSON: %s", state)
	}
	next := NewController(ControllerConfig{}, 1.5)
	if err := next.RestoreState(state); err != nil {
		t.Fatal(err)
	}
	if got := next.MarshalState(); !bytes.Equal(got, state) {
		t.Fatalf("restored state differs:\n%s\n%s", got, state)
	}
	// The new leader decides as the old one would have.
	for s.tick < 400 {
		in, out := s.step()
		if got := next.Step(in); got != out {
			t.Fatalf("tick %d: restored controller says %+v, the original %+v", s.tick, got, out)
		}
	}

	t.Run("unreadable", func(t *testing.T) {
		before := next.MarshalState()
		for _, bad := range []string{
			``, `{`, `[]`, `{"v":2,"limit":50}`, `{"v":1,"limit":0}`, `{"v":1,"limit":-5}`,
			`{"v":1,"limit":50,"since_settled":-2}`, `{"v":1,"limit":50,"admits":[[2,5],[1,5]]}`,
			`{"v":1,"limit":50,"admits":[[1,0]]}`, `{"v":1,"limit":50,"base_p95":-1}`,
		} {
			if err := next.RestoreState([]byte(bad)); err == nil {
				t.Errorf("RestoreState(%q) accepted", bad)
			}
		}
		if after := next.MarshalState(); !bytes.Equal(before, after) {
			t.Errorf("a failed restore changed the state:\n%s\n%s", before, after)
		}
	})
}

func BenchmarkControllerStep(b *testing.B) {
	c := NewController(ControllerConfig{}, 1.5)
	in := ControllerInput{Measurements: healthy(100), Pending: 20, NoShowRate: 0.2,
		Remaining: 5000, RemainingKnown: true, Caps: Caps{MaxActive: 5000, MaxNewPerMinute: 6000}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		in.Now = at(i)
		in.Active = int(c.limit) - 10
		c.Step(in)
	}
}

// TestControllerIdleSiteAdmitsAtOnce: max_new_per_minute is a ceiling,
// not a reason to wait. A room nobody waits in spends none of it, so the
// first visitor after a long idle spell is let in at the very next tick,
// and so are the first of a small crowd (the bucket's burst), the rest
// at the even pace.
func TestControllerIdleSiteAdmitsAtOnce(t *testing.T) {
	for _, perMin := range []int{1, 10, 60, 600} {
		c := NewController(ControllerConfig{}, 1.5)
		caps := Caps{MaxNewPerMinute: perMin}
		tick := 0
		step := func(waiting int) ControllerOutput {
			out := c.Step(ControllerInput{Now: at(tick), Measurements: healthy(0), Caps: caps,
				Waiting: waiting, WaitingKnown: true})
			tick++
			return out
		}
		for range 300 {
			if out := step(0); out.Admit != 0 {
				t.Fatalf("cap %d: admitted %d with nobody waiting", perMin, out.Admit)
			}
		}
		if out := step(1); out.Admit != 1 {
			t.Fatalf("cap %d: a lone visitor on an idle site: admit %d at the first tick", perMin, out.Admit)
		}
		burst := max(1, perMin*5/60)
		out := step(1000)
		// The limit has drifted down to min_active (10) while idle.
		if out.Admit < min(burst, DefaultMinActive)-1 || out.Admit > burst {
			t.Fatalf("cap %d: a crowd on an idle site: admit %d at the first tick, want up to the burst %d", perMin, out.Admit, burst)
		}
	}
}

// TestControllerSlots: with PassThrough the room under the limit is
// offered as slots, which are charged to the bucket and count as usage
// once taken; with anyone waiting, the queue gets the room instead.
func TestControllerSlots(t *testing.T) {
	c := NewController(ControllerConfig{InitialActive: 40}, 1.5)
	caps := Caps{MaxNewPerMinute: 600} // burst 50, 10 a second
	out := c.Step(ControllerInput{Now: at(0), Caps: caps, WaitingKnown: true, PassThrough: true})
	if out.Slots != 40 || out.Admit != 0 {
		t.Fatalf("first tick: %+v, want 40 slots (the limit)", out)
	}
	// All taken: they are usage now (not yet measured as active), and
	// the bucket is charged.
	out = c.Step(ControllerInput{Now: at(1), Caps: caps, WaitingKnown: true, PassThrough: true, Taken: 40})
	if out.Slots != 0 {
		t.Fatalf("after the limit's worth passed: %d slots", out.Slots)
	}
	// Measured active; the limit grows while in use; the bucket paces.
	for i := 2; i < 20; i++ {
		out = c.Step(ControllerInput{Now: at(i), Measurements: Measurements{RequestRate: 10, LatencyP95: 50 * time.Millisecond, Active: 40},
			Caps: caps, WaitingKnown: true, PassThrough: true, Taken: out.Slots})
		if out.Slots > 11 {
			t.Fatalf("tick %d: %d slots, above the bucket's pace", i, out.Slots)
		}
	}
	// Somebody queued: no slots, the queue gets the room.
	out = c.Step(ControllerInput{Now: at(20), Measurements: healthy(40), Caps: caps, Waiting: 3, WaitingKnown: true})
	if out.Slots != 0 || out.Admit > 3 {
		t.Fatalf("with 3 queued: %+v", out)
	}
	// Unhealthy: the limit falls below the active visitors, no slots.
	out = c.Step(ControllerInput{Now: at(21), Measurements: Measurements{RequestRate: 10, LatencyP95: 5 * time.Second, Active: 60},
		Caps: caps, WaitingKnown: true, PassThrough: true})
	if out.Slots != 0 || out.Limit >= 60 {
		t.Fatalf("origin slow: %+v", out)
	}
}

// TestControllerBucketSurvivesRestore: a new leader keeps the bucket.
func TestControllerBucketSurvivesRestore(t *testing.T) {
	caps := Caps{MaxNewPerMinute: 60} // burst 5
	c := NewController(ControllerConfig{}, 1.5)
	if out := c.Step(ControllerInput{Now: at(0), Caps: caps, Waiting: 100, WaitingKnown: true}); out.Admit != 5 {
		t.Fatalf("admit %d, want the burst of 5", out.Admit)
	}
	d := NewController(ControllerConfig{}, 1.5)
	if err := d.RestoreState(c.MarshalState()); err != nil {
		t.Fatal(err)
	}
	if out := d.Step(ControllerInput{Now: at(1), Measurements: healthy(5), Caps: caps, Waiting: 100, WaitingKnown: true}); out.Admit > 1 {
		t.Fatalf("restored controller admitted %d a second after its burst", out.Admit)
	}
	if err := d.RestoreState([]byte(`{"v":1,"limit":50,"since_decrease":0,"since_settled":-1,"tokens":-3,"refilled":5}`)); err == nil {
		t.Fatal("negative tokens restored")
	}
}
