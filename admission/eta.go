package admission

import (
	"math"
	"slices"
	"time"
)

// DefaultRateWindow is the window of admission history an ETA is
// estimated from: several of the controller's cycles (a decrease, the
// drain, the regrowth), so that one lull or burst does not swing the ETA.
const DefaultRateWindow = 2 * time.Minute

// Tuning of the rate estimate and the ETA.
const (
	// rateMemory: the conservative rate looks back this many windows (10
	// minutes of a 2 minute window). An origin that was slower a few
	// minutes ago may well be again; a visitor who waits through that
	// should still be admitted by the High they were shown.
	rateMemory = 5
	// rateSubDivisions: the window is looked at through sliding
	// sub-windows of a sixth of its length (20 s of a 2 min window); the
	// spread of their rates is the spread of the ETA.
	rateSubDivisions = 6
	// rateMinSub bounds a sub-window from below.
	rateMinSub = 5 * time.Second
	// rateLowPct and rateHighPct are the percentiles of the sub-window
	// rates used as the conservative and the optimistic rate.
	rateLowPct  = 0.2
	rateHighPct = 0.8
	// rateMinLowShare keeps the conservative rate at no less than this
	// share of the mean (a window with long stops would otherwise give
	// no upper bound at all).
	rateMinLowShare = 0.25
	// rateSurgeEnd, rateCalmLast and rateCalmEarly tell when the opening
	// surge is over (see Rates).
	rateSurgeEnd  = 0.5
	rateCalmLast  = 1.25
	rateCalmEarly = 1.5
	// rateEarlySpread widens the range by this factor either way while
	// the history is shorter than one sub-window (pauses in admission
	// as long as half the history).
	rateEarlySpread = 2
	// etaHighFactor and etaHighSlack make High: the wait at the
	// conservative rate, times the factor, plus the slack (a controller
	// cycle's pause, the last poll's delay).
	etaHighFactor = 1.3
	etaHighSlack  = 15.0 // seconds
	// etaLowFactor makes Low: the wait at the optimistic rate, times it.
	etaLowFactor = 0.9
	// etaMaxSeconds bounds every ETA (30 days).
	etaMaxSeconds = 30 * 24 * 3600
)

// The prior: before the admission rate is measured (the first minutes of
// a sale, see RateEstimator.Rates), ETAs come from the rate the operator
// expects (ControllerConfig.ExpectedRate); without one, from the mean
// pace of the lane's serving counter since admission started (once it
// spans priorMinSpan; the opening surge makes it optimistic, which the
// wide range covers) or, while the counter has not moved (threshold
// mode's first queue), the admissions of the last minute, pass-through
// included; before that, from the controller's limit over the
// session duration (each admitted visitor holding their place in the
// limit for a whole session: the slowest pace the limit allows). Each is
// bounded by max_new_per_minute. Its range is wider than a measured
// one's: the conservative rate is priorLowShare of it, the optimistic
// one priorHighShare times it.
const (
	priorLowShare  = 0.5
	priorHighShare = 2.0
	priorMinSpan   = 10 * time.Second
)

// priorRates are the lane's rates before any are measured (see above);
// observed is the lane's mean pace so far (0: none yet).
func (l *lane) priorRates(observed float64) (lo, mid, hi float64) {
	ev := l.event
	mid = ev.conf().Controller.ExpectedRate / 60
	if !(mid > 0) && observed > 0 {
		mid = observed
	} else {
		if !(mid > 0) {
			limit := float64(ev.figures.Load().Limit)
			if limit <= 0 {
				limit = float64(ev.ctrl.cfg.InitialActive)
			}
			mid = limit / ev.conf().SessionDuration.Seconds()
		}
		mid *= l.shareOfAdmissions()
	}
	if mn := ev.caps().MaxNewPerMinute; mn > 0 {
		mid = min(mid, float64(mn)/60)
	}
	if !(mid > 0) || math.IsInf(mid, 0) {
		return 0, 0, 0
	}
	return mid * priorLowShare, mid, mid * priorHighShare
}

// shareOfAdmissions is the lane's share of the event's admissions when
// every lane has visitors waiting: all of them for a priority lane (it is
// served first), its share among the others for the rest.
func (l *lane) shareOfAdmissions() float64 {
	if l.cfg.Priority {
		return 1
	}
	total := 0.0
	for _, o := range l.event.lanes {
		if !o.cfg.Priority {
			total += o.cfg.Share
		}
	}
	if !(total > 0) {
		return 1
	}
	return l.cfg.Share / total
}

// Mean is the mean rate of advance over the whole history kept (counter
// steps per second), or 0 while it spans less than min.
func (r *RateEstimator) Mean(min time.Duration) float64 {
	n := r.samples.len()
	if n < 2 {
		return 0
	}
	first, last := r.samples.at(0), r.samples.at(n-1)
	if last.at-first.at < int64(min) || last.cum <= first.cum {
		return 0
	}
	return float64(last.cum-first.cum) / rateSeconds(last.at-first.at)
}

// ETA is an estimate of how long until a visitor is admitted, in seconds,
// coarse-grained: 15 s steps under 2 minutes, 1 minute steps under 15
// minutes, 5 minute steps beyond. Low ≤ Seconds ≤ High; all three are -1
// when unknown (nothing admitted yet).
type ETA struct {
	Seconds, Low, High int
}

// etaUnknown is the ETA while there is no rate to estimate from.
var etaUnknown = ETA{Seconds: -1, Low: -1, High: -1}

// Known reports whether the ETA has a value.
func (e ETA) Known() bool { return e.Seconds >= 0 }

// RateEstimator estimates the rate at which a serving counter advances
// from its advances over a sliding window. Observe it at every tick while
// the queue is admitting, also when the counter did not move: the ticks
// where nobody got in are what keeps the estimate honest.
//
// The first minutes of a sale are not a guide to the rest: the controller
// first fills the origin up to what it takes, and the counter runs ahead
// of the pace it can keep (far ahead when visitors stay long). Rates
// reports no rate until that opening surge is over (see Rates).
//
// A RateEstimator is not safe for concurrent use; status polls should
// read rates published by its owner (EstimateETA takes them as numbers).
type RateEstimator struct {
	window, sub int64 // ns
	memory      int64 // ns, the history kept
	samples     ring[rateSample]
	total       uint64    // counter advance since the first observation
	settled     bool      // the opening surge is over
	scratch     []float64 // sub-window rates, reused
}

// NewRateEstimator returns an estimator over the given window
// (DefaultRateWindow when ≤ 0).
func NewRateEstimator(window time.Duration) *RateEstimator {
	if window <= 0 {
		window = DefaultRateWindow
	}
	sub := max(window/rateSubDivisions, min(rateMinSub, window))
	return &RateEstimator{window: int64(window), sub: int64(sub), memory: rateMemory * int64(window)}
}

// Reset forgets every observation, as if new: for when admission starts
// again after a pause, which says nothing about the pace to come.
func (r *RateEstimator) Reset() {
	r.samples.clear()
	r.total = 0
	r.settled = false
}

// Observe notes that the serving counter rose by advanced since the last
// observation (0 included). The first observation only starts the clock:
// the interval its advance covers is unknown. An observation at or before
// the last one's time is added to the last one.
func (r *RateEstimator) Observe(now time.Time, advanced uint64) {
	t := now.UnixNano()
	r.total += advanced
	if r.samples.len() > 0 {
		if last := r.samples.at(r.samples.len() - 1); t <= last.at {
			r.samples.setLast(rateSample{at: last.at, cum: r.total})
			return
		}
	}
	r.samples.push(rateSample{at: t, cum: r.total})
	// Keep one sample at or before the memory's start, as its anchor.
	for r.samples.len() > 2 && r.samples.at(1).at <= t-r.memory {
		r.samples.pop()
	}
}

// Rates returns the rate of advance in visitors (counter steps) per
// second: mid is the mean over the window (the best predictor of a long
// wait, also when admissions come in bursts); high is the 80th percentile
// of the rates over sliding sub-windows of the window, low the 20th
// percentile over the longer memory (rateMemory windows). A sub-window is
// a sixth of the window, or twice the longest pause in admissions if that
// is longer (up to the window): over less, a rate measures where in the
// controller's cycle it was taken rather than the pace. Always
// low ≤ mid ≤ high and low ≥ mid/4.
//
// All are 0 (no rate) while nothing was admitted within the window, and
// until the opening surge is over: until the rate has fallen below half
// its peak (the surge ended: the history up to the last sub-window at
// half the peak or more is forgotten, and what follows must span half a
// window), or the history spans a window without a surge in it (the last
// sub-window's rate at most 1.25 times the mean, the first half's at most
// 1.5 times the second's), or it spans the whole memory.
func (r *RateEstimator) Rates() (low, mid, high float64) {
	if r.samples.len() < 2 {
		return 0, 0, 0
	}
	if !r.settled && !r.settle(r.subRates(r.sub)) {
		return 0, 0, 0
	}
	if r.samples.at(r.samples.len()-1).at-r.samples.at(0).at < r.window/2 {
		// Just past the surge: what there is is mostly the pause that
		// followed it.
		return 0, 0, 0
	}
	// A sub-window shorter than the pauses between admissions says
	// nothing about the pace: stretch it to twice the longest pause.
	sub := min(max(r.sub, 2*r.longestPause()), r.window)
	rates := r.subRates(sub)
	n := r.samples.len()
	last := r.samples.at(n - 1)
	// The window's anchor: the last sample at or before its start.
	w := 0
	for w+1 < n-1 && r.samples.at(w+1).at <= last.at-r.window {
		w++
	}
	first := r.samples.at(w)
	mid = float64(last.cum-first.cum) / rateSeconds(last.at-first.at)
	if !(mid > 0) {
		return 0, 0, 0
	}
	if len(rates) == 0 {
		return mid / rateEarlySpread, mid, mid * rateEarlySpread
	}
	// The window's own sub-windows (those starting within it) are the
	// last ones.
	own := 0
	for b := n - 1; b > 0 && r.samples.at(b).at-sub >= first.at; b-- {
		own++
	}
	own = min(max(own, 1), len(rates))
	inWindow := rates[len(rates)-own:]
	slices.Sort(inWindow)
	high = max(ratePercentile(inWindow, rateHighPct), mid)
	slices.Sort(rates)
	low = min(ratePercentile(rates, rateLowPct), mid)
	return max(low, mid*rateMinLowShare), mid, high
}

// subRates computes into r.scratch the rates over the sliding
// sub-windows of length sub of the history, in the order they end.
func (r *RateEstimator) subRates(sub int64) []float64 {
	rates := r.scratch[:0]
	a := 0
	for b := 1; b < r.samples.len(); b++ {
		sb := r.samples.at(b)
		for a+1 < b && sb.at-r.samples.at(a+1).at >= sub {
			a++
		}
		if sa := r.samples.at(a); sb.at-sa.at >= sub {
			rates = append(rates, float64(sb.cum-sa.cum)/rateSeconds(sb.at-sa.at))
		}
	}
	r.scratch = rates
	return rates
}

// longestPause is the longest time in the history without an advance.
func (r *RateEstimator) longestPause() int64 {
	var longest int64
	prev := r.samples.at(0)
	for i := 1; i < r.samples.len(); i++ {
		if s := r.samples.at(i); s.cum != prev.cum {
			longest = max(longest, s.at-prev.at)
			prev = s
		}
	}
	return max(longest, r.samples.at(r.samples.len()-1).at-prev.at)
}

// settle decides whether the opening surge is over, given the sub-window
// rates of the history (see Rates).
func (r *RateEstimator) settle(rates []float64) bool {
	n := r.samples.len()
	first, last := r.samples.at(0), r.samples.at(n-1)
	span := last.at - first.at
	if span >= r.memory {
		r.settled = true
		return true
	}
	if span < 2*r.sub || len(rates) == 0 {
		return false
	}
	now, peak := rates[len(rates)-1], slices.Max(rates)
	if now < rateSurgeEnd*peak {
		// Forget the history up to the end of the last sub-window that
		// still ran at half the peak or more (rates[i] ends at sample
		// i+n-len(rates)).
		k := len(rates) - 1
		for k > 0 && rates[k] < rateSurgeEnd*peak {
			k--
		}
		for drop := k + n - len(rates); drop > 0; drop-- {
			r.samples.pop()
		}
		r.settled = true
		return true
	}
	if span < r.window {
		return false
	}
	// Calm: the last sub-window is not well above the mean (still
	// rising), and the first half did not run ahead of the second.
	h := 0
	for r.samples.at(h+1).at <= first.at+span/2 {
		h++
	}
	half := r.samples.at(h)
	mean := float64(last.cum-first.cum) / rateSeconds(span)
	early := float64(half.cum-first.cum) / rateSeconds(half.at-first.at)
	late := float64(last.cum-half.cum) / rateSeconds(last.at-half.at)
	r.settled = now <= rateCalmLast*mean && early <= rateCalmEarly*late
	return r.settled
}

// ratePercentile is the p-quantile of sorted values (nearest rank).
func ratePercentile(sorted []float64, p float64) float64 {
	return sorted[int(math.Round(p*float64(len(sorted)-1)))]
}

func rateSeconds(ns int64) float64 { return float64(ns) / float64(time.Second) }

// EstimateETA estimates when a visitor with ahead numbers before them is
// admitted, given wait, the time before admission can start for them
// (e.g. until their tranche is drawn), and the rates from Rates. Seconds
// uses the mean rate and is rounded to the nearest step (at least one
// step while anything is ahead); High uses the conservative rate with a
// margin and is rounded up; Low uses the optimistic rate and is rounded
// down. With no rate (mid ≤ 0) all three are -1. It allocates
// nothing: it runs on every status poll.
func EstimateETA(ahead float64, wait time.Duration, low, mid, high float64) ETA {
	if !(mid > 0) || math.IsInf(mid, 0) || math.IsNaN(ahead) {
		return etaUnknown
	}
	if !(low <= mid) {
		low = mid
	}
	low = max(low, mid*rateMinLowShare)
	if !(high >= mid) {
		high = mid
	}
	w := max(wait.Seconds(), 0)
	ahead = max(ahead, 0)
	if ahead == 0 && w == 0 {
		return ETA{}
	}
	e := ETA{
		Seconds: etaNearest(w + ahead/mid),
		Low:     etaDown(w + ahead/high*etaLowFactor),
		High:    etaUp(w + ahead/low*etaHighFactor + etaHighSlack),
	}
	if e.Seconds == 0 {
		e.Seconds = etaFirstStep
	}
	e.Low = min(e.Low, e.Seconds)
	e.High = max(e.High, e.Seconds)
	return e
}

// etaFirstStep is the smallest ETA shown while anything is ahead.
const etaFirstStep = 15

// etaStep is the rounding step for an ETA of x seconds.
func etaStep(x float64) float64 {
	switch {
	case x < 120:
		return etaFirstStep
	case x < 900:
		return 60
	}
	return 300
}

func etaNearest(x float64) int {
	x = min(x, etaMaxSeconds)
	s := etaStep(x)
	return int(math.Round(x/s) * s)
}

func etaDown(x float64) int {
	x = min(x, etaMaxSeconds)
	s := etaStep(x)
	return int(math.Floor(x/s) * s)
}

func etaUp(x float64) int {
	x = min(x, etaMaxSeconds)
	s := etaStep(x)
	return int(math.Ceil(x/s) * s)
}

// rateSample is the counter's total advance as observed at a time.
type rateSample struct {
	at  int64 // Unix ns
	cum uint64
}
