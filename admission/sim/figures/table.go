package figures

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// Contender is one way of admitting and its results, one Figures per
// round: the controller (PerMin 0), or a fixed rate of PerMin visitors a
// minute (events[].caps.max_new_per_minute, the controller pinned out).
// It is not safe for concurrent use.
type Contender struct {
	Name    string
	PerMin  int
	Results []Figures
}

// Fixed tells whether c is a fixed rate.
func (c *Contender) Fixed() bool { return c.PerMin > 0 }

// Median is the median of one figure over c's rounds, "not applicable"
// (NaN) rounds left out.
func (c *Contender) Median(get func(Figures) float64) float64 {
	v := make([]float64, len(c.Results))
	for i, r := range c.Results {
		v[i] = get(r)
	}
	return Median(v)
}

// Line is one figure of the table: its name, how to read and print it,
// the finest difference it resolves (Resolution: 1 s for times, which
// come from per-second rows, 0.01 for shares, 1 for counts), and the
// issue's target for the controller (Pass nil: none).
type Line struct {
	Name       string
	Get        func(Figures) float64
	Format     func(float64) string
	Resolution float64
	Target     string
	Pass       func(float64) bool
}

// Lines are the figures of the table, with the targets of issue 15;
// noShow adds the no-show scenario's own targets.
func Lines(noShow bool) []Line {
	lines := []Line{
		{"convergence (1st admission → 85% util)", func(f Figures) float64 { return f.Convergence }, Secs, 1, "≤ 10s", func(v float64) bool { return v <= 10 }},
		{"utilisation, first minute", func(f Figures) float64 { return f.FirstMinuteUtil }, Share, 0.01, "", nil},
		{"settled utilisation", func(f Figures) float64 { return f.SettledUtil }, Share, 0.01, "≥ 95%", func(v float64) bool { return v >= 0.95 }},
		{"settled seconds overloaded", func(f Figures) float64 { return f.SettledOver }, Share, 0.01, "≤ 5%", func(v float64) bool { return v <= 0.05 }},
		{"settled 503s", func(f Figures) float64 { return f.Settled503 }, Count, 1, "0", func(v float64) bool { return v == 0 }},
		{"seconds overloaded (share)", func(f Figures) float64 { return f.OverShare }, Share, 0.01, "", nil},
		{"seconds overloaded", OverSeconds, Count, 1, "", nil},
		{"503s (all run)", func(f Figures) float64 { return f.Rejected }, Count, 1, "", nil},
		{"brown-out: back under 2× base", func(f Figures) float64 { return f.BrownRecover }, Secs, 1, "≤ 5s", func(v float64) bool { return v <= 5 }},
		{"brown-out: util of reduced capacity", func(f Figures) float64 { return f.BrownUtil }, Share, 0.01, "≥ 85%", func(v float64) bool { return v >= 0.85 }},
		{"restore: back to 85% of full", func(f Figures) float64 { return f.Restore }, Secs, 1, "≤ 10s", func(v float64) bool { return v <= 10 }},
		{"completions (checkouts)", Completions, Count, 1, "", nil},
	}
	if noShow {
		lines = append(lines,
			Line{"no-shows: settled utilisation", func(f Figures) float64 { return f.SettledUtil }, Share, 0.01, "≥ 90%", func(v float64) bool { return v >= 0.90 }},
			Line{"no-shows: limit swing (settled)", func(f Figures) float64 { return f.LimitSwing }, func(v float64) string { return "±" + Share(v) }, 0.01, "≤ ±15%", func(v float64) bool { return v <= 0.15 }})
	}
	return lines
}

// Completions and OverSeconds read the two figures the controller is
// compared with the best fixed rate on.
func Completions(f Figures) float64 { return f.Completions }
func OverSeconds(f Figures) float64 { return f.OverSeconds }

// Targets of the comparison with the best fixed rate.
const (
	VersusCompletions = 1.0  // the controller completes at least this many times the best fixed rate's checkouts
	VersusFewerOver   = 10.0 // and has at least this many times fewer overloaded seconds
)

// Versus is the controller against the best fixed rate of a run: the one
// with the most completions (fewer overloaded seconds break a tie).
type Versus struct {
	Best *Contender
	// Completions is the controller's completions over the best's.
	Completions float64
	// FewerOver is the best's overloaded seconds over the controller's:
	// +Inf when the controller had none, NaN when neither had any.
	FewerOver float64
}

// Pass tells whether the controller meets both targets of the comparison.
func (v Versus) Pass() bool {
	return v.Completions >= VersusCompletions && (math.IsNaN(v.FewerOver) || v.FewerOver >= VersusFewerOver)
}

// Compare measures the controller of cs (the contender that is not a
// fixed rate) against the best fixed rate of cs; false when cs lacks
// either.
func Compare(cs []*Contender) (Versus, bool) {
	var ctl, best *Contender
	for _, c := range cs {
		switch {
		case !c.Fixed():
			ctl = c
		case best == nil || c.Median(Completions) > best.Median(Completions) ||
			c.Median(Completions) == best.Median(Completions) && c.Median(OverSeconds) < best.Median(OverSeconds):
			best = c
		}
	}
	if ctl == nil || best == nil {
		return Versus{}, false
	}
	return Versus{Best: best, Completions: ctl.Median(Completions) / best.Median(Completions),
		FewerOver: best.Median(OverSeconds) / ctl.Median(OverSeconds)}, true
}

// TableOptions say how the table was produced.
type TableOptions struct {
	Rounds int           // rounds the medians are over
	NoShow bool          // the run had no-shows: their targets are shown too
	Settle time.Duration // what "settled" leaves out (for the legend)
}

// WriteTable prints every contender's medians, the controller's targets
// with PASS or MISS, and its ratios to the best fixed rate.
func WriteTable(w io.Writer, cs []*Contender, o TableOptions) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\nfigure (median of %d)", o.Rounds)
	var ctl *Contender
	for _, c := range cs {
		fmt.Fprintf(tw, "\t%s", c.Name)
		if !c.Fixed() {
			ctl = c
		}
	}
	if ctl != nil {
		fmt.Fprint(tw, "\ttarget\tverdict")
	}
	fmt.Fprintln(tw, "\t")
	for _, l := range Lines(o.NoShow) {
		fmt.Fprint(tw, l.Name)
		for _, c := range cs {
			fmt.Fprintf(tw, "\t%s", l.Format(c.Median(l.Get)))
		}
		switch {
		case ctl != nil && l.Pass != nil:
			v := ctl.Median(l.Get)
			verdict := "MISS"
			if math.IsNaN(v) {
				verdict = "n/a"
			} else if l.Pass(v) {
				verdict = "PASS"
			}
			fmt.Fprintf(tw, "\t%s\t%s", l.Target, verdict)
		case ctl != nil:
			fmt.Fprint(tw, "\t-\t-")
		}
		fmt.Fprintln(tw, "\t") // every line the same cells: tabwriter aligns a block of them
	}
	if v, ok := Compare(cs); ok {
		pad := strings.Repeat("\t", len(cs))
		fmt.Fprintf(tw, "controller / best fixed (%s): completions\t%.2f×%s≥ %.1f×\t%s\t\n", v.Best.Name, v.Completions, pad,
			VersusCompletions, verdict(v.Completions >= VersusCompletions))
		if math.IsNaN(v.FewerOver) { // neither was ever overloaded
			fmt.Fprintf(tw, "best fixed / controller: overloaded seconds\tboth 0%s≥ %.0f×\tn/a\t\n", pad, VersusFewerOver)
		} else {
			fmt.Fprintf(tw, "best fixed / controller: overloaded seconds\t%.1f×%s≥ %.0f×\t%s\t\n", v.FewerOver, pad,
				VersusFewerOver, verdict(v.FewerOver >= VersusFewerOver))
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "\noverloaded: a second whose origin p95 is above 2× the base latency, or with 503s; settled: from",
		o.Settle, "after the first admission to the last, less the brown-out and", o.Settle, "after it; utilisation: busy slots / slots on offer.")
}

// WriteCSV writes the per-second series.
func WriteCSV(w io.Writer, rows []Row) error {
	var b strings.Builder
	b.WriteString("t,capacity,busy,utilisation,done,rejected_503,max_queue,p50_ms,p95_ms,admitted,checkouts,active,limit,serving,passes_issued\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%d,%.2f,%.2f,%.3f,%d,%d,%d,%.1f,%.1f,%d,%d,%d,%.0f,%.0f,%.0f\n", r.T, r.Capacity, r.Busy, r.Util(), r.Done,
			r.Rejected, r.MaxQueue, r.P50, r.P95, r.Admitted, r.Finished, r.Active, r.Limit, r.Serving, r.Passes)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Secs prints a time in seconds ("never" for +Inf, "n/a" for NaN).
func Secs(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 1):
		return "never"
	}
	return fmt.Sprintf("%.0fs", v)
}

// Share prints a share as a percentage ("n/a" for NaN).
func Share(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}

// Count prints a count ("n/a" for NaN).
func Count(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", v)
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}
