package sim

import (
	"math"
	"strings"
	"testing"
	"time"
)

// The simulations are deterministic (a seed, a fake clock), so the
// targets below are asserted exactly, not as timing.

func TestCapacityChanges(t *testing.T) {
	if testing.Short() {
		t.Skip("a 45-minute simulation")
	}
	r, err := Run(Default())
	if err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	r.Report(&report)
	t.Log("\n" + report.String())
	for _, c := range r.Changes {
		if c.Settled < 0 || c.Settled > 30*time.Second {
			t.Errorf("after the change at %s admission was not within ±15%% within 30 s (%s)", c.At, c.Settled)
		}
		// This origin is one FIFO server whose latency rises smoothly
		// with load (queueing from the first visitor on), not a pool of
		// workers with a sharp knee: its mean latency is 1.5 × its
		// baseline at 80 % of its throughput and 2 × at 90 %. The
		// controller keeps the origin's mean near 1.15 × its baseline
		// (issue 15: visitors notice 2 ×), which here is 65-85 % of what
		// the origin could be driven to; never more than capacity (no
		// flood).
		if c.Mean < 0.65 || c.Mean > 1.15 {
			t.Errorf("after the change at %s admission averaged %.0f%% of capacity, want 65-115%%", c.At, 100*c.Mean)
		}
	}
	if r.ErrorRateConverged >= 0.01 {
		t.Errorf("origin error rate once settled %.2f%%", 100*r.ErrorRateConverged)
	}
	if h := r.ETAFirstShown; h.WithinHigh < 0.9 || h.SteadyMedianRatio < 0.8 || h.SteadyMedianRatio > 1.2 {
		t.Errorf("ETA honesty (first shown): %+v", h)
	}
	checkFairness(t, r)
}

func TestETAHonestyAtJoin(t *testing.T) {
	if testing.Short() {
		t.Skip("a 50-minute simulation")
	}
	r, err := Run(Steady())
	if err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	r.Report(&report)
	t.Log("\n" + report.String())
	h := r.ETAAtJoin
	if h.Shown < 1000 {
		t.Fatalf("only %d visitors were shown an ETA at join and admitted", h.Shown)
	}
	if h.WithinHigh < 0.9 {
		t.Errorf("%.1f%% admitted by the eta_high shown at join, want ≥ 90%%", 100*h.WithinHigh)
	}
	if h.SteadyMedianRatio < 0.8 || h.SteadyMedianRatio > 1.2 {
		t.Errorf("median actual/shown ETA %.2f under a steady origin, want 0.8–1.2", h.SteadyMedianRatio)
	}
	checkFairness(t, r)
}

func checkFairness(t *testing.T, r *Result) {
	t.Helper()
	f := r.Fairness
	if f.Prequeue < 500 || math.Abs(f.Spearman) >= 0.05 || !f.TrancheOrderKept || !f.AuditRecomputes {
		t.Errorf("fairness: %+v", f)
	}
}

// TestRepeatable: the same seed gives the same run.
func TestRepeatable(t *testing.T) {
	cfg := Steady()
	cfg.Duration = 12 * time.Minute
	a, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.Admitted != b.Admitted || a.Joined != b.Joined || len(a.Windows) != len(b.Windows) {
		t.Fatalf("two runs of one seed differ: %d/%d admitted", a.Admitted, b.Admitted)
	}
	for i := range a.Windows {
		if a.Windows[i] != b.Windows[i] {
			t.Fatalf("window %d differs: %+v vs %+v", i, a.Windows[i], b.Windows[i])
		}
	}
}
