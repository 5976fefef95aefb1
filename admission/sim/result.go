// What a run measured (Result) and how: the controller's convergence after
// each capacity change, the honesty of the ETAs shown, the fairness of the
// draw, and the report for people.

package sim

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// Result is what a run measured.
type Result struct {
	Config   Config
	Joined   int
	Admitted int
	Gone     int // gave up before their turn
	// Windows are 30-second measurements of admission against capacity.
	Windows []Window
	// Changes are the capacity changes and how long admission took to
	// settle within ±15 % of the new capacity.
	Changes []Change
	// ErrorRateConverged is the origin's error rate over the windows in
	// which admission had settled.
	ErrorRateConverged float64
	ETAAtJoin          Honesty
	ETAFirstShown      Honesty
	// ETAWarmup is ETAAtJoin over the visitors who joined before the
	// admission rate could be measured: in the pre-queue or in the first
	// WarmupFor of the sale. Their ETA came from the prior (the expected
	// rate, or the controller's limit over the session). ETASaleStart is
	// the same over those who joined in the first WarmupFor of the sale
	// only.
	ETAWarmup    Honesty
	ETASaleStart Honesty
	// ETAAfterWarmup is ETAAtJoin over those who joined later.
	ETAAfterWarmup Honesty
	// ExpectedRate is the event's controller.expected_rate (0: none).
	ExpectedRate float64
	Fairness     Fairness
	Elapsed      time.Duration
}

// Window is one 30-second measurement.
type Window struct {
	At        time.Duration // end of the window, after the queue opened
	Capacity  float64       // visitors per minute the origin could sell
	Admitted  float64       // visitors per minute who came in
	Completed float64       // visitors per minute who bought
	ErrorRate float64
	Waiting   int // visitors with a number, not reached
	Limit     int
	Active    int     // shoppers in the origin
	Pending   int     // offered, not yet come (as the controller saw it)
	NoShow    float64 // measured no-show rate
}

// Change is a capacity change and how admission followed it. Admission
// rates are over sliding 30-second windows, stepped by 5 seconds.
type Change struct {
	At       time.Duration
	From, To float64
	// Settled is how long after the change the first 30-second window
	// within ±15 % of the new capacity starts (windows lie wholly after
	// the change); -1 when none is.
	Settled time.Duration
	// Mean is the admission rate from Settled to the next change, as a
	// share of the new capacity.
	Mean float64
	// InBand is the share of the 30-second windows from Settled to the
	// next change that are within ±15 %.
	InBand float64
}

// Honesty measures ETAs against when visitors were actually admitted.
type Honesty struct {
	Shown int // visitors who were shown an ETA
	// WithinHigh is the share admitted no later than the High shown.
	WithinHigh float64
	// MedianRatio is the median of actual wait / shown Seconds.
	MedianRatio float64
	// SteadyMedianRatio is the same over visitors whose whole wait fell
	// in a steady stretch of capacity.
	SteadyMedianRatio float64
	SteadyCount       int
}

// Fairness measures the draw.
type Fairness struct {
	Prequeue          int     // pre-queue visitors drawn
	Spearman          float64 // rank correlation of arrival and number in the pre-queue
	TrancheOrderKept  bool    // every earlier tranche's numbers come before a later one's
	AuditRecomputes   bool    // the published audit of the pre-queue checks and holds everyone at their number
	TranchesRecounted int
}

// measure computes convergence and ETA honesty. perTick[i] is how many
// were admitted during tick i (ending at (i)·tick after the queue opened).
func (r *Result) measure(visitors []*visitor, cfg Config, start time.Time, perTick []int, tick time.Duration) {
	// rate is the admission rate, per minute, over (from, to].
	rate := func(from, to time.Duration) float64 {
		n := 0
		for i := int(from / tick); i < int(to/tick) && i < len(perTick); i++ {
			n += perTick[i]
		}
		return float64(n) / (to - from).Minutes()
	}
	const width, step = 30 * time.Second, 5 * time.Second
	steps := cfg.Origin.Capacity
	for i := 1; i < len(steps); i++ {
		c := Change{At: steps[i].At, From: steps[i-1].PerMinute, To: steps[i].PerMinute, Settled: -1}
		until := nextChange(cfg, c.At)
		for from := c.At; from+width <= until; from += step {
			if math.Abs(rate(from, from+width)-c.To)/c.To <= 0.15 {
				c.Settled = from - c.At
				break
			}
		}
		if c.Settled >= 0 {
			settled := c.At + c.Settled
			c.Mean = rate(settled, until) / c.To
			in, all := 0, 0
			for from := settled; from+width <= until; from += step {
				all++
				if math.Abs(rate(from, from+width)-c.To)/c.To <= 0.15 {
					in++
				}
			}
			c.InBand = float64(in) / float64(all)
		}
		r.Changes = append(r.Changes, c)
	}
	// Error rate over the settled stretches.
	var req, errs float64
	for _, c := range r.Changes {
		if c.Settled < 0 {
			continue
		}
		for _, w := range r.Windows {
			if w.At > c.At+c.Settled && w.At <= nextChange(cfg, c.At) {
				// Weight by admitted traffic (a proxy for requests).
				req += w.Completed + 1
				errs += w.ErrorRate * (w.Completed + 1)
			}
		}
	}
	if req > 0 {
		r.ErrorRateConverged = errs / req
	}
	steadyFrom, steadyTo := steadyStretches(cfg)
	atJoin := func(v *visitor) (admission.ETA, time.Time) { return v.shownETA, v.arrive }
	r.ETAAtJoin = honesty(visitors, atJoin, steadyFrom, steadyTo, start)
	r.ETAFirstShown = honesty(visitors, func(v *visitor) (admission.ETA, time.Time) { return v.firstETA, v.firstAt }, steadyFrom, steadyTo, start)
	onSale := start.Add(cfg.PrequeueFor)
	joinedBefore := func(from, to time.Time) []*visitor {
		var out []*visitor
		for _, v := range visitors {
			if !v.arrive.Before(from) && v.arrive.Before(to) {
				out = append(out, v)
			}
		}
		return out
	}
	r.ETAWarmup = honesty(joinedBefore(start, onSale.Add(WarmupFor)), atJoin, steadyFrom, steadyTo, start)
	r.ETASaleStart = honesty(joinedBefore(onSale, onSale.Add(WarmupFor)), atJoin, steadyFrom, steadyTo, start)
	r.ETAAfterWarmup = honesty(joinedBefore(onSale.Add(WarmupFor), start.Add(cfg.Duration)), atJoin, steadyFrom, steadyTo, start)
	r.ExpectedRate = cfg.Event.Controller.ExpectedRate
}

// WarmupFor is the start of a sale whose ETAs are reported apart (see
// Result.ETAWarmup): about as long as the rate estimator needs before it
// reports a measured rate.
const WarmupFor = 2 * time.Minute

func nextChange(cfg Config, at time.Duration) time.Duration {
	for _, s := range cfg.Origin.Capacity {
		if s.At > at {
			return s.At
		}
	}
	return cfg.Duration
}

// steadyStretches returns the stretches (offsets) during which capacity
// did not change.
func steadyStretches(cfg Config) ([]time.Duration, []time.Duration) {
	var from, to []time.Duration
	steps := cfg.Origin.Capacity
	for i, s := range steps {
		end := cfg.Duration
		if i+1 < len(steps) {
			end = steps[i+1].At
		}
		from, to = append(from, s.At), append(to, end)
	}
	return from, to
}

func honesty(visitors []*visitor, shown func(*visitor) (admission.ETA, time.Time), from, to []time.Duration, start time.Time) Honesty {
	var h Honesty
	var within int
	var ratios, steady []float64
	for _, v := range visitors {
		eta, at := shown(v)
		if v.reached.IsZero() || at.IsZero() || eta.Seconds < 0 {
			continue
		}
		h.Shown++
		wait := v.reached.Sub(at).Seconds()
		if wait <= float64(eta.High) {
			within++
		}
		if eta.Seconds > 0 {
			ratio := wait / float64(eta.Seconds)
			ratios = append(ratios, ratio)
			a, b := at.Sub(start), v.reached.Sub(start)
			for i := range from {
				if a >= from[i] && b < to[i] {
					steady = append(steady, ratio)
				}
			}
		}
	}
	if h.Shown > 0 {
		h.WithinHigh = float64(within) / float64(h.Shown)
	}
	h.MedianRatio = median(ratios)
	h.SteadyMedianRatio, h.SteadyCount = median(steady), len(steady)
	return h
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// fairness checks the draw on what the run produced.
func (r *Result) fairness(ctx context.Context, e *admission.Engine, id string, visitors []*visitor, onSale time.Time) {
	var arrival, number []int
	type drawn struct{ tranche, num int }
	var all []drawn
	for _, v := range visitors {
		if v.ticket.Number == 0 {
			continue
		}
		all = append(all, drawn{v.ticket.Tranche, int(v.ticket.Number)})
		if v.ticket.Tranche == 0 {
			arrival = append(arrival, v.i)
			number = append(number, int(v.ticket.Number))
		}
	}
	r.Fairness.Prequeue = len(arrival)
	r.Fairness.Spearman = spearman(arrival, number)
	slices.SortFunc(all, func(a, b drawn) int { return a.num - b.num })
	r.Fairness.TrancheOrderKept = slices.IsSortedFunc(all, func(a, b drawn) int { return a.tranche - b.tranche })
	// The published audit of the pre-queue: it checks, and every
	// pre-queue visitor's hash is at their number.
	a, err := e.Audit(ctx, id, admission.PublicLane, 0, 0, math.MaxInt32)
	if err == nil && a.Drawn {
		ok := admission.CheckAudit(a.Commitment, a.Seed, a.Hashes)
		for _, v := range visitors {
			if v.ticket.Tranche == 0 && v.ticket.Number != 0 {
				i := int(v.ticket.Number - a.First)
				if i < 0 || i >= len(a.Hashes) || a.Hashes[i] != admission.VisitorHash(v.ticket.Visitor) {
					ok = false
				}
			}
		}
		r.Fairness.AuditRecomputes = ok
	}
}

// spearman is the rank correlation of two equally long samples without ties.
func spearman(x, y []int) float64 {
	n := len(x)
	if n < 3 {
		return math.NaN()
	}
	rank := func(v []int) []float64 {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		sort.Slice(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
		r := make([]float64, n)
		for pos, i := range idx {
			r[i] = float64(pos)
		}
		return r
	}
	rx, ry := rank(x), rank(y)
	var d2 float64
	for i := range rx {
		d := rx[i] - ry[i]
		d2 += d * d
	}
	fn := float64(n)
	return 1 - 6*d2/(fn*(fn*fn-1))
}

// Report writes the result for people.
func (r *Result) Report(w io.Writer) {
	fmt.Fprintf(w, "simulation: seed %d, %s after the queue opens (on-sale at +%s), %d arrivals, simulated in %s\n",
		r.Config.Seed, r.Config.Duration, r.Config.PrequeueFor, r.Joined, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "admitted %d, gave up while waiting %d\n\n", r.Admitted, r.Gone)
	fmt.Fprintln(w, "time    capacity/min  admitted/min  completed/min  errors  waiting  limit  active  pending  no-show")
	for _, win := range r.Windows {
		fmt.Fprintf(w, "%6s  %12.0f  %12.0f  %13.0f  %5.1f%%  %7d  %5d  %6d  %7d  %6.0f%%\n", fmtOffset(win.At), win.Capacity,
			win.Admitted, win.Completed, 100*win.ErrorRate, win.Waiting, win.Limit, win.Active, win.Pending, 100*win.NoShow)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "convergence: admission over sliding 30 s windows against capacity (target: within ±15 % within 30 s of a change)")
	for _, c := range r.Changes {
		settled := "never"
		if c.Settled >= 0 {
			settled = c.Settled.String()
		}
		fmt.Fprintf(w, "  at %s: %.0f → %.0f visitors/min: the first window within ±15%% starts %s after the change %s; from there the mean is %.0f%% of capacity and %.0f%% of windows are within ±15%%\n",
			fmtOffset(c.At), c.From, c.To, settled, verdict(c.Settled >= 0 && c.Settled <= 30*time.Second),
			100*c.Mean, 100*c.InBand)
	}
	fmt.Fprintf(w, "origin error rate once settled: %.2f%% (target < 1%%) %s\n\n", 100*r.ErrorRateConverged,
		verdict(r.ErrorRateConverged < 0.01))
	if r.ExpectedRate > 0 {
		fmt.Fprintf(w, "ETAs before the rate is measured come from controller.expected_rate = %.0f visitors/min\n", r.ExpectedRate)
	} else {
		fmt.Fprintln(w, "ETAs before the rate is measured come from the pace so far, or initial_active over session_duration (no controller.expected_rate)")
	}
	for _, h := range []struct {
		name string
		h    Honesty
	}{
		{"ETA shown at join, whole sale", r.ETAAtJoin},
		{"ETA shown at join, warm-up (joined in the pre-queue or the sale's first 2 min)", r.ETAWarmup},
		{"ETA shown at join, the sale's first 2 min only", r.ETASaleStart},
		{"ETA shown at join, after the warm-up", r.ETAAfterWarmup},
		{"first ETA shown", r.ETAFirstShown},
	} {
		if h.h.Shown == 0 {
			fmt.Fprintf(w, "%s: n/a (no visitor shown one was admitted within the run)\n", h.name)
			continue
		}
		steady := fmt.Sprintf("%.2f over %d (target 0.8–1.2) %s", h.h.SteadyMedianRatio, h.h.SteadyCount,
			verdict(h.h.SteadyMedianRatio >= 0.8 && h.h.SteadyMedianRatio <= 1.2))
		if h.h.SteadyCount == 0 {
			steady = "n/a (no wait fell within one steady stretch)"
		}
		fmt.Fprintf(w, "%s: %d visitors; admitted by eta_high %.1f%% (target ≥ 90%%) %s; median actual/shown %.2f; in steady stretches %s\n",
			h.name, h.h.Shown, 100*h.h.WithinHigh, verdict(h.h.WithinHigh >= 0.9), h.h.MedianRatio, steady)
	}
	f := r.Fairness
	fmt.Fprintf(w, "\nfairness: pre-queue Spearman rho(arrival, number) = %+.4f over %d (target |rho| < 0.05) %s; tranche order kept %v; audit recomputes %v\n",
		f.Spearman, f.Prequeue, verdict(math.Abs(f.Spearman) < 0.05), f.TrancheOrderKept, f.AuditRecomputes)
}

func fmtOffset(d time.Duration) string {
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}
