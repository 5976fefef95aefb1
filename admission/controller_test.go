// The controller's unit tests: properties of its decisions against the
// closed-loop origin of controller_sim_test.go and on crafted ticks.
// Every bound is explained where it is asserted; nothing is timed (a tick
// is a step of the simulated clock) and every run is deterministic.
//
// The caps (max_new_per_minute, pass-through slots, the inventory) are in
// controller_caps_test.go, the state's round trip in
// controller_state_test.go, known controller faults in
// controller_known_test.go.

package admission

import (
	"math"
	"slices"
	"testing"
	"time"
)

// simCase is an origin of the convergence tests: capRate requests a
// second at base latency, visitors thinking think seconds between journey
// requests.
type simCase struct {
	name                          string
	capRate, base, think, journey float64
}

// simCases span 20 to 2,000 active visitors at capacity. Their visitors
// make at least 4 requests a second at initial_active (20): see
// TestControllerFewAnswers for slower ones.
var simCases = []simCase{
	{"20 active, 16 s visits", 10, 0.2, 1.8, 8},
	{"220 active, 22 s visits", 100, 0.2, 2, 10},
	{"490 active, 41 s visits", 120, 0.1, 4, 10},
	{"2000 active, 80 s visits", 500, 0.05, 3.95, 20},
}

func (c simCase) run(cfg ControllerConfig) *simRun {
	s := newSimRun(cfg, c.capRate)
	s.origin.base, s.origin.think, s.origin.journey = c.base, c.think, c.journey
	return s
}

// checkDecisions asserts what holds at every tick of a run: a known
// reason, a decision that says what the output does, a limit within
// [MinActive, MaxActive], no admission past Waiting, and a target never
// cut deeper than Decrease in one tick.
func checkDecisions(t *testing.T, s *simRun) {
	t.Helper()
	cfg := s.ctl.cfg
	for i, out := range s.outs {
		d, in := out.Decision, s.ins[i]
		if !slices.Contains(Reasons, d.Reason) {
			t.Fatalf("tick %d: reason %q not in Reasons", i, d.Reason)
		}
		if d.Limit != out.Limit || d.Admit != out.Admit || d.Slots != out.Slots || !d.At.Equal(in.Now) {
			t.Fatalf("tick %d: decision %+v does not match output %+v", i, d, out)
		}
		if out.Limit < cfg.MinActive || (in.Caps.MaxActive > 0 && out.Limit > in.Caps.MaxActive) {
			t.Fatalf("tick %d: limit %d outside [%d, %d]", i, out.Limit, cfg.MinActive, in.Caps.MaxActive)
		}
		if out.Admit > in.Waiting {
			t.Fatalf("tick %d: admitted %d of %d waiting", i, out.Admit, in.Waiting)
		}
		if i > 0 && d.Target < s.outs[i-1].Decision.Target*cfg.Decrease-1e-9 {
			t.Fatalf("tick %d: target cut from %.1f to %.1f, deeper than Decrease %.2f", i,
				s.outs[i-1].Decision.Target, d.Target, cfg.Decrease)
		}
	}
}

func TestControllerDefaults(t *testing.T) {
	c := NewController(ControllerConfig{Increase: -3, Decrease: 1.5}, 0)
	want := ControllerConfig{Tick: time.Second, TargetP95: DefaultTargetP95, TargetErrorRate: DefaultTargetErrorRate,
		InitialActive: DefaultInitialActive, MinActive: DefaultMinActive, Increase: 0, Decrease: DefaultDecrease}
	if c.cfg != want {
		t.Errorf("config = %+v, want %+v", c.cfg, want)
	}
	if want.InitialActive != 20 || want.MinActive != 10 || want.Decrease != 0.5 || want.TargetP95 != 800*time.Millisecond ||
		want.TargetErrorRate != 0.01 {
		t.Errorf("defaults changed: %+v (the configuration docs name them)", want)
	}
	if c.perSeat != DefaultVisitorsPerSeat {
		t.Errorf("visitors per seat = %v, want %v", c.perSeat, DefaultVisitorsPerSeat)
	}
	if c := NewController(ControllerConfig{InitialActive: 5, MinActive: 8}, 1); c.cfg.InitialActive != 8 {
		t.Errorf("initial_active 5 under min_active 8: %d, want raised to the floor", c.cfg.InitialActive)
	}

	// The first tick lets initial_active in at once, whatever the meter
	// says, and the decision carries the figures it was made on.
	m := Measurements{RequestRate: 12, LatencyMean: 90 * time.Millisecond, LatencyP95: 200 * time.Millisecond,
		Answered: 12, ErrorRate: 0.002}
	out := c.Step(ControllerInput{Now: ctlEpoch, Measurements: m, Waiting: 1000, WaitingKnown: true})
	d := out.Decision
	if out.Limit != 20 || out.Admit != 20 || out.SoldOut || out.Slots != 0 {
		t.Errorf("first step = %+v, want limit 20, admit 20", out)
	}
	if d.Reason != ReasonStart || !d.At.Equal(ctlEpoch) || d.Limit != 20 || d.Admit != 20 || d.Target != 20 ||
		d.Usage != 0 || d.Latency != m.LatencyMean || d.P95 != m.LatencyP95 || d.RequestRate != 12 || d.ErrorRate != 0.002 ||
		d.Bound != BoundNone {
		t.Errorf("first decision = %+v", d)
	}
}

// TestControllerSlowStart: against an origin far bigger than the limit
// the target at least doubles every 4 ticks while the origin answers at
// its baseline (a gain of 2 per round of the claim delay, 2 ticks here,
// plus the tick the measurements lag), and once the origin has queued the
// target stays near what the origin carries (see the bound below). The
// overshoot of the slow start is measured and logged, not asserted: it is
// 2.5 × the capacity here (TestControllerLongOverload shows what it does
// to an origin whose visitors stay minutes).
func TestControllerSlowStart(t *testing.T) {
	s := simCase{"10,000 active", 5000, 0.1, 2, 20}.run(ControllerConfig{})
	s.noShow = 0
	s.run(120)
	checkDecisions(t, s)
	queuedAt, grownAt := -1, -1
	for i, out := range s.outs {
		if r := out.Decision.Reason; r == ReasonQueueing || r == ReasonLatency || r == ReasonTail || r == ReasonErrors {
			queuedAt = i
			break
		}
		if grownAt < 0 && out.Decision.Target > float64(DefaultInitialActive) {
			grownAt = i
		}
	}
	if grownAt < 0 || grownAt > 6 {
		// The first ticks' answers are too few to trust (fewer than 20):
		// they merge until they are enough.
		t.Fatalf("the target first grew at tick %d, want within 6", grownAt)
	}
	if queuedAt < 0 {
		t.Fatal("the origin never queued")
	}
	calmAt := func(i int) bool { return s.ins[i].LatencyMean.Seconds() <= s.origin.base*(1+ctlProbeBelow) }
	for i := grownAt; i+4 < queuedAt; i++ {
		if !calmAt(i) || !calmAt(i+1) || !calmAt(i+2) || !calmAt(i+3) || !calmAt(i+4) {
			continue // near the capacity a line starts to form: not at the baseline any more
		}
		want := 2 * s.outs[i].Decision.Target
		if j := i + 4; s.outs[j].Decision.Target < want {
			t.Fatalf("tick %d: target %.0f, 4 ticks later %.0f: less than doubled", i, s.outs[i].Decision.Target, s.outs[j].Decision.Target)
		}
	}
	// Once it queued, the target is sized by the model (Little's law at
	// the capacity measured) and probes past it by ctlProbeGain (1.1):
	// it never again exceeds the visitors the origin carries at its
	// capacity and the target latency by more than ctlReturnGain (1.25).
	// More than ctlProbeGain: the think time is measured as active/rate
	// − latency with the active visitors counted now and the rate over
	// the second before, so while visitors arrive (up to ctlThinkSteady,
	// 35 % a tick, is taken as steady) it reads long, and so does the
	// model.
	atCapacity := s.origin.capRate * (s.origin.think + s.origin.base*(1+ctlAllowance))
	peak, top := 0.0, 0.0
	for i := queuedAt + 1; i < len(s.outs); i++ {
		top = max(top, s.outs[i].Decision.Target)
		if cur := s.outs[i].Decision.Target; cur > ctlReturnGain*atCapacity {
			t.Fatalf("tick %d, after the origin queued at %d: target %.0f, above %.2f × the %.0f the origin carries", i, queuedAt,
				cur, ctlReturnGain, atCapacity)
		}
	}
	t.Logf("after the origin queued: the target's top %.0f (%.2f × the %.0f the origin carries)", top, top/atCapacity, atCapacity)
	for _, in := range s.ins {
		peak = max(peak, float64(in.Active))
	}
	t.Logf("slow start: target grew from tick %d, origin queued at tick %d (%d active of %.0f at capacity); peak %.0f active (%.2f×)",
		grownAt, queuedAt, s.ins[queuedAt].Active, s.origin.activeAt(), peak, peak/s.origin.activeAt())
}

// TestControllerConvergence: against origins of 20 to 2,000 active
// visitors at capacity, with 20 % no-shows and claims 2 ticks after the
// reach, the controller fills the origin and keeps it full without
// errors, through a capacity halved and restored.
//
//   - Settled (ticks 150–250, after the slow start and the drain of its
//     overshoot, see TestControllerSlowStart): utilisation ≥ 90 % and a
//     mean error rate ≤ 0.5 %.
//   - The halving (tick 250): within 5 ticks the limit is at most 1.25 ×
//     the active visitors the halved origin carries (the target's cut is
//     bounded by Decrease, 0.5 a tick; the rest is transit room). The
//     visitors already inside cannot be made to leave: the origin is
//     overloaded until they have, so errors are judged over the last 60
//     ticks of the brown-out (≤ 0.5 %), utilisation over all of it
//     (≥ 90 %).
//   - The restore (tick 400): utilisation ≥ 90 % from 30 ticks after it
//     to the end (tick 550), errors ≤ 0.5 %.
//   - Never a flood: at a tick whose measurements show errors above
//     target_error_rate or a p95 above target_p95, no more visitors are
//     let in than left (Completions): the crowd never grows while the
//     origin is in breach. (The pace lets in as many as leave while
//     usage is within twice a tick's departures of the limit: a breach
//     tick may still let a few in; see also TestControllerBreachAfterProbe.)
func TestControllerConvergence(t *testing.T) {
	for _, tc := range simCases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.run(ControllerConfig{})
			// caps[i] is the origin's capacity over the second that
			// tick i measures (s.ins[i]).
			var caps []float64
			for s.tick < 550 {
				caps = append(caps, s.origin.capRate)
				s.step()
				switch s.tick {
				case 250:
					s.origin.capRate = tc.capRate / 2
				case 400:
					s.origin.capRate = tc.capRate
				}
				if s.tick == 255 {
					if l, want := s.outs[len(s.outs)-1].Limit, 1.25*s.origin.activeAt(); float64(l) > want {
						t.Errorf("5 ticks after the halving: limit %d, want ≤ %.0f", l, want)
					}
				}
			}
			window := func(name string, from, to int, util bool) {
				served, offered, errs, over := 0.0, 0.0, 0.0, 0
				// The second before tick i is measured at tick i.
				for i := from + 1; i <= to; i++ {
					m := s.ins[i].Measurements
					served += m.RequestRate * (1 - m.ErrorRate)
					offered += caps[i]
					errs += m.ErrorRate
					if m.LatencyMean.Seconds() > 2*tc.base {
						over++
					}
				}
				u, e := served/offered, errs/float64(to-from)
				// Measured and reported, not asserted: issue 15's target
				// (≤ 5 % of settled seconds above 2 × the base latency)
				// is for the benchmark's real origin; in this model the
				// 2 × line is 2–9 % of visitors above the capacity.
				t.Logf("%-21s [%3d, %3d): utilisation %5.1f%%, errors %.2f%%, %2d s above 2 × base latency; baseline taken %v (true %v)",
					name, from, to, 100*u, 100*e, over, s.outs[to].Decision.BaseLatency, secs(tc.base))
				if util && u < 0.9 {
					t.Errorf("%s: utilisation %.1f%%, want ≥ 90%%", name, 100*u)
				}
				if name != "brown-out" && e > 0.005 {
					t.Errorf("%s: error rate %.2f%%, want ≤ 0.5%%", name, 100*e)
				}
			}
			window("settled", 150, 249, true)
			window("brown-out", 250, 399, true)
			window("end of the brown-out", 340, 399, false)
			window("restored", 430, 549, true)
			checkDecisions(t, s)
			for i, in := range s.ins {
				if (in.ErrorRate > DefaultTargetErrorRate || in.LatencyP95 > DefaultTargetP95) && s.outs[i].Admit > in.Completions {
					t.Errorf("tick %d: admitted %d (%d left) while the origin shows errors %.1f%%, p95 %v", i, s.outs[i].Admit,
						in.Completions, 100*in.ErrorRate, in.LatencyP95)
					break
				}
			}
		})
	}
}

// craft drives a controller with crafted measurements, one tick a second.
type craft struct {
	c    *Controller
	tick int
	in   ControllerInput // the other fields of every tick's input
}

func (k *craft) step(m Measurements) ControllerOutput {
	in := k.in
	in.Now, in.Measurements = at(k.tick), m
	out := k.c.Step(in)
	k.tick++
	return out
}

// calm are measurements of an origin at its 100 ms baseline (p95 200 ms)
// carrying active visitors who think 1.9 s: rate = active / 2 s.
func calm(active int) Measurements {
	r := float64(active) / 2
	return Measurements{RequestRate: r, LatencyMean: 100 * time.Millisecond, LatencyP50: 100 * time.Millisecond,
		LatencyP95: 200 * time.Millisecond, Answered: r, Active: active}
}

// queued teaches a controller the origin: two calm ticks (a baseline of
// 100 ms, p95 200 ms, visitors thinking 1.9 s) and a queueing tick that
// sizes the target by Little's law (see "Little's law" below).
func queued(cfg ControllerConfig) (*craft, ControllerOutput) {
	k := &craft{c: NewController(cfg, 1.5)}
	k.step(calm(200))
	k.step(calm(200))
	out := k.step(Measurements{RequestRate: 120, LatencyMean: 150 * time.Millisecond, LatencyP95: 300 * time.Millisecond,
		Answered: 120, Active: 246})
	return k, out
}

func TestControllerCuts(t *testing.T) {
	t.Run("Little's law", func(t *testing.T) {
		// Two calm ticks teach the baseline (100 ms) and the think time
		// (200/100 − 0.1 = 1.9 s); the slow start doubles the target
		// (400). Then the origin queues: a mean of 150 ms (over 1.2 × the
		// baseline) at 120 requests a second for 246 visitors, whose
		// think time is again 246/120 − 0.15 = 1.9 s. The origin's
		// capacity is 120 a second, and at the target latency (the
		// baseline × (1 + ctlAllowance)) by Little's law it carries
		// 120 × (1.9 + 0.1 × 1.15) = 241.8 visitors: below 0.8 of 400
		// (and above Decrease of it), so the target drops to the model
		// at once.
		k, out := queued(ControllerConfig{})
		d := out.Decision
		want := 120 * (1.9 + 0.1*(1+ctlAllowance))
		if d.Reason != ReasonQueueing || math.Abs(d.Target-want) > 1e-6 || math.Abs(d.Think.Seconds()-1.9) > 1e-6 ||
			d.Capacity != 120 || d.BaseLatency != 100*time.Millisecond {
			t.Errorf("queueing tick: %+v, want reason queueing, target %.1f, think 1.9 s, capacity 120, base 100 ms", d, want)
		}
		if !k.c.queued {
			t.Error("the slow start is not over after the origin queued")
		}
	})

	for _, tc := range []struct {
		name   string
		m      Measurements
		reason Reason
		// cut is what the target is cut to (before Decrease bounds
		// it): the active visitors scaled by target_p95/p95, or the
		// share of good requests, and never above the model at the good
		// rate (100 a second × (1.9 + 0.11) s).
		cut float64
	}{
		{"p95 above target_p95", Measurements{RequestRate: 100, LatencyMean: 110 * time.Millisecond,
			LatencyP95: 1000 * time.Millisecond, Answered: 100, Active: 200}, ReasonLatency, min(201, 200*0.8)},
		{"errors above target_error_rate", Measurements{RequestRate: 100, LatencyMean: 100 * time.Millisecond,
			LatencyP95: 200 * time.Millisecond, Answered: 95, ErrorRate: 0.05, Active: 200}, ReasonErrors, min(95*2.01, 200*0.95)},
		{"errors and latency: errors first", Measurements{RequestRate: 100, LatencyMean: 2 * time.Second,
			LatencyP95: 5 * time.Second, Answered: 50, ErrorRate: 0.5, Active: 200}, ReasonErrors,
			// At 2 s a request the think time measured is 0: smoothed,
			// 1.9 + 0.3 × (0 − 1.9) = 1.33 s.
			min(50*(1.33+0.11), 200*0.5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, dec := range []float64{0.5, 0.8, 0.95} {
				k, _ := queued(ControllerConfig{Decrease: dec})
				prev := k.c.target
				d := k.step(tc.m).Decision
				if d.Reason != tc.reason {
					t.Errorf("decrease %.2f: reason %q, want %q", dec, d.Reason, tc.reason)
				}
				// One tick's cut goes no deeper than Decrease.
				if want := max(prev*dec, tc.cut); math.Abs(d.Target-want) > 1e-6 {
					t.Errorf("decrease %.2f: target %.1f → %.1f, want %.1f", dec, prev, d.Target, want)
				}
			}
		})
	}

	t.Run("never below MinActive", func(t *testing.T) {
		// Nobody waiting: crafted ticks have no visitors on their way, so
		// admissions would never show as usage (and the transit room
		// would grow to cover for them, see Controller.transit).
		k := &craft{c: NewController(ControllerConfig{InitialActive: 40, MinActive: 15}, 1.5), in: ControllerInput{WaitingKnown: true}}
		k.step(calm(40))
		k.step(calm(40))
		for i := range 30 {
			out := k.step(Measurements{RequestRate: 50, LatencyMean: 3 * time.Second, LatencyP95: 5 * time.Second,
				Answered: 25, ErrorRate: 0.5, Active: 5})
			if out.Limit < 15 || out.Decision.Reason != ReasonErrors {
				t.Fatalf("tick %d: %+v, want a cut for errors to no less than min_active 15", i, out.Decision)
			}
		}
		// The target is at the floor. (The limit keeps the transit room
		// learnt at the calm ticks: it changes only while the limit
		// binds.)
		if tg := k.c.target; tg != 15 {
			t.Errorf("after 30 failing ticks: target %v, want the floor", tg)
		}
	})

	t.Run("MaxActive", func(t *testing.T) {
		// An origin that takes 10,000: the cap binds. The limit never
		// exceeds it, nor does what the controller lets in: usage as it
		// counts it (active and arriving) plus its admissions. The true
		// count of visitors in or on their way differs from that count by
		// the no-show rate's estimate and the counter's rounding (a
		// number a tick): within 3 % of the cap.
		s := simCase{"big", 5000, 0.1, 2, 20}.run(ControllerConfig{})
		s.caps.MaxActive = 300
		for s.tick < 300 {
			in, out := s.step()
			if d := out.Decision; out.Admit > 0 && d.Usage+float64(out.Admit) > 300 {
				t.Fatalf("tick %d: %d let in with a usage of %.1f, above max_active 300", s.tick, out.Admit, d.Usage)
			}
			if used := float64(in.Active) + s.coming(); used > 309 {
				t.Fatalf("tick %d: %.0f active or coming, above max_active 300", s.tick, used)
			}
		}
		checkDecisions(t, s)
		if got := s.outs[len(s.outs)-1]; got.Limit != 300 {
			t.Errorf("limit %d, want it at max_active", got.Limit)
		}
		if u := s.ins[len(s.ins)-1].Active; u < 270 {
			t.Errorf("%d active under max_active 300 with a crowd waiting, want ≥ 90 %% of it", u)
		}
	})
}

// TestControllerTailGuard: a p95 above ctlTailGuard (1.8) × the baseline p95 eases the
// target by 3 % a tick (reason tail) although the mean is at the target;
// just under it, it does not.
func TestControllerTailGuard(t *testing.T) {
	for _, tc := range []struct {
		p95  time.Duration
		tail bool
	}{{370 * time.Millisecond, true}, {350 * time.Millisecond, false}} {
		k := &craft{c: NewController(ControllerConfig{}, 1.5)}
		k.step(calm(200))
		k.step(calm(200)) // the baseline p95: 200 ms
		prev := k.c.target
		// A mean 10 % above the baseline: the target line, not a queue.
		out := k.step(Measurements{RequestRate: 100, LatencyMean: 110 * time.Millisecond, LatencyP95: tc.p95,
			Answered: 100, Active: 200})
		d := out.Decision
		if got := d.Reason == ReasonTail; got != tc.tail {
			t.Errorf("p95 %v (%.1f × base: %.0f ms): reason %q", tc.p95, ctlTailGuard, 200*ctlTailGuard, d.Reason)
		}
		if tc.tail && d.Target > prev*ctlTailEase+1e-9 {
			t.Errorf("p95 %v: target %.1f → %.1f, want eased to %.1f at most", tc.p95, prev, d.Target, prev*ctlTailEase)
		}
	}
}

// TestControllerTailFloor: an origin answering in half a millisecond
// whose p95 doubles by a fraction of a millisecond (a scheduler's
// jitter) has no tail: the target is not eased, however many ticks.
func TestControllerTailFloor(t *testing.T) {
	fast := func(active int, p95 time.Duration) Measurements {
		r := float64(active) / 2
		return Measurements{RequestRate: r, LatencyMean: 300 * time.Microsecond, LatencyP50: 300 * time.Microsecond,
			LatencyP95: p95, Answered: r, Active: active}
	}
	k := &craft{c: NewController(ControllerConfig{}, 1.5)}
	k.step(fast(200, 600*time.Microsecond))
	k.step(fast(200, 600*time.Microsecond)) // the baseline p95: 0.6 ms
	for i := range 20 {
		// 2.5 × the baseline p95, 0.9 ms above it.
		if d := k.step(fast(200, 1500*time.Microsecond)).Decision; d.Reason == ReasonTail {
			t.Fatalf("tick %d: a p95 of 1.5 ms over a 0.6 ms baseline eased the target (%+v)", i, d)
		}
	}
	// Past the floor it is a tail again.
	if d := k.step(fast(200, 3*time.Millisecond)).Decision; d.Reason != ReasonTail {
		t.Errorf("a p95 of 3 ms over a 0.6 ms baseline: reason %q, want tail", d.Reason)
	}
}

// TestControllerNoData: answers too few to trust merge over ticks; with
// none the limit holds.
func TestControllerNoData(t *testing.T) {
	t.Run("merged", func(t *testing.T) {
		// 5 answers a tick: the 4th tick (from the first) makes 20.
		k := &craft{c: NewController(ControllerConfig{}, 1.5)}
		few := Measurements{RequestRate: 5, LatencyMean: 100 * time.Millisecond, LatencyP95: 150 * time.Millisecond,
			Answered: 5, Active: 10}
		var reasons []Reason
		for range 5 {
			reasons = append(reasons, k.step(few).Decision.Reason)
		}
		want := []Reason{ReasonStart, ReasonNoData, ReasonNoData, ReasonProbe, ReasonProbe}
		if !slices.Equal(reasons, want) {
			t.Errorf("reasons %v, want %v", reasons, want)
		}
	})
	t.Run("errors are judged on few answers", func(t *testing.T) {
		// The baseline is known (two calm ticks), then 5 ticks without
		// traffic fill the merge window, and a tick of 5 answers with
		// half the requests failing: too few for the latency, enough to
		// cut for errors.
		k := &craft{c: NewController(ControllerConfig{}, 1.5)}
		k.step(calm(20))
		k.step(calm(20))
		for range ctlMergeTicks {
			k.step(Measurements{Active: 20})
		}
		prev := k.c.target
		out := k.step(Measurements{RequestRate: 10, LatencyMean: time.Second, LatencyP95: 2 * time.Second, Answered: 5,
			ErrorRate: 0.5, Active: 20})
		if out.Decision.Reason != ReasonErrors || out.Decision.Target >= prev {
			t.Errorf("half the requests failing on 5 answers: %+v, want a cut for errors", out.Decision)
		}
	})
	t.Run("none", func(t *testing.T) {
		k := &craft{c: NewController(ControllerConfig{}, 1.5)}
		for i := range 20 {
			// Everyone allowed is active, but nothing was measured.
			out := k.step(Measurements{Active: 20})
			want := ReasonNoData
			if i == 0 {
				want = ReasonStart
			}
			if out.Limit != 20 || out.Admit != 0 || out.Decision.Reason != want {
				t.Fatalf("tick %d: %+v, want limit 20, admit 0, reason %s", i, out, want)
			}
		}
	})
}

// TestControllerIdle: with nobody waiting the limit drifts down towards
// what is in use (time constant ctlIdleDrift), so that a crowd arriving
// after a lull is let in by what the origin was last seen to carry, not
// by a stale limit.
func TestControllerIdle(t *testing.T) {
	t.Run("nobody waiting", func(t *testing.T) {
		s := simCases[1].run(ControllerConfig{})
		s.queue = 0
		for s.tick < 600 {
			_, out := s.step()
			if out.Limit > DefaultInitialActive {
				t.Fatalf("tick %d: limit %d grew above initial_active with nobody to admit", s.tick, out.Limit)
			}
		}
		checkDecisions(t, s)
		if d := s.outs[len(s.outs)-1].Decision; d.Limit != DefaultMinActive || d.Reason != ReasonIdle {
			t.Errorf("after ten idle minutes: %+v, want the limit at min_active, reason idle", d)
		}
		s.queue = math.Inf(1)
		// The room is the limit plus ctlSlack of it.
		if _, out := s.step(); float64(out.Admit) > DefaultMinActive*(1+ctlSlack) {
			t.Errorf("a crowd after the lull: %d let in at once", out.Admit)
		}
	})

	t.Run("a trickle", func(t *testing.T) {
		// Visitors arrive at 20 a minute, far under what the origin
		// takes: the limit follows what is in use and stays within
		// what it drifts to (usage/0.9) plus the room the probing keeps.
		s := simCases[1].run(ControllerConfig{})
		s.queue = 0
		for s.tick < 1200 {
			s.queue += 1.0 / 3
			in, out := s.step()
			used := float64(in.Active) + s.coming()
			if s.tick > 300 && float64(out.Limit) > max(float64(DefaultInitialActive), 2*(used/ctlBinding)+10) {
				t.Fatalf("tick %d: limit %d for %.0f in use", s.tick, out.Limit, used)
			}
		}
		checkDecisions(t, s)
	})
}

// TestControllerPendingNoShows: pending numbers of visitors who never came
// do not hold room for their whole grace (2 minutes here): the admission
// rate, in visitors who come, with half the numbers no-shows is within
// 10 % of the rate without any.
func TestControllerPendingNoShows(t *testing.T) {
	run := func(noShow float64) float64 {
		s := simCases[1].run(ControllerConfig{})
		s.noShow, s.grace = noShow, 120
		s.run(900)
		checkDecisions(t, s)
		return s.perMinute(300, 900)
	}
	base, withNoShows := run(0), run(0.5)
	t.Logf("%.0f admitted a minute without no-shows, %.0f with half of them no-shows", base, withNoShows)
	if math.Abs(withNoShows-base) > 0.1*base {
		t.Errorf("%.0f admitted per minute with half the visitors no-shows, %.0f with none: want about the same", withNoShows, base)
	}
}

// TestControllerPacing: once departures are known, a room that opens at
// once (a third of the visitors leave together) is let in over ticks, at
// the pace visitors leave plus the room over ctlPaceHorizon ticks; and
// not left empty: within 6 ticks most of it is let in. The wave leaves
// while the controller probes (two calm ticks in a row), where a calm
// origin does not refute the target; see TestControllerCalmAfterQueue for
// a wave that leaves just after the origin queued.
func TestControllerPacing(t *testing.T) {
	s := simCases[2].run(ControllerConfig{})
	s.noShow = 0
	s.run(150)
	for s.tick < 400 && !(s.outs[len(s.outs)-1].Decision.Reason == ReasonProbe && s.outs[len(s.outs)-2].Decision.Reason == ReasonProbe) {
		s.step()
	}
	s.origin.active -= math.Round(s.origin.active / 3)
	in, out := s.step()
	room := float64(out.Limit) - out.Decision.Usage
	if room < 100 {
		t.Fatalf("tick %d: the wave left a room of %.0f only (%+v)", s.tick, room, out.Decision)
	}
	if float64(out.Admit) > 0.75*room {
		t.Errorf("a room of %.0f: %d let in at one tick, want it paced", room, out.Admit)
	}
	let := out.Admit
	for range 5 {
		_, o := s.step()
		let += o.Admit
	}
	if float64(let) < 0.8*room {
		t.Errorf("a room of %.0f: %d let in over 6 ticks, want most of it", room, let)
	}
	t.Logf("a room of %.0f (%d active): %d let in at once, %d over 6 ticks", room, in.Active, out.Admit, let)
	checkDecisions(t, s)
}

// TestControllerBadInputs: a meter or an engine gone wrong (NaN,
// infinities, negative counts) never makes the controller panic, admit a
// negative number or leave its limit's bounds; after it, good figures are
// followed again.
func TestControllerBadInputs(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	bad := []ControllerInput{
		{Measurements: Measurements{RequestRate: nan, LatencyMean: -time.Second, LatencyP95: -1, Answered: nan, ErrorRate: nan, Active: -5}},
		{Measurements: Measurements{RequestRate: inf, LatencyMean: time.Second, LatencyP95: time.Second, Answered: inf, ErrorRate: -1, Active: 100}},
		{Measurements: Measurements{RequestRate: 100, LatencyMean: 100 * time.Millisecond, LatencyP95: 200 * time.Millisecond,
			Answered: 100, ErrorRate: inf, Active: 200}, Pending: -3, Arriving: -1, ArrivingOffered: -7, ArrivingKnown: true, NoShowRate: nan},
		{Measurements: calm(200), NoShowRate: inf, Taken: -4, Waiting: -2, WaitingKnown: true, AdmittedLastMinute: -9,
			Caps: Caps{MaxActive: -1, MaxNewPerMinute: -1}},
		{Measurements: calm(200), Pending: math.MaxInt32, Remaining: math.MaxInt32, RemainingKnown: true},
	}
	k := &craft{c: NewController(ControllerConfig{}, 1.5)}
	for i := range 60 {
		in := bad[i%len(bad)]
		if i%7 == 6 {
			in = ControllerInput{Measurements: calm(200)}
		}
		in.Now = at(k.tick)
		k.tick++
		out := k.c.Step(in)
		if out.Admit < 0 || out.Slots < 0 || out.Limit < DefaultMinActive || math.IsNaN(k.c.limit) || math.IsInf(k.c.limit, 0) ||
			math.IsNaN(k.c.target) || math.IsNaN(out.Decision.Usage) {
			t.Fatalf("tick %d, input %+v: %+v (limit %v, target %v)", i, in, out, k.c.limit, k.c.target)
		}
	}
	for range 10 {
		k.step(calm(200))
	}
	if d := k.step(calm(200)).Decision; d.Reason != ReasonProbe && d.Reason != ReasonSteady {
		t.Errorf("good figures after bad ones: %+v", d)
	}
}

// TestControllerDeterministic: the same inputs give the same decisions
// (no clock, map order or randomness inside), which is what makes every
// other test here reproducible.
func TestControllerDeterministic(t *testing.T) {
	a, b := simCases[1].run(ControllerConfig{}), simCases[1].run(ControllerConfig{})
	a.run(400)
	b.run(400)
	if !slices.Equal(a.outs, b.outs) {
		t.Fatal("two runs on the same inputs decided differently")
	}
}

func BenchmarkControllerStep(b *testing.B) {
	c := NewController(ControllerConfig{}, 1.5)
	in := ControllerInput{Measurements: calm(100), Pending: 20, Arriving: 10, ArrivingOffered: 12, ArrivingKnown: true,
		NoShowRate: 0.2, Remaining: 5000, RemainingKnown: true, Caps: Caps{MaxActive: 5000, MaxNewPerMinute: 6000},
		Waiting: 1000, WaitingKnown: true}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		in.Now = at(i)
		in.Active = int(c.limit) - 10
		c.Step(in)
	}
}
