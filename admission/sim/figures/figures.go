package figures

import (
	"math"
	"slices"
)

// Row is one second of a run after the on-sale (T0): the origin's figures,
// the crowd's and the waitroom's. A Row is a plain value.
type Row struct {
	T        int     // seconds after T0: the row covers [T, T+1)
	Capacity float64 // mean slots on offer
	Busy     float64 // mean slots in use
	Done     int     // pages answered 200
	Rejected int     // answered 503
	MaxQueue int     // the longest the origin's line was
	P50, P95 float64 // ms, arrival to answer, of the pages answered in the second (0: none)
	Admitted int     // shoppers told "admitted"
	Finished int     // checkouts done
	Active   int     // shoppers between their pass and their checkout (sampled mid-second)
	Limit    float64 // the controller's limit (sampled mid-second); -1 unknown
	Serving  float64 // the waitroom's serving counter (sampled mid-second); -1 unknown
	Passes   float64 // passes the waitroom issued so far (sampled mid-second); -1 unknown
}

// Util is the share of the slots on offer that were busy.
func (r Row) Util() float64 {
	if r.Capacity <= 0 {
		return 0
	}
	return r.Busy / r.Capacity
}

// Scenario is what the figures are measured against, in seconds after T0.
type Scenario struct {
	Capacity             int     // full capacity, slots
	BaseMS               float64 // base latency, ms
	BrownStart, BrownEnd int     // 0, 0: no brown-out
	Settle               int     // seconds after the first admission before "settled"
	SettleAfterBrown     int     // seconds after the restore that are not "settled" either
}

// Thresholds of the targets.
const (
	// FillShare is "fills the origin": utilisation from here on.
	FillShare = 0.85
	// OverloadMult: a second whose p95 is above OverloadMult × the base
	// latency is overloaded.
	OverloadMult = 2.0
	// RecoverRun: an overload in the brown-out's last RecoverRun seconds
	// is no recovery.
	RecoverRun = 3
)

// Figures are one run's results. Times are seconds; +Inf is "never
// reached", NaN "not applicable" (no brown-out, or the demand ended
// before it did).
type Figures struct {
	Convergence     float64 // first admission to the end of the first second at ≥ 85 % utilisation
	FirstMinuteUtil float64 // mean utilisation over the minute after the first admission
	SettledUtil     float64
	SettledOver     float64 // share of settled seconds overloaded
	Settled503      float64
	OverShare       float64 // share of seconds overloaded, first to last admission
	OverSeconds     float64
	Rejected        float64 // 503s of the origin, all run
	BrownRecover    float64 // capacity drop to the end of its last overloaded second
	BrownUtil       float64 // mean utilisation of the reduced capacity during the brown-out
	Restore         float64 // capacity restored to ≥ 85 % of full capacity in use
	Completions     float64 // checkouts done within the run
	LimitSwing      float64 // largest deviation of the limit from its mean, settled, as a share
}

// Overloaded says whether a second was over the line: its p95 above
// OverloadMult × base, or 503s answered.
func (s Scenario) Overloaded(r Row) bool {
	return r.P95 > OverloadMult*s.BaseMS || r.Rejected > 0
}

// Compute measures rows; firstAdmit and lastAdmit are the first and last
// admission in seconds after T0 (NaN: nobody was admitted). The demand
// lasts from the first admission to the last, or to the last second with
// a line at the origin if later: once nobody is left to admit and the
// line is gone, utilisation falls whatever admission does.
func (s Scenario) Compute(rows []Row, firstAdmit, lastAdmit float64, completions int) Figures {
	nan := math.NaN()
	f := Figures{Convergence: math.Inf(1), FirstMinuteUtil: nan, SettledUtil: nan, SettledOver: nan, Settled503: nan,
		OverShare: nan, BrownRecover: nan, BrownUtil: nan, Restore: nan, LimitSwing: nan, Completions: float64(completions)}
	for _, r := range rows {
		f.Rejected += float64(r.Rejected)
	}
	if math.IsNaN(firstAdmit) || len(rows) == 0 {
		return f
	}
	// The demand lasts while visitors are being admitted or the origin
	// has a line: [first, end).
	first, end := int(firstAdmit), int(lastAdmit)+1
	for i := len(rows) - 1; i >= end; i-- {
		if rows[i].MaxQueue > 0 {
			end = i + 1
			break
		}
	}
	end = min(end, len(rows))
	for i := first; i < len(rows); i++ {
		if rows[i].Util() >= FillShare {
			f.Convergence = float64(i+1) - firstAdmit
			break
		}
	}
	f.FirstMinuteUtil = mean(rows, first, min(end, first+60), Row.Util)

	brown := s.BrownEnd > s.BrownStart
	var settled []Row
	over, n := 0, 0
	for i := first; i < end; i++ {
		if s.Overloaded(rows[i]) {
			over++
		}
		n++
		if i < first+s.Settle || brown && i >= s.BrownStart && i < s.BrownEnd+s.SettleAfterBrown {
			continue
		}
		settled = append(settled, rows[i])
	}
	f.OverSeconds = float64(over)
	if n > 0 {
		f.OverShare = float64(over) / float64(n)
	}
	if len(settled) > 0 {
		f.SettledUtil = mean(settled, 0, len(settled), Row.Util)
		so, s503 := 0, 0
		for _, r := range settled {
			if s.Overloaded(r) {
				so++
			}
			s503 += r.Rejected
		}
		f.SettledOver = float64(so) / float64(len(settled))
		f.Settled503 = float64(s503)
		f.LimitSwing = swing(settled)
	}
	if brown && end >= s.BrownEnd {
		// Back under for good: from the drop to the end of the last
		// overloaded second of the brown-out; never when one of its last
		// RecoverRun seconds is still overloaded.
		f.BrownRecover = 0
		for i := s.BrownEnd - 1; i >= s.BrownStart; i-- {
			if s.Overloaded(rows[i]) {
				f.BrownRecover = float64(i + 1 - s.BrownStart)
				if i >= s.BrownEnd-RecoverRun {
					f.BrownRecover = math.Inf(1)
				}
				break
			}
		}
		f.BrownUtil = mean(rows, s.BrownStart, s.BrownEnd, Row.Util)
	}
	if brown && end > s.BrownEnd {
		f.Restore = math.Inf(1)
		for i := s.BrownEnd; i < end; i++ {
			if rows[i].Busy >= FillShare*float64(s.Capacity) {
				f.Restore = float64(i + 1 - s.BrownEnd)
				break
			}
		}
	}
	return f
}

// mean is the mean of f over rows[from:to] (NaN when empty).
func mean(rows []Row, from, to int, f func(Row) float64) float64 {
	if to <= from {
		return math.NaN()
	}
	var sum float64
	for _, r := range rows[from:to] {
		sum += f(r)
	}
	return sum / float64(to-from)
}

// swing is the largest deviation of the known limits from their mean, as
// a share of it.
func swing(rows []Row) float64 {
	var sum float64
	var n int
	for _, r := range rows {
		if r.Limit > 0 {
			sum += r.Limit
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	m := sum / float64(n)
	var dev float64
	for _, r := range rows {
		if r.Limit > 0 {
			dev = max(dev, math.Abs(r.Limit-m)/m)
		}
	}
	return dev
}

// Quantile is the q-quantile of v by the nearest rank (0 of nothing); v
// is left as it is. The origin's per-second p50 and p95 are computed with
// it, in the real benchmark and in the simulation alike.
func Quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// Median is the median of v leaving NaN ("not applicable") values out
// (the mean of the two middle values when their number is even); NaN when
// nothing is left.
func Median(v []float64) float64 {
	s := slices.DeleteFunc(slices.Clone(v), math.IsNaN)
	slices.Sort(s)
	switch n := len(s); {
	case n == 0:
		return math.NaN()
	case n%2 == 0:
		return (s[n/2-1] + s[n/2]) / 2
	default:
		return s[n/2]
	}
}
