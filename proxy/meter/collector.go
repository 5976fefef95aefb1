package meter

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names, one series per event (label event); the requests also by
// status class (label class: 1xx … 5xx, other, failed).
const (
	MetricRequests    = "waitroom_origin_requests_total"
	MetricDuration    = "waitroom_origin_request_duration_seconds"
	MetricInFlight    = "waitroom_origin_in_flight_requests"
	MetricActive      = "waitroom_origin_active_visitors"
	MetricCompletions = "waitroom_origin_completions_total"
)

var (
	descRequests = prometheus.NewDesc(MetricRequests,
		"Requests of admitted visitors to the origin, by status class (failed: timeout, connection error or shed).",
		[]string{"event", "class"}, nil)
	descDuration = prometheus.NewDesc(MetricDuration,
		"Time the origin took to answer admitted visitors' requests (failed requests are not included).",
		[]string{"event"}, nil)
	descInFlight = prometheus.NewDesc(MetricInFlight,
		"Requests of admitted visitors in progress at the origin.",
		[]string{"event"}, nil)
	descActive = prometheus.NewDesc(MetricActive,
		"Distinct admitted visitors seen within the active window (approximate, see package proxy/meter).",
		[]string{"event"}, nil)
	descCompletions = prometheus.NewDesc(MetricCompletions,
		"Visitors the origin reported as completed.",
		[]string{"event"}, nil)
)

// Describe implements prometheus.Collector.
func (m *Meter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRequests, descDuration, descInFlight, descActive, descCompletions} {
		ch <- d
	}
}

// Collect implements prometheus.Collector: the series of every registered
// event, the gauges at the meter's clock.
func (m *Meter) Collect(ch chan<- prometheus.Metric) {
	now := m.p.nanos(m.p.clock())
	for _, e := range m.snapshot() {
		e.collect(ch, now)
	}
}

func (e *Event) collect(ch chan<- prometheus.Metric, now int64) {
	var (
		classes  [numClasses]uint64
		lat      = make([]uint64, len(e.p.bounds)+1)
		sum      uint64
		inFlight int64
	)
	for i := range e.shards {
		sh := &e.shards[i]
		inFlight += sh.inFlight.Load()
		for c := range classes {
			classes[c] += sh.classes[c].Load()
		}
		for b := range lat {
			lat[b] += sh.lat[b].Load()
		}
		sum += sh.latSum.Load()
	}
	for c, n := range classes {
		ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(n), e.id, classNames[c])
	}
	buckets := make(map[float64]uint64, len(e.p.boundsS))
	var count uint64
	for b, n := range lat {
		count += n
		if b < len(e.p.boundsS) {
			buckets[e.p.boundsS[b]] = count
		}
	}
	ch <- prometheus.MustNewConstHistogram(descDuration, count, time.Duration(sum).Seconds(), buckets, e.id)
	ch <- prometheus.MustNewConstMetric(descInFlight, prometheus.GaugeValue, float64(max(inFlight, 0)), e.id)
	ch <- prometheus.MustNewConstMetric(descActive, prometheus.GaugeValue, float64(e.active(now)), e.id)
	ch <- prometheus.MustNewConstMetric(descCompletions, prometheus.CounterValue, float64(e.completions.Load()), e.id)
}

var _ prometheus.Collector = (*Meter)(nil)
