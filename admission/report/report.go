package report

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// Format is an output format of a report.
type Format string

// The formats.
const (
	CSV  Format = "csv"
	JSON Format = "json"
	HTML Format = "html"
)

// ParseFormat reads a format name ("" is JSON).
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case "":
		return JSON, nil
	case CSV, JSON, HTML:
		return Format(s), nil
	}
	return "", fmt.Errorf("report: unknown format %q (csv, json or html)", s)
}

// ContentType is the format's media type.
func (f Format) ContentType() string {
	switch f {
	case CSV:
		return "text/csv; charset=utf-8"
	case HTML:
		return "text/html; charset=utf-8"
	}
	return "application/json"
}

// Event names what a report covers: the event, its lanes (whose draws
// are listed) and the waiting room's path prefix (for the audit links,
// "/_wr" by default).
type Event struct {
	ID     string
	Lanes  []string
	Prefix string
}

// Report is an event's record after the sale.
type Report struct {
	Event string `json:"event"`
	// From and To bound the minutes recorded (To is the end of the last
	// one); absent when there are none.
	From    time.Time          `json:"from,omitzero"`
	To      time.Time          `json:"to,omitzero"`
	Totals  Totals             `json:"totals"`
	Minutes []admission.Minute `json:"minutes"`
	Draws   []Draw             `json:"draws"`
}

// Totals sum the minutes.
type Totals struct {
	Minutes        int     `json:"minutes"`
	Arrivals       uint64  `json:"arrivals"`
	Admitted       uint64  `json:"admitted"`
	PeakActive     int     `json:"peak_active"`
	OriginRequests float64 `json:"origin_requests"`
	OriginErrors   float64 `json:"origin_errors"`
	// ErrorRate is OriginErrors / OriginRequests (0 without requests).
	ErrorRate float64 `json:"error_rate"`
	// WorstP99Ms is the highest minute's p99 latency.
	WorstP99Ms float64 `json:"worst_latency_p99_ms"`
	SeatsSold  int     `json:"seats_sold"`
	// SeatsLeft is the last minute's count (-1: no inventory link).
	SeatsLeft int `json:"seats_left"`
	NoShows   int `json:"no_shows"`
	Reached   int `json:"reached"`
	// NoShowRate is NoShows / Reached (-1: nobody reached).
	NoShowRate float64                 `json:"no_show_rate"`
	Defence    admission.DefenceCounts `json:"defence"`
	ETAKept    uint64                  `json:"eta_kept"`
	ETALate    uint64                  `json:"eta_late"`
	// ETAHonesty is the share of visitors admitted with a promise who
	// were admitted before the eta_high they were shown at their join
	// (-1: nobody).
	ETAHonesty float64 `json:"eta_honesty"`
}

// Draw is one recorded draw with the paths of its public audit (JSON,
// GET {prefix}/api/draws/{event}/{tranche}) and its page.
type Draw struct {
	Lane    string    `json:"lane"`
	Tranche int       `json:"tranche"`
	First   uint64    `json:"first"`
	Last    uint64    `json:"last"`
	Count   uint64    `json:"count"`
	At      time.Time `json:"at"`
	Audit   string    `json:"audit"`
	Page    string    `json:"page"`
}

// Build reads the event's minute records of [from, to) and its draws from
// the store (zero from or to: from the first, to the last kept; the
// store keeps them for admission.report_retention).
func Build(ctx context.Context, s admission.Store, ev Event, from, to time.Time) (*Report, error) {
	if from.IsZero() {
		from = time.Unix(0, 0)
	}
	if to.IsZero() {
		to = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	recs, err := s.Minutes(ctx, ev.ID, from, to)
	if err != nil {
		return nil, fmt.Errorf("report: reading the minute records: %w", err)
	}
	r := &Report{Event: ev.ID, Minutes: make([]admission.Minute, 0, len(recs)), Draws: []Draw{}}
	for _, rec := range recs {
		var m admission.Minute
		if err := m.UnmarshalBinary(rec.Record); err != nil {
			return nil, fmt.Errorf("report: minute %s: %w", rec.Minute.Format(time.RFC3339), err)
		}
		m.At = rec.Minute
		r.Minutes = append(r.Minutes, m)
	}
	if n := len(r.Minutes); n > 0 {
		r.From, r.To = r.Minutes[0].At, r.Minutes[n-1].At.Add(time.Minute)
	}
	r.Totals = totals(r.Minutes)
	prefix := ev.Prefix
	if prefix == "" {
		prefix = "/_wr"
	}
	for _, lane := range ev.Lanes {
		ds, err := s.Draws(ctx, ev.ID, lane, -1)
		if err != nil {
			return nil, fmt.Errorf("report: reading the draws: %w", err)
		}
		for _, d := range ds {
			q := ""
			if lane != admission.PublicLane {
				q = "?lane=" + url.QueryEscape(lane)
			}
			tail := url.PathEscape(ev.ID) + "/" + strconv.Itoa(d.Tranche) + q
			r.Draws = append(r.Draws, Draw{Lane: lane, Tranche: d.Tranche, First: d.First, Last: d.Next() - 1, Count: d.Count,
				At: d.At.UTC(), Audit: prefix + "/api/draws/" + tail, Page: prefix + "/draw/" + tail})
		}
	}
	return r, nil
}

func totals(ms []admission.Minute) Totals {
	t := Totals{Minutes: len(ms), SeatsLeft: -1, NoShowRate: -1, ETAHonesty: -1}
	for _, m := range ms {
		t.Arrivals += m.Arrivals
		t.Admitted += m.Admitted
		t.PeakActive = max(t.PeakActive, m.Active)
		t.OriginRequests += m.OriginRequests
		t.OriginErrors += m.OriginErrors
		t.WorstP99Ms = max(t.WorstP99Ms, m.LatencyP99Ms)
		t.SeatsSold += m.SeatsSold
		t.SeatsLeft = m.SeatsLeft
		t.NoShows += m.NoShows
		t.Reached += m.Reached
		t.Defence.Add(m.Defence)
		t.ETAKept += m.ETAKept
		t.ETALate += m.ETALate
	}
	t.OriginRequests, t.OriginErrors = round(t.OriginRequests, 1), round(t.OriginErrors, 1)
	if t.OriginRequests > 0 {
		t.ErrorRate = round(t.OriginErrors/t.OriginRequests, 4)
	}
	if t.Reached > 0 {
		t.NoShowRate = round(float64(t.NoShows)/float64(t.Reached), 4)
	}
	if n := t.ETAKept + t.ETALate; n > 0 {
		t.ETAHonesty = round(float64(t.ETAKept)/float64(n), 4)
	}
	return t
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// Write writes the report in format f.
func (r *Report) Write(w io.Writer, f Format) error {
	switch f {
	case CSV:
		return r.WriteCSV(w)
	case HTML:
		return r.WriteHTML(w)
	}
	return r.WriteJSON(w)
}

// WriteJSON writes the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Lanes are the names of an event's lanes in the engine's order: the
// configured ones, then the public lane when it is not among them.
func Lanes(cfg admission.EventConfig) []string {
	var out []string
	public := false
	for _, l := range cfg.Lanes {
		out = append(out, l.Name)
		public = public || l.Name == admission.PublicLane
	}
	if !public {
		out = append(out, admission.PublicLane)
	}
	return out
}
