package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// httpReport is what `waitroom-load http` measured, printed as text and
// written as JSON with -json.
type httpReport struct {
	Targets  []string `json:"targets"`
	Balance  string   `json:"balance"`
	Visitors int      `json:"visitors"`
	WallMS   int64    `json:"wall_ms"`

	Challenges  int64 `json:"challenges"`
	Solved      int64 `json:"pow_solved"`
	JoinTries   int64 `json:"join_tries"`
	Joins       int64 `json:"joins"` // answered 2xx: acknowledged
	JoinRefused int64 `json:"joins_refused"`
	Polls       int64 `json:"polls"`
	PollErrors  int64 `json:"poll_errors"`
	Admitted    int64 `json:"admitted"`
	OriginOK    int64 `json:"origin_pages"`
	Bounced     int64 `json:"bounced"`
	Holds       int64 `json:"holds"`
	Confirms    int64 `json:"confirms"`
	SoldOut     int64 `json:"sold_out"`
	BuyErrors   int64 `json:"buy_errors"`
	Completes   int64 `json:"completes"`
	GaveUp      int64 `json:"gave_up"`
	Retried503  int64 `json:"retried_5xx"`
	Retried429  int64 `json:"retried_429"`

	JoinsPerSec     float64 `json:"joins_per_s"`      // over the joins' span
	PeakJoinsPerSec int     `json:"peak_joins_per_s"` // the busiest second
	PollsPerSec     float64 `json:"polls_per_s"`
	PeakPollsPerSec int     `json:"peak_polls_per_s"`
	AdmittedPerMin  float64 `json:"admitted_per_min"` // from the first admission to the last
	LongestGapMS    int64   `json:"longest_admission_gap_ms"`
	LongestGapAtMS  int64   `json:"longest_admission_gap_at_ms"` // its start, from the crowd's start

	ETAShown  int     `json:"eta_shown"`  // visitors shown an ETA whose eta_high has passed or who were admitted
	ETAHonest int     `json:"eta_honest"` // of them, admitted before eta_high
	ETAShare  float64 `json:"eta_share"`

	MaxActive       int   `json:"max_active"`        // the cap configured (-max-active; 0: unknown)
	CapSlack        int   `json:"cap_slack"`         // the stated bound over it: one tick's admissions
	OriginMaxActive int   `json:"origin_max_active"` // most visitors active at the origin at once (-1: not measured)
	CapExceeded     bool  `json:"cap_exceeded"`
	OriginPerSecond []int `json:"origin_per_second,omitempty"` // from the first visitor at the origin, OriginFromMS after the crowd's start
	OriginFromMS    int64 `json:"origin_from_ms"`

	Draws  drawCheck  `json:"draws"`
	Sales  *sellCheck `json:"sales,omitempty"`
	Errors []string   `json:"errors"`
}

// rate is events per second over their span, and the busiest second.
func rate(ts []time.Time) (float64, int) {
	if len(ts) == 0 {
		return 0, 0
	}
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	span := ts[len(ts)-1].Sub(ts[0]).Seconds()
	peak, n := 0, 0
	for i, j := 0, 0; j < len(ts); j++ {
		for ts[j].Sub(ts[i]) >= time.Second {
			i++
		}
		n = j - i + 1
		peak = max(peak, n)
	}
	if span < 1 {
		return float64(len(ts)), peak
	}
	return float64(len(ts)) / span, peak
}

// measure fills the report's figures from the crowd.
func (r *httpReport) measure(c *crowd, end time.Time) {
	r.Challenges, r.Solved, r.JoinTries, r.Joins = c.challenges.Load(), c.solved.Load(), c.joinTries.Load(), c.joins.Load()
	r.JoinRefused, r.Polls, r.PollErrors, r.Admitted = c.joinRefused.Load(), c.polls.Load(), c.pollErrors.Load(), c.admitted.Load()
	r.OriginOK, r.Bounced, r.Holds, r.Confirms = c.originOK.Load(), c.bounced.Load(), c.holds.Load(), c.confirms.Load()
	r.SoldOut, r.BuyErrors, r.Completes, r.GaveUp = c.soldOut.Load(), c.buyErrors.Load(), c.completes.Load(), c.gaveUp.Load()
	r.Retried503, r.Retried429 = c.retried503.Load(), c.retried429.Load()
	c.mu.Lock()
	defer c.mu.Unlock()
	r.JoinsPerSec, r.PeakJoinsPerSec = rate(c.joinAt)
	r.PollsPerSec, r.PeakPollsPerSec = rate(c.pollAt)
	var adm []time.Time
	for _, v := range c.visits {
		if !v.admittedAt.IsZero() {
			adm = append(adm, v.admittedAt)
		}
		if v.etaHigh < 0 {
			continue
		}
		due := v.etaFrom.Add(time.Duration(v.etaHigh) * time.Second)
		switch {
		case !v.admittedAt.IsZero():
			r.ETAShown++
			if !v.admittedAt.After(due) {
				r.ETAHonest++
			}
		case end.After(due):
			r.ETAShown++ // still waiting past the promise
		}
	}
	if r.ETAShown > 0 {
		r.ETAShare = float64(r.ETAHonest) / float64(r.ETAShown)
	}
	slices.SortFunc(adm, func(a, b time.Time) int { return a.Compare(b) })
	if len(adm) > 1 {
		r.AdmittedPerMin = float64(len(adm)) / adm[len(adm)-1].Sub(adm[0]).Minutes()
		for i := 1; i < len(adm); i++ {
			if g := adm[i].Sub(adm[i-1]); g.Milliseconds() > r.LongestGapMS {
				r.LongestGapMS, r.LongestGapAtMS = g.Milliseconds(), adm[i-1].Sub(c.started).Milliseconds()
			}
		}
	}
	r.Errors = c.errs.list()
}

// failures lists the invariants the run broke: acknowledged joins lost,
// seats sold twice, the cap exceeded beyond its stated bound.
func (r *httpReport) failures() []string {
	var out []string
	if r.Draws.Lost > 0 {
		out = append(out, fmt.Sprintf("%d acknowledged joins are missing from their draw", r.Draws.Lost))
	}
	if len(r.Draws.Unread) > 0 {
		out = append(out, fmt.Sprintf("%d draw audits could not be read", len(r.Draws.Unread)))
	}
	if r.Sales != nil {
		if n := r.Sales.SoldTwice + r.Sales.InTwoOrders; n > 0 {
			out = append(out, fmt.Sprintf("%d seats sold twice", n))
		}
		if r.Sales.NotSold > 0 {
			out = append(out, fmt.Sprintf("%d seats of acknowledged orders are not sold", r.Sales.NotSold))
		}
		if r.Sales.Err != "" {
			out = append(out, r.Sales.Err)
		}
	}
	if r.CapExceeded {
		out = append(out, fmt.Sprintf("the cap was exceeded: %d visitors active at the origin at once, max_active %d + %d (one tick's admissions)",
			r.OriginMaxActive, r.MaxActive, r.CapSlack))
	}
	return out
}

// print writes the report for people.
func (r *httpReport) print(w io.Writer) {
	fmt.Fprintf(w, "waitroom-load http: %d visitors over %d replica(s), %s balancing, %.1fs\n",
		r.Visitors, len(r.Targets), r.Balance, float64(r.WallMS)/1000)
	fmt.Fprintf(w, "joins:      %d acknowledged of %d tries (%d challenges, %d solved); %.1f joins/s, peak %d/s; %d refused\n",
		r.Joins, r.JoinTries, r.Challenges, r.Solved, r.JoinsPerSec, r.PeakJoinsPerSec, r.JoinRefused)
	fmt.Fprintf(w, "polls:      %d; %.1f polls/s, peak %d/s; %d failed\n", r.Polls, r.PollsPerSec, r.PeakPollsPerSec, r.PollErrors)
	fmt.Fprintf(w, "admitted:   %d; %.1f admitted/min; longest gap in admissions %.1fs (at %.1fs)\n",
		r.Admitted, r.AdmittedPerMin, float64(r.LongestGapMS)/1000, float64(r.LongestGapAtMS)/1000)
	fmt.Fprintf(w, "origin:     %d pages, %d sent back to the room, %d done (X-Waitroom-Complete)\n", r.OriginOK, r.Bounced, r.Completes)
	if r.Sales != nil {
		fmt.Fprintf(w, "purchases:  %d holds, %d confirmed, %d sold out, %d failed\n", r.Holds, r.Confirms, r.SoldOut, r.BuyErrors)
	}
	fmt.Fprintf(w, "retries:    %d after a 5xx, %d after a 429; %d visitors gave up\n", r.Retried503, r.Retried429, r.GaveUp)
	switch {
	case r.OriginMaxActive < 0:
		fmt.Fprintln(w, "cap held:   not measured (no -origin-stats)")
	case r.MaxActive == 0:
		fmt.Fprintf(w, "cap held:   at most %d visitors active at the origin at once (no -max-active to compare)\n", r.OriginMaxActive)
	default:
		verdict := "held"
		if r.CapExceeded {
			verdict = "EXCEEDED"
		}
		fmt.Fprintf(w, "cap held:   at most %d visitors active at the origin at once vs max_active %d (+%d, one tick's admissions): %s\n",
			r.OriginMaxActive, r.MaxActive, r.CapSlack, verdict)
	}
	fmt.Fprintf(w, "ETA honesty: %d of %d visitors shown an ETA admitted before their eta_high (%.1f%%)\n", r.ETAHonest, r.ETAShown, 100*r.ETAShare)
	d := r.Draws
	fmt.Fprintf(w, "acknowledged joins lost: %d of %d checked in %d draw(s) (%d entries; %d in tranches not drawn at the end)\n",
		d.Lost, d.Checked, d.Tranches, d.Drawn, d.Undrawn)
	if r.Sales != nil {
		s := r.Sales
		fmt.Fprintf(w, "seats sold twice: %d (%d audit entries replayed; %d seats in two acknowledged orders; %d seats of acknowledged orders not sold)\n",
			s.SoldTwice+s.InTwoOrders, s.Entries, s.InTwoOrders, s.NotSold)
		for _, e := range s.Examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	for _, u := range d.Unread {
		fmt.Fprintf(w, "  draw not read: %s\n", u)
	}
	if len(r.Errors) > 0 {
		fmt.Fprintf(w, "first errors:\n  %s\n", strings.Join(r.Errors, "\n  "))
	}
	if f := r.failures(); len(f) > 0 {
		fmt.Fprintf(w, "FAIL: %s\n", strings.Join(f, "; "))
	} else {
		fmt.Fprintln(w, "OK: no acknowledged join lost, no seat sold twice, the cap held")
	}
}
