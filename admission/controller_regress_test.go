// Regression tests of faults the model-based controller had when its
// tests were first written (issue 15), each fixed since: every test
// fails, with the figures it saw, should the fault come back. The
// fixtures are those of controller_sim_test.go and controller_test.go.

package admission

import (
	"testing"
	"time"
)

// TestControllerIncrease: a configured increase bounds the probe's growth
// to that many visitors a tick above the target or the active visitors,
// whichever is more (the slow start's doubling included).
func TestControllerIncrease(t *testing.T) {
	k := &craft{c: NewController(ControllerConfig{Increase: 5}, 1.5)}
	prev := k.c.target
	for i := range 10 {
		d := k.step(calm(20 + 5*i)).Decision
		if i == 0 {
			prev = d.Target
			continue
		}
		if d.Reason != ReasonProbe {
			t.Fatalf("tick %d, %d active: reason %s, want probe", i, 20+5*i, d.Reason)
		}
		if bound := max(prev, float64(20+5*i)) + 5; d.Target > bound+1e-9 {
			t.Fatalf("increase 5, tick %d, %d active: "+
				"target %.1f → %.1f, want ≤ %.1f: aim caps the probe at max(active, c.target)+Increase after c.target "+
				"was raised, so the cap never binds", i, 20+5*i, prev, d.Target, bound)
		}
		prev = d.Target
	}
}

// TestControllerFewAnswers: visitors who think long between requests
// make few of them: at initial_active (20) with 10 s of think time the
// origin answers 2 requests a second. The controller merges up to 5
// ticks of measurements to get 20 answers; it must still find the
// origin's capacity (505 visitors): ≥ 90 % utilisation over ticks
// 200–300.
func TestControllerFewAnswers(t *testing.T) {
	c := simCase{"505 active, 100 s visits", 50, 0.1, 10, 10}
	s := c.run(ControllerConfig{})
	s.run(300)
	checkDecisions(t, s)
	noData, served := 0, 0.0
	for i, out := range s.outs {
		if out.Decision.Reason == ReasonNoData {
			noData++
		}
		if i >= 200 {
			served += s.ins[i].RequestRate * (1 - s.ins[i].ErrorRate)
		}
	}
	u := served / (100 * c.capRate)
	if u >= 0.9 {
		return
	}
	if noData > 150 {
		t.Errorf("the origin serves %.0f%% of its capacity "+
			"over ticks 200–300; the limit stays at %d with reason no_data at %d of 300 ticks, because 20 visitors "+
			"thinking 10 s make 2 requests a second and 5 merged ticks (ctlMergeTicks) never reach the 20 answers "+
			"(ctlMinAnswered) the controller needs; it never probes", 100*u, s.outs[len(s.outs)-1].Limit, noData)
	}
	t.Errorf("utilisation %.1f%% over ticks 200–300, want ≥ 90%%", 100*u)
}

// TestControllerLongOverload: the baseline latency is the least mean of
// a tick over the last ctlBaseWindow (2 minutes). An overload that lasts
// longer (here the slow start's overshoot into an origin whose visitors
// stay 3 minutes: 600 at capacity, 86 requests each) must not become the
// baseline: the controller probes only while the origin answers near its
// true baseline (100 ms), never at 2 × it.
func TestControllerLongOverload(t *testing.T) {
	c := simCase{"600 active, 180 s visits", 200 * (180 / 2.1) / 60, 0.1, 2, 180 / 2.1}
	s := c.run(ControllerConfig{})
	s.run(300)
	checkDecisions(t, s)
	for i, out := range s.outs {
		d := out.Decision
		if d.Reason == ReasonProbe && s.ins[i].LatencyMean.Seconds() > 2*c.base {
			over := 0
			for _, in := range s.ins[:i] {
				if in.LatencyMean.Seconds() > 2*c.base {
					over++
				}
			}
			t.Fatalf("tick %d probes (target %.0f → limit %d) at a "+
				"mean latency of %v, %.1f × the origin's baseline of %v, taking %v for the baseline: the origin was above 2 × "+
				"its baseline at %d of the %d ticks before, and ctlBaseWindow forgot the calm ones", i, d.Target, d.Limit,
				s.ins[i].LatencyMean, s.ins[i].LatencyMean.Seconds()/c.base, secs(c.base), d.BaseLatency, over, i)
		}
	}
}

// TestControllerCalmAfterQueue: an origin answering at its baseline does
// not refute the target (Controller.aim says so for the probe). A wave
// of visitors leaving just after a queueing tick leaves the origin calm
// for one tick, and the target must not fall to what the remaining
// visitors ask.
func TestControllerCalmAfterQueue(t *testing.T) {
	k, out := queued(ControllerConfig{})
	prev := out.Decision.Target // 241.2
	// 86 of the 246 visitors left: 160 visitors at the baseline.
	d := k.step(calm(160)).Decision
	if d.Target < prev-1e-6 {
		t.Errorf("one calm tick after a queueing one "+
			"sets the target to the model at the rate the remaining visitors ask (reason %s): %.1f → %.1f, limit %d; "+
			"the origin still takes 120 requests a second (%.0f visitors)", d.Reason, prev, d.Target, d.Limit, 120*(1.9+0.11))
	}
}

// TestControllerFailingFromTheStart: an origin that fails from its first
// requests never shows its baseline latency (it is learnt from ticks
// within target_error_rate); its errors must still cut.
func TestControllerFailingFromTheStart(t *testing.T) {
	k := &craft{c: NewController(ControllerConfig{InitialActive: 40, MinActive: 15}, 1.5)}
	var d Decision
	for range 15 {
		d = k.step(Measurements{RequestRate: 50, LatencyMean: 3 * time.Second, LatencyP95: 5 * time.Second,
			Answered: 25, ErrorRate: 0.5, Active: 5}).Decision
	}
	if d.Reason != ReasonErrors || d.Limit > 40 {
		t.Errorf("15 ticks of 50 %% errors from the start: "+
			"reason %s, limit 40 → %d (target %.0f): aim returns no_data without a baseline, and the transit room grows "+
			"with the active visitors' shortfall from the target", d.Reason, d.Limit, d.Target)
	}
}

// TestControllerBreachAfterProbe: the first tick of a breach after the
// slow start doubled the target. The cut is at most Decrease of a target
// that was never tried (twice the active visitors), so the limit still
// leaves room under it (the doubling's visitors are not seen yet); but at
// a tick in breach nobody is let in beyond min_active.
func TestControllerBreachAfterProbe(t *testing.T) {
	k := &craft{c: NewController(ControllerConfig{}, 1.5)}
	k.step(calm(200))
	doubled := k.step(calm(200)) // the target doubles: 400
	out := k.step(Measurements{RequestRate: 100, LatencyMean: 100 * time.Millisecond, LatencyP95: 200 * time.Millisecond,
		Answered: 95, ErrorRate: 0.05, Active: 200})
	if doubled.Admit == 0 || out.Decision.Reason != ReasonErrors || out.Limit <= 200 || out.Admit != 0 {
		t.Errorf("after the doubling (%d let in), 5 %% errors at 200 active: reason %s, target %.0f, limit %d, %d let in; "+
			"want reason errors, a limit above the active visitors and nobody let in",
			doubled.Admit, out.Decision.Reason, out.Decision.Target, out.Limit, out.Admit)
	}
}
