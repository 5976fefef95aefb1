// The controller's state: MarshalState and RestoreState, and the older
// encoding of the AIMD controller.

package admission

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

func TestControllerStateRoundTrip(t *testing.T) {
	s := simCases[1].run(ControllerConfig{})
	s.caps.MaxNewPerMinute = 6000 // the bucket travels too
	s.run(200)
	state := s.ctl.MarshalState()
	if !json.Valid(state) {
		t.Fatalf("state is not JSON: %s", state)
	}
	a, b := NewController(ControllerConfig{}, 1.5), simCases[0].run(ControllerConfig{})
	b.run(100) // b has a history of its own, which the restore replaces
	if err := a.RestoreState(state); err != nil {
		t.Fatal(err)
	}
	if err := b.ctl.RestoreState(state); err != nil {
		t.Fatal(err)
	}
	if a.limit != s.ctl.limit || a.target != s.ctl.target {
		t.Errorf("restored limit %v target %v, want %v %v", a.limit, a.target, s.ctl.limit, s.ctl.target)
	}
	// The state read back is the state written: a leader that restores
	// and saves at once writes what it read.
	again := a.MarshalState()
	var s1, s2 map[string]any
	if err := json.Unmarshal(state, &s1); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &s2); err != nil {
		t.Fatal(err)
	}
	if !equalJSON(s1, s2) {
		t.Errorf("restored state differs:\n%s\n%s", state, again)
	}
	// Two controllers restored from one state decide alike, and the new
	// leader goes on without flooding the origin or idling it. It does
	// not decide exactly as the old one would have: the smoothed
	// departures, request rate and usage, the baseline p95 and the
	// merge window are not in the state and start afresh. Its limit
	// stays within 5 % (and 2 visitors) of the old leader's on the same
	// inputs.
	old := s.ctl
	s.ctl = a
	s.origin.resetTally()
	for s.tick < 400 {
		in, out := s.step()
		if got := b.ctl.Step(in); got != out {
			t.Fatalf("tick %d: two restored controllers differ: %+v, %+v", s.tick, got, out)
		}
		if o := old.Step(in); math.Abs(float64(o.Limit-out.Limit)) > 0.05*float64(o.Limit)+2 {
			t.Fatalf("tick %d: the restored controller's limit %d, the old leader's %d", s.tick, out.Limit, o.Limit)
		}
	}
	checkDecisions(t, s)
	if u, e := s.origin.utilisation(), s.origin.errorRate(); u < 0.9 || e > 0.005 {
		t.Errorf("after the restore: utilisation %.1f%%, errors %.2f%%", 100*u, 100*e)
	}

	t.Run("version 1", func(t *testing.T) {
		// The AIMD controller's state: its limit is taken as the target.
		c := NewController(ControllerConfig{}, 1.5)
		if err := c.RestoreState([]byte(`{"v":1,"limit":57.5,"since_decrease":3,"since_settled":-1}`)); err != nil {
			t.Fatal(err)
		}
		out := c.Step(ControllerInput{Now: at(0), Measurements: Measurements{Active: 57}})
		if out.Limit != 57 || out.Decision.Target != 57.5 {
			t.Errorf("after a version 1 state: %+v, want limit 57", out.Decision)
		}
	})

	t.Run("unreadable", func(t *testing.T) {
		before := a.MarshalState()
		for _, bad := range []string{
			``, `{`, `[]`, `{"v":3,"limit":50}`, `{"v":0,"limit":50}`, `{"v":2,"limit":0}`, `{"v":1,"limit":-5}`,
			`{"v":2,"limit":50,"target":-1}`, `{"v":2,"limit":50,"think":-1}`, `{"v":2,"limit":50,"capacity":-3}`,
			`{"v":2,"limit":50,"base_latency":-1}`, `{"v":2,"limit":50,"transit":-1}`, `{"v":2,"limit":50,"saved":-1}`,
			`{"v":2,"limit":50,"admits":[[2,5],[1,5]]}`, `{"v":2,"limit":50,"admits":[[1,0]]}`,
			`{"v":2,"limit":50,"admits":[[1,3000000000]]}`, `{"v":2,"limit":50,"tokens":-3,"refilled":5}`,
			`{"v":2,"limit":50,"tokens":3}`, `{"v":2,"limit":1e400}`,
		} {
			if err := a.RestoreState([]byte(bad)); err == nil {
				t.Errorf("RestoreState(%q) accepted", bad)
			}
		}
		if after := a.MarshalState(); !bytes.Equal(before, after) {
			t.Errorf("a failed restore changed the state:\n%s\n%s", before, after)
		}
	})
}

// equalJSON compares two decoded JSON objects, but for "saved": a
// restored controller takes its last admission (or its bucket's refill,
// with max_new_per_minute) for its last tick, not the tick it saved at,
// so a state restored and saved at once carries an earlier "saved" and
// its windowed baseline and capacity expire that much sooner.
func equalJSON(a, b map[string]any) bool {
	delete(a, "saved")
	delete(b, "saved")
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}
