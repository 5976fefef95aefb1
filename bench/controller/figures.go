package main

import (
	"math"
)

// row is one second of a run after T0: the origin's figures, the crowd's
// and the waitroom's.
type row struct {
	T        int
	Capacity float64 // mean slots on offer
	Busy     float64 // mean slots in use
	Done     int     // pages answered 200
	Rejected int     // answered 503
	MaxQueue int
	P50, P95 float64 // ms, of the pages answered in the second
	Admitted int     // shoppers told "admitted"
	Finished int     // checkouts done
	Active   int     // shoppers between their pass and their checkout (sampled)
	Limit    float64 // the controller's limit (sampled); -1 unknown
	Serving  float64 // the waitroom's serving counter (sampled); -1 unknown
	Passes   float64 // passes the waitroom issued so far (sampled); -1 unknown
}

// util is the share of the slots on offer that were busy.
func (r row) util() float64 {
	if r.Capacity <= 0 {
		return 0
	}
	return r.Busy / r.Capacity
}

// scenario is what the figures are measured against, in seconds after T0.
type scenario struct {
	Capacity             int     // full capacity
	BaseMS               float64 // base latency, ms
	BrownStart, BrownEnd int     // 0, 0: no brown-out
	Settle               int     // seconds after the first admission before "settled"
	SettleAfterBrown     int     // seconds after the restore that are not "settled" either
}

// Thresholds of the targets.
const (
	fillShare    = 0.85 // "fills the origin": utilisation from here on
	overloadMult = 2.0  // a second whose p95 is above 2 × base latency is overloaded
	recoverRun   = 3    // an overload in the brown-out's last seconds is no recovery
)

// figures are one run's results. Times are seconds; +Inf is "never
// reached", NaN "not applicable" (no brown-out, or the demand ended
// before it did).
type figures struct {
	Convergence     float64 // first admission to the first second at ≥ 85 % utilisation
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

// overloaded says whether a second was over the line: its p95 above
// 2 × base, or 503s answered.
func (s scenario) overloaded(r row) bool {
	return r.P95 > overloadMult*s.BaseMS || r.Rejected > 0
}

// compute measures rows; firstAdmit and lastAdmit are the first and last
// admission in seconds after T0 (NaN: nobody was admitted). The demand
// lasts from the first admission to the last, or to the last second with
// a line at the origin if later: once nobody is left to admit and the
// line is gone, utilisation falls whatever admission does.
func (s scenario) compute(rows []row, firstAdmit, lastAdmit float64, completions int) figures {
	nan := math.NaN()
	f := figures{Convergence: math.Inf(1), FirstMinuteUtil: nan, SettledUtil: nan, SettledOver: nan, Settled503: nan,
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
		if rows[i].util() >= fillShare {
			f.Convergence = float64(i+1) - firstAdmit
			break
		}
	}
	f.FirstMinuteUtil = mean(rows, first, min(end, first+60), row.util)

	brown := s.BrownEnd > s.BrownStart
	var settled []row
	over, n := 0, 0
	for i := first; i < end; i++ {
		if s.overloaded(rows[i]) {
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
		f.SettledUtil = mean(settled, 0, len(settled), row.util)
		so, s503 := 0, 0
		for _, r := range settled {
			if s.overloaded(r) {
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
		// recoverRun seconds is still overloaded.
		f.BrownRecover = 0
		for i := s.BrownEnd - 1; i >= s.BrownStart; i-- {
			if s.overloaded(rows[i]) {
				f.BrownRecover = float64(i + 1 - s.BrownStart)
				if i >= s.BrownEnd-recoverRun {
					f.BrownRecover = math.Inf(1)
				}
				break
			}
		}
		f.BrownUtil = mean(rows, s.BrownStart, s.BrownEnd, row.util)
	}
	if brown && end > s.BrownEnd {
		f.Restore = math.Inf(1)
		for i := s.BrownEnd; i < end; i++ {
			if rows[i].Busy >= fillShare*float64(s.Capacity) {
				f.Restore = float64(i + 1 - s.BrownEnd)
				break
			}
		}
	}
	return f
}

// mean is the mean of f over rows[from:to] (NaN when empty).
func mean(rows []row, from, to int, f func(row) float64) float64 {
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
func swing(rows []row) float64 {
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
