package main

import (
	"fmt"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/waitroom/waitroom/bench/internal/stats"
)

// median is the median of one figure over a contender's rounds, NaN
// ("not applicable") rounds left out.
func (c *contender) median(f func(figures) float64) float64 {
	var v []float64
	for _, r := range c.results {
		if x := f(r); !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	return stats.Median(v)
}

// line is one row of the table: a figure, how to print it, and the
// issue's target for the controller.
type line struct {
	name   string
	get    func(figures) float64
	format func(float64) string
	target string
	pass   func(float64) bool // nil: no target
}

func secs(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 1):
		return "never"
	}
	return fmt.Sprintf("%.0fs", v)
}

func share(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100*v)
}

func count(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", v)
}

// table prints every contender's medians, the controller's targets, and
// its ratios to the best fixed rate.
func (b *bench) table(cs []*contender) {
	lines := []line{
		{"convergence (1st admission → 85% util)", func(f figures) float64 { return f.Convergence }, secs, "≤ 10s", func(v float64) bool { return v <= 10 }},
		{"utilisation, first minute", func(f figures) float64 { return f.FirstMinuteUtil }, share, "", nil},
		{"settled utilisation", func(f figures) float64 { return f.SettledUtil }, share, "≥ 95%", func(v float64) bool { return v >= 0.95 }},
		{"settled seconds overloaded", func(f figures) float64 { return f.SettledOver }, share, "≤ 5%", func(v float64) bool { return v <= 0.05 }},
		{"settled 503s", func(f figures) float64 { return f.Settled503 }, count, "0", func(v float64) bool { return v == 0 }},
		{"seconds overloaded (share)", func(f figures) float64 { return f.OverShare }, share, "", nil},
		{"seconds overloaded", func(f figures) float64 { return f.OverSeconds }, count, "", nil},
		{"503s (all run)", func(f figures) float64 { return f.Rejected }, count, "", nil},
		{"brown-out: back under 2× base", func(f figures) float64 { return f.BrownRecover }, secs, "≤ 5s", func(v float64) bool { return v <= 5 }},
		{"brown-out: util of reduced capacity", func(f figures) float64 { return f.BrownUtil }, share, "≥ 85%", func(v float64) bool { return v >= 0.85 }},
		{"restore: back to 85% of full", func(f figures) float64 { return f.Restore }, secs, "≤ 10s", func(v float64) bool { return v <= 10 }},
		{"completions (checkouts)", func(f figures) float64 { return f.Completions }, count, "", nil},
	}
	if *noShow > 0 {
		lines = append(lines,
			line{"no-shows: settled utilisation", func(f figures) float64 { return f.SettledUtil }, share, "≥ 90%", func(v float64) bool { return v >= 0.90 }},
			line{"no-shows: limit swing (settled)", func(f figures) float64 { return f.LimitSwing }, func(v float64) string { return "±" + share(v) }, "≤ ±15%", func(v float64) bool { return v <= 0.15 }})
	}
	tw := tabwriter.NewWriter(b.out, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\nfigure (median of %d)", *rounds)
	var ctl *contender
	for _, c := range cs {
		fmt.Fprintf(tw, "\t%s", c.name)
		if c.perMin == 0 {
			ctl = c
		}
	}
	if ctl != nil {
		fmt.Fprint(tw, "\ttarget\tverdict")
	}
	fmt.Fprintln(tw, "\t")
	for _, l := range lines {
		fmt.Fprint(tw, l.name)
		for _, c := range cs {
			fmt.Fprintf(tw, "\t%s", l.format(c.median(l.get)))
		}
		switch {
		case ctl != nil && l.pass != nil:
			v := ctl.median(l.get)
			verdict := "MISS"
			if math.IsNaN(v) {
				verdict = "n/a"
			} else if l.pass(v) {
				verdict = "PASS"
			}
			fmt.Fprintf(tw, "\t%s\t%s", l.target, verdict)
		case ctl != nil:
			fmt.Fprint(tw, "\t-\t-")
		}
		fmt.Fprintln(tw, "\t") // every line the same cells: tabwriter aligns a block of them
	}
	var best *contender
	for _, c := range cs {
		if c.perMin == 0 {
			continue
		}
		if best == nil || c.median(completions) > best.median(completions) ||
			c.median(completions) == best.median(completions) && c.median(overSecs) < best.median(overSecs) {
			best = c
		}
	}
	if ctl != nil && best != nil {
		comp := ctl.median(completions) / best.median(completions)
		fewer := best.median(overSecs) / ctl.median(overSecs) // +Inf when the controller had none
		pad := strings.Repeat("\t", len(cs))
		fmt.Fprintf(tw, "controller / best fixed (%s): completions\t%.2f×%s≥ 1.0×\t%s\t\n", best.name, comp, pad, verdict(comp >= 1))
		if math.IsNaN(fewer) { // neither was ever overloaded
			fmt.Fprintf(tw, "best fixed / controller: overloaded seconds\tboth 0%s≥ 10×\tn/a\t\n", pad)
		} else {
			fmt.Fprintf(tw, "best fixed / controller: overloaded seconds\t%.1f×%s≥ 10×\t%s\t\n", fewer, pad, verdict(fewer >= 10))
		}
	}
	tw.Flush()
	fmt.Fprintln(b.out, "\noverloaded: a second whose origin p95 is above 2× the base latency, or with 503s; settled: from",
		*settle, "after the first admission to the last, less the brown-out and", *settle, "after it; utilisation: busy slots / slots on offer.")
}

func completions(f figures) float64 { return f.Completions }
func overSecs(f figures) float64    { return f.OverSeconds }

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}
