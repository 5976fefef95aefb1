package report

import (
	_ "embed"
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/admission"
)

//go:embed report.html.tmpl
var pageSource string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct": func(x float64) string {
		if x < 0 {
			return "n/a"
		}
		return strconv.FormatFloat(100*x, 'f', 1, 64) + " %"
	},
	"num":  func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) },
	"hhmm": func(t time.Time) string { return t.UTC().Format("15:04") },
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "none"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"seats": func(n int) string {
		if n < 0 {
			return "n/a"
		}
		return strconv.Itoa(n)
	},
}).Parse(pageSource))

// series is one line of a chart.
type series struct {
	name, color string
	values      []float64
}

// WriteHTML writes the report as one self-contained page: inline CSS,
// inline SVG charts, no script and nothing fetched.
func (r *Report) WriteHTML(w io.Writer) error {
	col := func(get func(m *admission.Minute) float64) []float64 {
		out := make([]float64, len(r.Minutes))
		for i := range r.Minutes {
			out[i] = get(&r.Minutes[i])
		}
		return out
	}
	charts := []template.HTML{
		r.chart("Arrivals and admissions per minute",
			series{"arrivals", "#1f77b4", col(func(m *admission.Minute) float64 { return float64(m.Arrivals) })},
			series{"admitted", "#2ca02c", col(func(m *admission.Minute) float64 { return float64(m.Admitted) })}),
		r.chart("Active visitors and the controller's target",
			series{"active (peak)", "#ff7f0e", col(func(m *admission.Minute) float64 { return float64(m.Active) })},
			series{"target", "#7f7f7f", col(func(m *admission.Minute) float64 { return float64(m.Target) })}),
		r.chart("Origin latency (ms)",
			series{"p50", "#17becf", col(func(m *admission.Minute) float64 { return m.LatencyP50Ms })},
			series{"p99", "#d62728", col(func(m *admission.Minute) float64 { return m.LatencyP99Ms })}),
		r.chart("Origin requests and errors per minute",
			series{"requests", "#9467bd", col(func(m *admission.Minute) float64 { return m.OriginRequests })},
			series{"errors", "#d62728", col(func(m *admission.Minute) float64 { return m.OriginErrors })}),
		r.chart("Seats sold and no-shows per minute",
			series{"seats sold", "#2ca02c", col(func(m *admission.Minute) float64 { return float64(m.SeatsSold) })},
			series{"no-shows", "#8c564b", col(func(m *admission.Minute) float64 { return float64(m.NoShows) })}),
		r.chart("Waiting in the queue",
			series{"waiting", "#1f77b4", col(func(m *admission.Minute) float64 { return float64(m.Waiting) })}),
	}
	return page.Execute(w, struct {
		*Report
		Charts  []template.HTML
		Defence template.HTML
	}{r, charts, defenceBars(r.Totals.Defence)})
}

// Chart geometry (SVG user units).
const (
	chartW, chartH         = 720, 220
	padL, padR, padT, padB = 56, 12, 28, 36
)

// chart draws one line chart of the minutes as inline SVG.
func (r *Report) chart(title string, ss ...series) template.HTML {
	var b strings.Builder
	top := 0.0
	for _, s := range ss {
		for _, v := range s.values {
			top = max(top, v)
		}
	}
	top = niceCeil(top)
	n := len(r.Minutes)
	x := func(i int) float64 {
		if n <= 1 {
			return padL + (chartW-padL-padR)/2
		}
		return padL + float64(i)*(chartW-padL-padR)/float64(n-1)
	}
	y := func(v float64) float64 { return chartH - padB - v/top*(chartH-padT-padB) }
	fmt.Fprintf(&b, `<figure><svg viewBox="0 0 %d %d" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`, chartW, chartH, html.EscapeString(title))
	fmt.Fprintf(&b, `<text x="%d" y="16" class="t">%s</text>`, padL, html.EscapeString(title))
	for k := 0; k <= 4; k++ {
		v := top * float64(k) / 4
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" class="g"/>`, padL, chartW-padR, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="a" text-anchor="end">%s</text>`, padL-6, y(v)+4, short(v))
	}
	if n > 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="a">%s</text>`, padL, chartH-padB+18, r.Minutes[0].At.UTC().Format("15:04"))
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="a" text-anchor="end">%s UTC</text>`, chartW-padR, chartH-padB+18, r.Minutes[n-1].At.UTC().Format("15:04"))
	}
	for j, s := range ss {
		pts := make([]string, len(s.values))
		for i, v := range s.values {
			pts[i] = fmt.Sprintf("%.1f,%.1f", x(i), y(v))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, s.color, strings.Join(pts, " "))
		if n <= 90 {
			for i, v := range s.values {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2" fill="%s"/>`, x(i), y(v), s.color)
			}
		}
		lx := padL + 150*j
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" class="a">%s</text>`,
			lx, chartH-12, s.color, lx+14, chartH-3, html.EscapeString(s.name))
	}
	b.WriteString(`</svg></figure>`)
	return template.HTML(b.String()) // built here from numbers and escaped names
}

// defenceBars draws the bot-defence outcomes by band as a bar chart.
func defenceBars(d admission.DefenceCounts) template.HTML {
	vals := d.Slice()
	top := 0.0
	for _, v := range vals {
		top = max(top, float64(v))
	}
	top = niceCeil(top)
	const w, h, bw = 720, 200, 90
	var b strings.Builder
	fmt.Fprintf(&b, `<figure><svg viewBox="0 0 %d %d" role="img" aria-label="Bot-defence outcomes by band" xmlns="http://www.w3.org/2000/svg">`, w, h)
	b.WriteString(`<text x="56" y="16" class="t">Bot-defence outcomes by band</text>`)
	colors := [...]string{"#2ca02c", "#bcbd22", "#ff7f0e", "#9467bd", "#d62728"}
	for i, v := range vals {
		bh := float64(v) / top * (h - 70)
		x := 56 + i*(bw+40)
		fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"/>`, x, h-40-bh, bw, bh, colors[i])
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" class="a" text-anchor="middle">%d</text>`, x+bw/2, h-44-bh, v)
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="a" text-anchor="middle">%s</text>`, x+bw/2, h-22, admission.DefenceBands[i])
	}
	b.WriteString(`</svg></figure>`)
	return template.HTML(b.String())
}

// niceCeil rounds a chart's top up to 1, 2 or 5 times a power of ten (1
// for an empty chart).
func niceCeil(v float64) float64 {
	if !(v > 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// short formats an axis value: 1500 → 1.5k.
func short(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
