package report

import (
	"encoding/csv"
	"io"
	"strconv"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// Columns are the CSV header: one row per minute, in this order.
var Columns = []string{"minute", "arrivals", "admitted", "active", "waiting", "origin_requests",
	"origin_errors", "latency_p50_ms", "latency_p99_ms", "target", "reason", "seats_sold", "seats_left",
	"no_shows", "reached", "eta_kept", "eta_late", "light_pow", "heavy_pow", "captcha", "shadow", "block"}

// WriteCSV writes the per-minute table: the header (Columns), then one
// row per minute (RFC 3339 minute, UTC). The totals are in the JSON and
// HTML forms.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Columns); err != nil {
		return err
	}
	for _, m := range r.Minutes {
		if err := cw.Write(row(m)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func row(m admission.Minute) []string {
	u := func(n uint64) string { return strconv.FormatUint(n, 10) }
	i := strconv.Itoa
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	d := m.Defence
	return []string{m.At.UTC().Format(time.RFC3339), u(m.Arrivals), u(m.Admitted), i(m.Active), i(m.Waiting),
		f(round(m.OriginRequests, 1)), f(round(m.OriginErrors, 1)), f(m.LatencyP50Ms), f(m.LatencyP99Ms),
		i(m.Target), m.Reason, i(m.SeatsSold), i(m.SeatsLeft), i(m.NoShows), i(m.Reached),
		u(m.ETAKept), u(m.ETALate), u(d.LightPoW), u(d.HeavyPoW), u(d.Captcha), u(d.Shadow), u(d.Block)}
}
