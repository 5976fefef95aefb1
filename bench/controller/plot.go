package main

import (
	"fmt"
	"html"
	"math"
	"os"
	"strings"

	"github.com/waitroom/waitroom/admission/sim/figures"
)

// plotSeries is one line of the plot.
type plotSeries struct {
	name, color string
	right       bool // on the right-hand axis (ms) rather than the left (visitors, %)
	get         func(figures.Row) float64
}

// writeSVG draws a run's limit, active shoppers, utilisation and origin
// p95 over time as an SVG image (which any browser opens): the left axis
// counts visitors (and utilisation in %), the right one milliseconds. The
// brown-out is shaded.
func writeSVG(path, title string, rows []figures.Row, s figures.Scenario) error {
	const w, h, ml, mr, mt, mb = 960.0, 420.0, 50.0, 60.0, 30.0, 40.0
	series := []plotSeries{
		{"limit", "#d62728", false, func(r figures.Row) float64 { return r.Limit }},
		{"active shoppers", "#1f77b4", false, func(r figures.Row) float64 { return float64(r.Active) }},
		{"utilisation %", "#2ca02c", false, func(r figures.Row) float64 { return 100 * r.Util() }},
		{"origin p95 ms", "#ff7f0e", true, func(r figures.Row) float64 { return r.P95 }},
	}
	var maxL, maxR float64 = 100, 4 * s.BaseMS
	for _, r := range rows {
		for _, ps := range series {
			v := ps.get(r)
			if ps.name == "limit" && v >= 100_000 {
				continue // a pinned limit is off the chart
			}
			if ps.right {
				maxR = max(maxR, v)
			} else {
				maxL = max(maxL, v)
			}
		}
	}
	maxL, maxR = math.Ceil(maxL/20)*20, math.Ceil(maxR/200)*200 // round ticks
	n := max(len(rows), 2)
	x := func(t int) float64 { return ml + (w-ml-mr)*float64(t)/float64(n-1) }
	y := func(v, top float64) float64 { return h - mb - (h-mt-mb)*min(max(v, 0), top)/top }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%.0f" y="18">%s</text>`+"\n", ml, html.EscapeString(title))
	if s.BrownEnd > s.BrownStart && s.BrownStart < n {
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="#eee"/>`+"\n",
			x(s.BrownStart), mt, x(min(s.BrownEnd, n-1))-x(s.BrownStart), h-mt-mb)
	}
	for i := 0; i <= 4; i++ {
		yy := y(maxL*float64(i)/4, maxL)
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ccc"/>`, ml, w-mr, yy, yy)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end">%.0f</text>`, ml-4, yy+4, maxL*float64(i)/4)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f">%.0f ms</text>`+"\n", w-mr+4, yy+4, maxR*float64(i)/4)
	}
	yy := y(2*s.BaseMS, maxR) // the overload line: 2 × base latency
	fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ff7f0e" stroke-dasharray="4 4"/>`+"\n", ml, w-mr, yy, yy)
	for t := 0; t < n; t += 10 {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%ds</text>`, x(t), h-mb+16, t)
	}
	for i, ps := range series {
		var pts []string
		for _, r := range rows {
			v := ps.get(r)
			if v < 0 || ps.name == "limit" && v >= 100_000 {
				continue
			}
			top := maxL
			if ps.right {
				top = maxR
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(r.T), y(v, top)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", ps.color, strings.Join(pts, " "))
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" fill="%s">%s</text>`+"\n", ml+10+float64(i)*150, h-6, ps.color, ps.name)
	}
	b.WriteString("</svg>\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
