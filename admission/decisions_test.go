package admission_test

import (
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// checkDecision checks a decision against the contract: a known reason,
// made at the tick, its figures consistent.
func checkDecision(t *testing.T, d admission.Decision, at time.Time) {
	t.Helper()
	if !slices.Contains(admission.Reasons, d.Reason) {
		t.Errorf("decision at %v: reason %q is not one of admission.Reasons", d.At, d.Reason)
	}
	if !d.At.Equal(at) {
		t.Errorf("decision at %v, want the tick's time %v", d.At, at)
	}
	if d.Limit < 0 || d.Admit < 0 || d.Slots < 0 || d.Active < 0 || d.Usage < 0 {
		t.Errorf("decision at %v: negative figures %+v", d.At, d)
	}
	if math.Abs(d.Usage-(d.Active+d.Pending)) > 1e-6 {
		t.Errorf("decision at %v: usage %v is not active %v + pending %v", d.At, d.Usage, d.Active, d.Pending)
	}
}

func sumCounts(c map[admission.Reason]uint64) uint64 {
	n := uint64(0)
	for _, v := range c {
		n += v
	}
	return n
}

func TestDecisionsRecorded(t *testing.T) {
	r := newRig(t, event("show"))
	r.meter.m = admission.Measurements{LatencyP50: 20 * time.Millisecond, LatencyP95: 50 * time.Millisecond,
		LatencyMean: 25 * time.Millisecond, Answered: 500, RequestRate: 100, Active: 3}
	if _, err := r.e.Decisions("nope", time.Time{}, 10); err == nil {
		t.Fatal("decisions of an unknown event")
	}

	// The pre-queue: the leader does not run the controller.
	r.at(t, time.Second)
	log, err := r.e.Decisions("show", time.Time{}, admission.DecisionLogSize)
	if err != nil {
		t.Fatal(err)
	}
	if !log.Leader || log.Deciding || len(log.Decisions) != 0 || !log.Last.At.IsZero() || log.Tick != admission.DefaultTick {
		t.Fatalf("before the on-sale: %+v", log)
	}
	if len(log.Counts) != len(admission.Reasons) || sumCounts(log.Counts) != 0 {
		t.Fatalf("counts before any decision: %v", log.Counts)
	}

	// Selling: one decision per tick, the last one in the figures.
	var ticks []time.Time
	for s := 61; s < 81; s++ {
		r.at(t, time.Duration(s)*time.Second)
		ticks = append(ticks, r.clk.Now())
		f := r.e.Figures("show")
		checkDecision(t, f.Decision, r.clk.Now())
		if f.Decision.Limit != f.Limit {
			t.Fatalf("figures: decision limit %d, limit %d", f.Decision.Limit, f.Limit)
		}
	}
	log, _ = r.e.Decisions("show", time.Time{}, admission.DecisionLogSize)
	if !log.Leader || !log.Deciding || log.State != admission.StateSelling || len(log.Decisions) != len(ticks) {
		t.Fatalf("selling: leader %v deciding %v state %v, %d decisions for %d ticks",
			log.Leader, log.Deciding, log.State, len(log.Decisions), len(ticks))
	}
	for i, d := range log.Decisions {
		checkDecision(t, d, ticks[i])
	}
	if log.Last != log.Decisions[len(log.Decisions)-1] || log.Limit != log.Last.Limit {
		t.Fatalf("last %+v, limit %d, decisions end with %+v", log.Last, log.Limit, log.Decisions[len(log.Decisions)-1])
	}
	counted := map[admission.Reason]uint64{}
	for _, d := range log.Decisions {
		counted[d.Reason]++
	}
	for _, reason := range admission.Reasons {
		if log.Counts[reason] != counted[reason] {
			t.Errorf("count of %s: %d, the decisions have %d", reason, log.Counts[reason], counted[reason])
		}
	}

	// Paused: no decisions, and the figures carry none; they resume with
	// the sale.
	if err := r.e.SetControl(ctx, "show", admission.Control{Paused: true}); err != nil {
		t.Fatal(err)
	}
	for s := 81; s < 86; s++ {
		r.at(t, time.Duration(s)*time.Second)
	}
	paused, _ := r.e.Decisions("show", time.Time{}, admission.DecisionLogSize)
	if paused.Deciding || paused.State != admission.StatePaused || len(paused.Decisions) != len(ticks) ||
		sumCounts(paused.Counts) != uint64(len(ticks)) || paused.Last != log.Last {
		t.Fatalf("paused: deciding %v state %v, %d decisions, counts %v", paused.Deciding, paused.State,
			len(paused.Decisions), paused.Counts)
	}
	if d := r.e.Figures("show").Decision; !d.At.IsZero() {
		t.Fatalf("the figures carry a decision while paused: %+v", d)
	}
	if err := r.e.SetControl(ctx, "show", admission.Control{}); err != nil {
		t.Fatal(err)
	}
	r.at(t, 86*time.Second)
	if log, _ = r.e.Decisions("show", time.Time{}, 1); !log.Deciding || len(log.Decisions) != 1 {
		t.Fatalf("after resuming: %+v", log)
	}
	checkDecision(t, log.Decisions[0], r.clk.Now())
}

func TestDecisionsRingAndQuery(t *testing.T) {
	r := newRig(t, event("show"))
	var ticks []time.Time
	const n = admission.DecisionLogSize + 37
	for i := range n {
		r.at(t, 61*time.Second+time.Duration(i)*time.Second)
		ticks = append(ticks, r.clk.Now())
	}
	all, _ := r.e.Decisions("show", time.Time{}, 10*admission.DecisionLogSize)
	if len(all.Decisions) != admission.DecisionLogSize || sumCounts(all.Counts) != n {
		t.Fatalf("%d ticks: %d decisions kept, %d counted", n, len(all.Decisions), sumCounts(all.Counts))
	}
	kept := ticks[n-admission.DecisionLogSize:]
	for i, d := range all.Decisions {
		if !d.At.Equal(kept[i]) {
			t.Fatalf("decision %d at %v, want %v (oldest dropped first, most recent last)", i, d.At, kept[i])
		}
	}

	for _, c := range []struct {
		name  string
		since time.Time
		limit int
		want  []time.Time
	}{
		{"limit", time.Time{}, 5, ticks[n-5:]},
		{"since", ticks[n-4], 100, ticks[n-3:]},
		{"since and limit", ticks[n-50], 7, ticks[n-7:]},
		{"since the last", ticks[n-1], 100, nil},
		{"since the future", ticks[n-1].Add(time.Hour), 100, nil},
		{"since before the ring", ticks[0], n, kept},
		{"no limit", time.Time{}, 0, nil},
		{"negative limit", time.Time{}, -3, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			log, err := r.e.Decisions("show", c.since, c.limit)
			if err != nil {
				t.Fatal(err)
			}
			if log.Decisions == nil || len(log.Decisions) != len(c.want) {
				t.Fatalf("%d decisions (nil: %v), want %d", len(log.Decisions), log.Decisions == nil, len(c.want))
			}
			for i, d := range log.Decisions {
				if !d.At.Equal(c.want[i]) {
					t.Fatalf("decision %d at %v, want %v", i, d.At, c.want[i])
				}
			}
			if !log.Last.At.Equal(ticks[n-1]) || sumCounts(log.Counts) != n {
				t.Fatalf("last at %v, %d counted", log.Last.At, sumCounts(log.Counts))
			}
		})
	}
}

// TestDecisionsConcurrent reads the decisions while the engine ticks
// (run with -race).
func TestDecisionsConcurrent(t *testing.T) {
	r := newRig(t, event("show"))
	r.at(t, 61*time.Second)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			log, err := r.e.Decisions("show", t0, admission.DecisionLogSize)
			if err != nil {
				t.Error(err)
				return
			}
			for i := 1; i < len(log.Decisions); i++ {
				if !log.Decisions[i].At.After(log.Decisions[i-1].At) {
					t.Errorf("decisions out of order: %v then %v", log.Decisions[i-1].At, log.Decisions[i].At)
					return
				}
			}
		}
	}()
	for s := 62; s < 200; s++ {
		r.at(t, time.Duration(s)*time.Second)
	}
	close(stop)
	wg.Wait()
}
