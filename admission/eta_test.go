package admission

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestEstimateETA(t *testing.T) {
	for _, tc := range []struct {
		name           string
		ahead          float64
		wait           time.Duration
		low, mid, high float64
		want           ETA
	}{
		// 600 ahead at 5/s: 120 s; Low 600/5 × 0.9 = 108 → 105; High
		// 600/5 × 1.3 + 15 = 171 → 180.
		{"steady", 600, 0, 5, 5, 5, ETA{120, 105, 180}},
		{"spread", 600, 0, 2.5, 5, 10, ETA{120, 45, 360}},
		{"wait for the draw", 600, 30 * time.Second, 5, 5, 5, ETA{180, 120, 240}},
		{"only the wait", 0, 30 * time.Second, 5, 5, 5, ETA{30, 30, 45}},
		{"next in line", 0, 0, 5, 5, 5, ETA{0, 0, 0}},
		{"nearly there", 1, 0, 5, 5, 5, ETA{15, 0, 30}},
		{"negative ahead", -5, 0, 5, 5, 5, ETA{0, 0, 0}},
		{"rates out of order", 600, 0, 9, 5, 1, ETA{120, 105, 180}},
		{"no low rate", 600, 0, 0, 5, 5, ETA{120, 105, 660}},
		{"a month at most", 1e12, 0, 1, 1, 1, ETA{etaMaxSeconds, etaMaxSeconds, etaMaxSeconds}},
		{"no rate", 600, 0, 0, 0, 0, etaUnknown},
		{"NaN rate", 600, 0, math.NaN(), math.NaN(), math.NaN(), etaUnknown},
		{"infinite rate", 600, 0, 5, math.Inf(1), 5, etaUnknown},
		{"NaN ahead", math.NaN(), 0, 5, 5, 5, etaUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := EstimateETA(tc.ahead, tc.wait, tc.low, tc.mid, tc.high); got != tc.want {
				t.Errorf("EstimateETA(%v, %v, %v, %v, %v) = %+v, want %+v", tc.ahead, tc.wait, tc.low, tc.mid, tc.high, got, tc.want)
			}
		})
	}
}

func TestETARounding(t *testing.T) {
	for _, tc := range []struct {
		seconds float64
		want    int
	}{
		{0.5, 15}, {7, 15}, {22, 15}, {23, 30}, {112, 105}, {113, 120}, {119, 120},
		{121, 120}, {149, 120}, {151, 180}, {629, 600}, {631, 660}, {899, 900},
		{901, 900}, {1049, 900}, {1051, 1200}, {3600, 3600}, {3749, 3600}, {3751, 3900},
	} {
		// At 1 visitor a second, ahead is the wait in seconds.
		if got := EstimateETA(tc.seconds, 0, 1, 1, 1).Seconds; got != tc.want {
			t.Errorf("%v s: shown %d, want %d", tc.seconds, got, tc.want)
		}
	}

	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		ahead := math.Exp(rng.Float64() * 14)
		wait := time.Duration(rng.Float64() * float64(10*time.Minute))
		mid := math.Exp(rng.Float64()*8 - 3)
		low, high := mid*rng.Float64(), mid/max(rng.Float64(), 0.01)
		e := EstimateETA(ahead, wait, low, mid, high)
		if !(0 <= e.Low && e.Low <= e.Seconds && e.Seconds <= e.High && e.High <= etaMaxSeconds) {
			t.Fatalf("EstimateETA(%v, %v, %v, %v, %v) = %+v: out of order", ahead, wait, low, mid, high, e)
		}
		for _, v := range []int{e.Low, e.Seconds, e.High} {
			if step := int(etaStep(float64(v))); v%step != 0 && v != etaMaxSeconds {
				t.Fatalf("EstimateETA(%v, %v, %v, %v, %v) = %+v: %d is not on a %d s step", ahead, wait, low, mid, high, e, v, step)
			}
		}
		// The low rate used is at least a quarter of the mean.
		if lowUsed := max(low, mid/4); float64(e.High) < min(wait.Seconds()+ahead/lowUsed, etaMaxSeconds) {
			t.Fatalf("EstimateETA(%v, %v, %v, %v, %v) = %+v: High below the wait at the low rate", ahead, wait, low, mid, high, e)
		}
	}
}

func TestEstimateETAAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(1000, func() { EstimateETA(12345, 3*time.Second, 3, 4, 5) }); n != 0 {
		t.Errorf("EstimateETA allocates %v times", n)
	}
}

// feed observes advances, one a second from the estimator's clock.
type feed struct {
	est  *RateEstimator
	tick int
}

func newFeed(window time.Duration) *feed {
	f := &feed{est: NewRateEstimator(window)}
	f.est.Observe(at(0), 0)
	return f
}

func (f *feed) observe(advances ...uint64) {
	for _, a := range advances {
		f.tick++
		f.est.Observe(at(f.tick), a)
	}
}

func (f *feed) repeat(n int, advance uint64) {
	for range n {
		f.observe(advance)
	}
}

func TestRateEstimatorNoRate(t *testing.T) {
	f := &feed{est: NewRateEstimator(0)}
	if lo, mid, hi := f.est.Rates(); lo != 0 || mid != 0 || hi != 0 {
		t.Errorf("new estimator: %v %v %v, want no rate", lo, mid, hi)
	}
	f.est.Observe(at(0), 100) // the first observation only starts the clock
	if _, mid, _ := f.est.Rates(); mid != 0 {
		t.Errorf("after one observation: mid %v, want no rate", mid)
	}
	f.repeat(900, 0) // a quarter of an hour in which nobody got in
	if lo, mid, hi := f.est.Rates(); lo != 0 || mid != 0 || hi != 0 {
		t.Errorf("nobody admitted: %v %v %v, want no rate", lo, mid, hi)
	}
	if e := EstimateETA(100, 0, 0, 0, 0); e.Known() {
		t.Errorf("ETA %+v without a rate", e)
	}
}

func TestRateEstimatorSteady(t *testing.T) {
	f := newFeed(DefaultRateWindow)
	f.repeat(100, 5)
	// A steady pace is believed once it has held for a whole window.
	if _, mid, _ := f.est.Rates(); mid != 0 {
		t.Errorf("after 100 s: mid %v, want no rate yet", mid)
	}
	f.repeat(20, 5)
	lo, mid, hi := f.est.Rates()
	if lo != 5 || mid != 5 || hi != 5 {
		t.Fatalf("rates %v %v %v, want 5 5 5", lo, mid, hi)
	}
	if e := EstimateETA(600, 0, lo, mid, hi); e != (ETA{120, 105, 180}) {
		t.Errorf("ETA %+v for 600 ahead at 5/s", e)
	}
	// Faster observations (a follower refreshing 4 times a second)
	// measure the same pace.
	g := &feed{est: NewRateEstimator(DefaultRateWindow)}
	for i := range 4 * 600 {
		g.est.Observe(ctlEpoch.Add(time.Duration(i)*250*time.Millisecond), uint64(1+i%2)*2-1) // 1, 3, 1, 3…
	}
	if lo, mid, hi := g.est.Rates(); math.Abs(mid-8) > 0.01 || lo < 7.9 || hi > 8.1 {
		t.Errorf("4 observations a second: rates %v %v %v, want 8", lo, mid, hi)
	}
}

func TestRateEstimatorBursty(t *testing.T) {
	steady, bursty := newFeed(DefaultRateWindow), newFeed(DefaultRateWindow)
	// The same mean, 5/s: steady, and 30 s at 8/s then 30 s at 2/s.
	for range 10 {
		steady.repeat(60, 5)
		bursty.repeat(30, 8)
		bursty.repeat(30, 2)
	}
	sLo, sMid, sHi := steady.est.Rates()
	bLo, bMid, bHi := bursty.est.Rates()
	if math.Abs(bMid-5) > 0.6 {
		t.Errorf("bursty mean %v, want about 5", bMid)
	}
	if !(bLo < sLo-1 && bHi > sHi+1) {
		t.Errorf("bursty rates %v %v %v, steady %v %v %v: want a wider spread", bLo, bMid, bHi, sLo, sMid, sHi)
	}
	se, be := EstimateETA(3000, 0, sLo, sMid, sHi), EstimateETA(3000, 0, bLo, bMid, bHi)
	if !(be.High-be.Low > se.High-se.Low) {
		t.Errorf("ETA range %+v when bursty, %+v when steady: want it wider", be, se)
	}

	// Pauses longer than a sub-window (a controller cutting back while
	// long visits drain) stretch the sub-windows: one burst of 300 every
	// minute is a pace of 5/s, not a rate swinging between 0 and 15.
	pulsed := newFeed(DefaultRateWindow)
	for range 12 {
		pulsed.observe(300)
		pulsed.repeat(59, 0)
	}
	lo, mid, hi := pulsed.est.Rates()
	if math.Abs(mid-5) > 0.5 || lo < 2.5 || hi > 7.5 {
		t.Errorf("a burst a minute: rates %v %v %v, want about 5", lo, mid, hi)
	}
}

func TestRateEstimatorWindowSlides(t *testing.T) {
	f := newFeed(DefaultRateWindow)
	f.repeat(300, 10)
	if _, mid, _ := f.est.Rates(); mid != 10 {
		t.Fatalf("mid %v, want 10", mid)
	}
	f.repeat(150, 2)
	lo, mid, hi := f.est.Rates()
	if mid != 2 || hi != 2 || lo != 2 {
		t.Errorf("a window after slowing to 2/s: rates %v %v %v, want 2", lo, mid, hi)
	}
	// Faster again: the estimate follows within a window, the
	// conservative rate remembers the slow minutes for the memory.
	f.repeat(150, 10)
	lo, mid, _ = f.est.Rates()
	if mid != 10 || lo > 3 {
		t.Errorf("a window after speeding up: low %v, mid %v, want the low rate still near 2, mid 10", lo, mid)
	}
	f.repeat(600, 10)
	if lo, mid, hi := f.est.Rates(); lo != 10 || mid != 10 || hi != 10 {
		t.Errorf("a memory after speeding up: rates %v %v %v, want 10", lo, mid, hi)
	}
}

func TestRateEstimatorOpeningSurge(t *testing.T) {
	// The controller fills the origin first: admissions ramp up 5 % a
	// second for a minute, stop while the first visitors finish, then
	// go on at the pace the origin keeps, 4/s.
	f := newFeed(DefaultRateWindow)
	a := 2.0
	for range 60 {
		f.observe(uint64(a))
		a *= 1.05
		if _, mid, _ := f.est.Rates(); mid != 0 {
			t.Fatalf("tick %d of the surge: mid %v, want no rate yet", f.tick, mid)
		}
	}
	f.repeat(20, 0)
	for range 150 {
		f.observe(4)
	}
	if lo, mid, hi := f.est.Rates(); math.Abs(mid-4) > 0.2 || lo > mid || hi < mid {
		t.Errorf("after the surge: rates %v %v %v, want about 4", lo, mid, hi)
	}

	f.est.Reset()
	if _, mid, _ := f.est.Rates(); mid != 0 {
		t.Errorf("after Reset: mid %v", mid)
	}
}

func TestRateEstimatorSameInstant(t *testing.T) {
	f := newFeed(DefaultRateWindow)
	for range 200 {
		f.tick++
		f.est.Observe(at(f.tick), 2)
		f.est.Observe(at(f.tick), 3)   // the same instant: added
		f.est.Observe(at(f.tick-1), 0) // the clock stepped back: added to the last
	}
	if _, mid, _ := f.est.Rates(); mid != 5 {
		t.Errorf("mid %v, want 5", mid)
	}
}

// TestETAHonesty drives the controller against the test's origin, with
// the queue much longer than the origin can take, and checks the ETA each
// joining visitor is shown against when they are let in: at least 90 %
// by the High shown, and under a steady origin the median of actual over
// shown Seconds within 0.8–1.2.
func TestETAHonesty(t *testing.T) {
	for _, tc := range []struct {
		name        string
		journey     float64                // seconds a visitor stays
		capacity    func(tick int) float64 // visitors a minute the origin takes
		from, to    int                    // ticks in which visitors join and are checked
		medianCheck bool
	}{
		{"steady origin", 20, func(int) float64 { return 200 }, 300, 2700, true},
		{"long visits", 180, func(int) float64 { return 200 }, 300, 2700, true},
		{"the opening minutes", 180, func(int) float64 { return 200 }, 1, 300, true},
		{"capacity halving every 10 min", 20, func(t int) float64 { return []float64{200, 100}[t/600%2] }, 120, 2700, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSimRun(ControllerConfig{}, 0)
			// The test's origin is given in requests (the controller is
			// model-based): a visitor requests a page every 2.1 s (100 ms
			// and 2 s of thought), so a journey of tc.journey seconds is
			// tc.journey/2.1 requests and the origin takes capacity
			// visitors a minute at capRate = capacity × requests / 60.
			// Long visits are many requests, not long thoughts: visitors
			// who think long make too few requests at initial_active for
			// the controller to judge (see TestControllerFewAnswers).
			s.origin.journey = tc.journey / (s.origin.base + s.origin.think)
			capRate := func(tick int) float64 { return tc.capacity(tick) * s.origin.journey / 60 }
			est := NewRateEstimator(DefaultRateWindow)
			est.Observe(s.now(), 0)
			type probe struct {
				join   int
				number float64
				eta    ETA
			}
			var probes []probe
			var actual []int
			last, served := 12000.0, uint64(0) // 12,000 in the queue at the start, 3 more a second
			forgot := time.Duration(0)         // the highest baseline the controller took, if above 2 × the origin's
			for s.tick < 8000 && (len(probes) == 0 || len(actual) < len(probes)) {
				s.origin.capRate = capRate(s.tick)
				_, out := s.step()
				if b := out.Decision.BaseLatency; b.Seconds() > 2*s.origin.base && b > forgot {
					forgot = b
				}
				serving := uint64(s.counter)
				est.Observe(s.now(), serving-served)
				served = serving
				last += 3
				if s.tick >= tc.from && s.tick < tc.to && s.tick%5 == 0 {
					lo, mid, hi := est.Rates()
					probes = append(probes, probe{s.tick, last, EstimateETA(last-float64(serving), 0, lo, mid, hi)})
				}
				for len(actual) < len(probes) && float64(serving) >= probes[len(actual)].number {
					actual = append(actual, s.tick-probes[len(actual)].join)
				}
			}
			if len(actual) < len(probes) {
				t.Fatalf("%d of %d visitors never let in", len(probes)-len(actual), len(probes))
			}
			var ratios []float64
			within := 0
			for i, p := range probes {
				if !p.eta.Known() {
					continue
				}
				if actual[i] <= p.eta.High {
					within++
				}
				ratios = append(ratios, float64(actual[i])/float64(p.eta.Seconds))
			}
			if len(ratios) < len(probes)/2 {
				t.Fatalf("only %d of %d visitors shown an ETA (the highest baseline the controller took: %v, the origin's %v)",
					len(ratios), len(probes), forgot, secs(s.origin.base))
			}
			slices.Sort(ratios)
			share, median := float64(within)/float64(len(ratios)), ratios[len(ratios)/2]
			t.Logf("%d visitors shown an ETA (of %d): %.1f%% let in by High, actual/shown median %.2f (p10 %.2f, p90 %.2f)",
				len(ratios), len(probes), 100*share, median, ratios[len(ratios)/10], ratios[len(ratios)*9/10])
			if share < 0.9 {
				t.Errorf("%.1f%% let in by the High shown, want ≥ 90%%", 100*share)
			}
			if tc.medianCheck && (median < 0.8 || median > 1.2) {
				t.Errorf("median actual/shown %.2f, want 0.8–1.2", median)
			}
		})
	}
}

func BenchmarkEstimateETA(b *testing.B) {
	b.ReportAllocs()
	ahead := 12345.0
	for b.Loop() {
		EstimateETA(ahead, 3*time.Second, 3, 4, 5)
	}
}

// BenchmarkRateEstimator is one tick of the engine: an observation and
// the rates, with the memory full (10 minutes of 1 s ticks).
func BenchmarkRateEstimator(b *testing.B) {
	f := newFeed(DefaultRateWindow)
	for i := range 700 {
		f.observe(uint64(i % 7))
	}
	b.ReportAllocs()
	for b.Loop() {
		f.observe(uint64(f.tick % 7))
		f.est.Rates()
	}
}
