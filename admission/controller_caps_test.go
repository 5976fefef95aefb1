// The controller's caps: the max_new_per_minute bucket, pass-through
// slots and the inventory's bounds. Fixtures in controller_sim_test.go
// and controller_test.go.

package admission

import (
	"math"
	"testing"
	"time"
)

func TestControllerMaxNewPerMinute(t *testing.T) {
	for _, perMin := range []int{30, 120, 1000} {
		s := simCases[3].run(ControllerConfig{})
		s.caps.MaxNewPerMinute = perMin
		s.run(600)
		checkDecisions(t, s)
		// The bucket's burst (one tick's share, at least one) at most
		// in a tick; never more than the cap in a minute; and after the
		// first minute the even pace: 5 s never admit more than 5 s of
		// the cap and the burst.
		burst := max(1, int(math.Ceil(float64(perMin)/60)))
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
		// The origin (2,000 at capacity) takes far more: the cap is used.
		if got := s.perMinute(120, 600); got < 0.95*float64(perMin) {
			t.Errorf("cap %d: %.0f admitted per minute, want the cap used", perMin, got)
		}
	}

	t.Run("the engine's count", func(t *testing.T) {
		// The engine counted admissions the controller does not know of
		// (another leader's): the larger count is honoured.
		k := &craft{c: NewController(ControllerConfig{}, 1.5)}
		caps := Caps{MaxNewPerMinute: 600} // 10 a tick
		out := k.c.Step(ControllerInput{Now: at(0), Caps: caps, AdmittedLastMinute: 597})
		if out.Admit != 3 || out.Decision.Bound != BoundPerMinute {
			t.Errorf("admit %d (bound %q), want 3 (max_new_per_minute)", out.Admit, out.Decision.Bound)
		}
		out = k.c.Step(ControllerInput{Now: at(1), Measurements: calm(3), Caps: caps, AdmittedLastMinute: 600})
		if out.Admit != 0 {
			t.Errorf("admit %d with the minute used up, want 0", out.Admit)
		}
	})
}

// TestControllerIdleSiteAdmitsAtOnce: max_new_per_minute is a ceiling,
// not a reason to wait. A room nobody waits in spends none of it, so the
// first visitor after a long idle spell is let in at the very next tick,
// and so are the first of a crowd (the bucket's one tick's share, and no
// more than the limit, drifted down to min_active, leaves).
func TestControllerIdleSiteAdmitsAtOnce(t *testing.T) {
	for _, perMin := range []int{1, 10, 60, 600} {
		c := NewController(ControllerConfig{}, 1.5)
		caps := Caps{MaxNewPerMinute: perMin}
		tick, arriving := 0, 0
		step := func(waiting int) ControllerOutput {
			out := c.Step(ControllerInput{Now: at(tick), Caps: caps, Waiting: waiting, WaitingKnown: true,
				Pending: arriving, Arriving: arriving, ArrivingOffered: arriving, ArrivingKnown: true})
			tick++
			arriving += out.Admit // on their way at the next tick
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
		burst := max(1, perMin/60)
		if out := step(1000); out.Admit < min(burst, DefaultMinActive)-1 || out.Admit > burst {
			t.Fatalf("cap %d: a crowd on an idle site: admit %d at the first tick, want min(burst %d, min_active %d)",
				perMin, out.Admit, burst, DefaultMinActive)
		}
	}
}

// TestControllerBucketSurvivesRestore: a new leader keeps the bucket.
func TestControllerBucketSurvivesRestore(t *testing.T) {
	caps := Caps{MaxNewPerMinute: 300} // 5 a tick
	c := NewController(ControllerConfig{}, 1.5)
	if out := c.Step(ControllerInput{Now: at(0), Caps: caps, Waiting: 100, WaitingKnown: true}); out.Admit != 5 {
		t.Fatalf("admit %d, want the bucket's 5", out.Admit)
	}
	d := NewController(ControllerConfig{}, 1.5)
	if err := d.RestoreState(c.MarshalState()); err != nil {
		t.Fatal(err)
	}
	// A fifth of a second later the bucket has refilled one: a bucket
	// restored full would let in 5.
	if out := d.Step(ControllerInput{Now: at(0).Add(200 * time.Millisecond), Caps: caps, Waiting: 100, WaitingKnown: true}); out.Admit > 1 {
		t.Fatalf("restored controller admitted %d a fifth of a second after its bucket was used", out.Admit)
	}
}

// TestControllerSlots: with PassThrough the room under the limit is
// offered as slots, charged to the bucket once taken and counted as usage;
// with anyone waiting, the queue gets the room instead.
func TestControllerSlots(t *testing.T) {
	c := NewController(ControllerConfig{InitialActive: 40}, 1.5)
	caps := Caps{MaxNewPerMinute: 3000} // 50 a tick
	out := c.Step(ControllerInput{Now: at(0), Caps: caps, WaitingKnown: true, PassThrough: true})
	if out.Slots != 40 || out.Admit != 0 {
		t.Fatalf("first tick: %+v, want 40 slots (the limit)", out)
	}
	// All taken: they are usage now (not yet measured as active), and
	// the bucket is charged; the limit (40 plus ctlSlack) leaves 8.
	out = c.Step(ControllerInput{Now: at(1), Caps: caps, WaitingKnown: true, PassThrough: true, Taken: 40})
	if out.Slots > int(40*ctlSlack) {
		t.Fatalf("after the limit's worth passed: %d slots", out.Slots)
	}
	// Measured active; the limit grows while in use; the bucket paces:
	// at most its one tick's share (50) in any tick.
	taken := 0
	for i := 2; i < 60; i++ {
		active := 40 + taken
		out = c.Step(ControllerInput{Now: at(i), Measurements: calm(active), Caps: caps, WaitingKnown: true,
			PassThrough: true, Taken: out.Slots})
		if out.Slots > 50 {
			t.Fatalf("tick %d: %d slots, above the bucket's burst", i, out.Slots)
		}
		taken += out.Slots
	}
	if taken > 58*50 {
		t.Errorf("%d slots in 58 s, above the bucket's 50 a second", taken)
	}
	// Somebody queued: no slots, the queue gets the room.
	out = c.Step(ControllerInput{Now: at(60), Measurements: calm(40), Caps: caps, Waiting: 3, WaitingKnown: true})
	if out.Slots != 0 || out.Admit > 3 {
		t.Fatalf("with 3 queued: %+v", out)
	}
	// A breach: within two ticks (the first one's cut is bounded by
	// Decrease of a target the slow start doubled, see
	// TestControllerBreachAfterProbe) the limit falls below the active
	// visitors, and no slots are offered.
	active := 40 + taken
	for i := 61; i < 63; i++ {
		out = c.Step(ControllerInput{Now: at(i), Measurements: Measurements{RequestRate: float64(active) / 2, LatencyMean: 2 * time.Second,
			LatencyP95: 5 * time.Second, Answered: float64(active) / 2, Active: active}, Caps: caps, WaitingKnown: true, PassThrough: true})
	}
	if out.Slots != 0 || out.Limit >= active {
		t.Fatalf("origin slow with %d active: %+v", active, out)
	}
}

func TestControllerInventory(t *testing.T) {
	// With initial_active 100 the first tick's room is the limit less
	// usage, bounded by the seats left × 1.5 less usage.
	for _, tc := range []struct {
		name      string
		active    int
		arriving  int
		remaining int
		admit     int
		soldOut   bool
	}{
		{"room under the limit", 0, 0, 1000, 100, false},
		{"bounded by seats × 1.5", 20, 0, 40, 40, false},
		{"arriving counts", 20, 10, 40, 30, false},
		{"full", 60, 0, 40, 0, false},
		{"over", 70, 0, 40, 0, false},
		{"sold out", 0, 0, 0, 0, true},
		{"negative remaining", 10, 0, -3, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewController(ControllerConfig{InitialActive: 100}, 1.5)
			out := c.Step(ControllerInput{Now: ctlEpoch, Measurements: Measurements{Active: tc.active},
				Pending: tc.arriving, Arriving: tc.arriving, ArrivingOffered: tc.arriving, ArrivingKnown: true,
				Remaining: tc.remaining, RemainingKnown: true})
			if out.Admit != tc.admit || out.SoldOut != tc.soldOut {
				t.Errorf("%+v, want admit %d, sold out %v", out, tc.admit, tc.soldOut)
			}
			if tc.soldOut && out.Decision.Reason != ReasonSoldOut {
				t.Errorf("reason %q, want sold_out", out.Decision.Reason)
			}
		})
	}

	t.Run("unknown remaining", func(t *testing.T) {
		c := NewController(ControllerConfig{}, 1.5)
		out := c.Step(ControllerInput{Now: ctlEpoch, Remaining: 0})
		if out.SoldOut || out.Admit != DefaultInitialActive {
			t.Errorf("%+v: an unknown inventory bounds nothing", out)
		}
	})

	t.Run("selling out", func(t *testing.T) {
		s := simCases[1].run(ControllerConfig{})
		s.remaining = 600
		soldOutAt := -1
		for s.tick < 1200 && soldOutAt < 0 {
			in, out := s.step()
			// Visitors already in may outnumber what is left as seats
			// sell; those let in now may not.
			if bound := float64(in.Remaining) * 1.5; out.Admit > 0 && float64(in.Active)+s.coming() > bound+1 {
				t.Fatalf("tick %d: %d active and %.1f coming (%d let in now) for %d seats", s.tick, in.Active, s.coming(), out.Admit, in.Remaining)
			}
			if out.SoldOut {
				soldOutAt = s.tick
				if out.Admit != 0 || in.Remaining != 0 {
					t.Errorf("sold out with %d remaining, admitting %d", in.Remaining, out.Admit)
				}
			}
		}
		checkDecisions(t, s)
		if soldOutAt < 0 {
			t.Fatal("never sold out")
		}
	})
}

// TestControllerUnarrivedAgainstMaxActive: every visitor who may still
// come counts in full against max_active, even where the limit counts
// only those expected soon (a no-show rate, or admissions older than
// ctlClaimSoon); the limit itself is unchanged.
func TestControllerUnarrivedAgainstMaxActive(t *testing.T) {
	for _, tc := range []struct {
		unarrived, want int
	}{
		{0, 10}, {4, 6}, {10, 0}, {25, 0},
	} {
		k := &craft{c: NewController(ControllerConfig{InitialActive: 100}, 1.5)}
		k.in = ControllerInput{Caps: Caps{MaxActive: 30}, Unarrived: tc.unarrived, NoShowRate: 0.5,
			ArrivingKnown: true, Arriving: tc.unarrived, ArrivingOffered: tc.unarrived}
		out := k.step(calm(20))
		if out.Admit != tc.want {
			t.Errorf("20 active, %d unarrived, cap 30: admit %d (bound %q), want %d", tc.unarrived, out.Admit, out.Decision.Bound, tc.want)
		}
		if tc.want < 10 && out.Decision.Bound != BoundMaxActive {
			t.Errorf("%d unarrived: bound %q, want max_active", tc.unarrived, out.Decision.Bound)
		}
	}
}
