package figures

import (
	"math"
	"testing"
)

// series builds rows of a 20-slot origin: busy and p95 per second, the
// capacity halved over [bs, be).
func series(busy, p95 []float64, bs, be int) []Row {
	rows := make([]Row, len(busy))
	for i := range rows {
		c := 20.0
		if i >= bs && i < be {
			c = 10
		}
		rows[i] = Row{T: i, Capacity: c, Busy: busy[i], P95: p95[i], Limit: -1}
	}
	return rows
}

func fill(n int, v float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func TestCompute(t *testing.T) {
	const n = 100
	busy, p95 := fill(n, 20), fill(n, 250)
	// Admission starts at 5.5 s; the origin fills at second 9 (busy 17 ≥ 85 %).
	for i := range 9 {
		busy[i] = float64(i)
	}
	// Brown-out [40, 60): overloaded for 4 s, then half the reduced
	// capacity busy for 6 s, then full.
	for i := 40; i < 60; i++ {
		busy[i] = 10
	}
	for i := 40; i < 44; i++ {
		p95[i] = 900
	}
	for i := 50; i < 56; i++ {
		busy[i] = 5
	}
	// The restore: 12, 14, 16, then 18 (≥ 17) at second 63.
	busy[60], busy[61], busy[62] = 12, 14, 16
	// Settled probing: 3 overloaded seconds, one with 503s.
	p95[20], p95[21] = 500, 500
	rows := series(busy, p95, 40, 60)
	rows[30].Rejected = 7
	for i := range rows {
		rows[i].Limit = 100
	}
	rows[25].Limit = 80 // a swing of (100-x̄)… see below

	s := Scenario{Capacity: 20, BaseMS: 200, BrownStart: 40, BrownEnd: 60, Settle: 10, SettleAfterBrown: 10}
	f := s.Compute(rows, 5.5, 90.2, 1234)

	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 && !(math.IsInf(got, 1) && math.IsInf(want, 1)) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("Convergence", f.Convergence, 9+1-5.5)
	near("BrownRecover", f.BrownRecover, 4)
	near("BrownUtil", f.BrownUtil, (14*1.0+6*0.5)/20)
	near("Restore", f.Restore, 4)
	near("Rejected", f.Rejected, 7)
	near("Completions", f.Completions, 1234)
	// Demand: seconds 5..90 (86). Overloaded: 20, 21, 30, 40..43.
	near("OverSeconds", f.OverSeconds, 7)
	near("OverShare", f.OverShare, 7.0/86)
	// Settled: 15..39 and 70..90 (46 s), all at full utilisation;
	// overloaded 20, 21, 30.
	near("SettledUtil", f.SettledUtil, 1)
	near("SettledOver", f.SettledOver, 3.0/46)
	near("Settled503", f.Settled503, 7)
	mean := (45*100.0 + 80) / 46
	near("LimitSwing", f.LimitSwing, (mean-80)/mean)
	// The first minute: 5..64 (60 s).
	var sum float64
	for i := 5; i < 65; i++ {
		sum += rows[i].Util()
	}
	near("FirstMinuteUtil", f.FirstMinuteUtil, sum/60)
}

func TestComputeEdges(t *testing.T) {
	s := Scenario{Capacity: 20, BaseMS: 200, BrownStart: 40, BrownEnd: 60, Settle: 10, SettleAfterBrown: 10}
	// Nobody admitted: nothing but the totals.
	f := s.Compute(series(fill(50, 0), fill(50, 0), 40, 60), math.NaN(), math.NaN(), 0)
	if !math.IsInf(f.Convergence, 1) || !math.IsNaN(f.SettledUtil) || !math.IsNaN(f.BrownRecover) {
		t.Errorf("no admission: %+v", f)
	}
	// Never filled, never recovered, never restored; the demand lasts.
	f = s.Compute(series(fill(100, 5), fill(100, 900), 40, 60), 1, 99, 0)
	if !math.IsInf(f.Convergence, 1) || !math.IsInf(f.BrownRecover, 1) || !math.IsInf(f.Restore, 1) {
		t.Errorf("never: %+v", f)
	}
	// The demand ended before the brown-out: not applicable.
	f = s.Compute(series(fill(100, 20), fill(100, 250), 40, 60), 1, 30, 0)
	if !math.IsNaN(f.BrownRecover) || !math.IsNaN(f.BrownUtil) || !math.IsNaN(f.Restore) {
		t.Errorf("ended before the brown-out: %+v", f)
	}
	// No brown-out configured.
	s.BrownStart, s.BrownEnd = 0, 0
	f = s.Compute(series(fill(100, 20), fill(100, 250), 0, 0), 1, 99, 0)
	if !math.IsNaN(f.BrownRecover) || f.SettledUtil != 1 || f.SettledOver != 0 {
		t.Errorf("no brown-out: %+v", f)
	}
}

func TestQuantile(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	if q := Quantile(v, 0.5); q != 5 {
		t.Errorf("p50 = %v", q)
	}
	if q := Quantile(v, 0.95); q != 10 {
		t.Errorf("p95 = %v", q)
	}
	if q := Quantile(nil, 0.95); q != 0 {
		t.Errorf("p95 of nothing = %v", q)
	}
}

func TestComputeBrownOut(t *testing.T) {
	s := Scenario{Capacity: 20, BaseMS: 200, BrownStart: 40, BrownEnd: 60, Settle: 10, SettleAfterBrown: 10}
	// Idle at the drop, then a burst overloads it from 45 to 49: back
	// under at 50, 10 s after the drop, not at once.
	busy, p95 := fill(100, 20), fill(100, 250)
	for i := 40; i < 45; i++ {
		busy[i], p95[i] = 0, 0
	}
	for i := 45; i < 50; i++ {
		p95[i] = 1400
	}
	f := s.Compute(series(busy, p95, 40, 60), 1, 99, 0)
	if f.BrownRecover != 10 {
		t.Errorf("BrownRecover = %v, want 10", f.BrownRecover)
	}
	// Overloaded in its last seconds: never back under.
	p95[58] = 1400
	if f = s.Compute(series(busy, p95, 40, 60), 1, 99, 0); !math.IsInf(f.BrownRecover, 1) {
		t.Errorf("BrownRecover = %v, want never", f.BrownRecover)
	}
	// Everyone admitted by 30 s, but the origin has a line until 79: the
	// demand covers the brown-out and the restore.
	rows := series(fill(100, 20), fill(100, 900), 40, 60)
	for i := range 80 {
		rows[i].MaxQueue = 60
	}
	f = s.Compute(rows, 1, 30, 0)
	if !math.IsInf(f.BrownRecover, 1) || f.Restore != 1 || f.OverSeconds != 79 {
		t.Errorf("a line after the last admission: recover %v, restore %v, overloaded %v; want never, 1, 79",
			f.BrownRecover, f.Restore, f.OverSeconds)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{math.NaN(), 7, math.Inf(1)}, math.Inf(1)},
		{[]float64{math.NaN(), 7, 5}, 6},
	} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := Median([]float64{math.NaN()}); !math.IsNaN(got) {
		t.Errorf("Median(NaN) = %v, want NaN", got)
	}
	in := []float64{3, 1, 2}
	Median(in)
	if in[0] != 3 {
		t.Error("Median sorted its argument")
	}
}
