package api

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names; labels carry route templates and codes only, never raw
// paths or ids, so the series stay few.
const (
	metricRequests      = "waitroom_inventory_http_requests_total"
	metricDuration      = "waitroom_inventory_http_request_duration_seconds"
	metricOperations    = "waitroom_inventory_operations_total"
	metricReaped        = "waitroom_inventory_reaped_holds_total"
	metricStoreFailures = "waitroom_inventory_store_failures_total"
)

// methods are the method label values; anything else is "other".
var methods = []string{"GET", "PUT", "POST", "DELETE", "HEAD", "OPTIONS", "PATCH", "other"}

func methodIndex(m []byte) int {
	for i, name := range methods[:len(methods)-1] {
		if string(m) == name {
			return i
		}
	}
	return len(methods) - 1
}

// statuses are the status codes whose counters are cached per endpoint.
var statuses = [...]int{200, 201, 400, 401, 404, 405, 408, 409, 410, 413, 415, 422, 431, 500, 503}

func statusIndex(code int) int {
	for i, c := range statuses {
		if c == code {
			return i
		}
	}
	return -1
}

type metrics struct {
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	operations    *prometheus.CounterVec
	reaped        prometheus.Counter
	storeFailures *prometheus.CounterVec

	// stats caches the series of each (route, method), so that a request
	// costs no label hashing: index [route][method], the last route being
	// "unmatched".
	stats [][]atomic.Pointer[routeStats]
}

// routeStats are the series of one route and method, made on first use.
type routeStats struct {
	route, method string
	duration      prometheus.Observer
	byStatus      [len(statuses)]atomic.Pointer[prometheus.Counter]
}

func newMetrics(reg prometheus.Registerer, routes []*route) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricRequests,
			Help: "Requests to the inventory API by route template, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    metricDuration,
			Help:    "Time to answer a request to the inventory API, by route template and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
		operations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricOperations,
			Help: "Outcomes of holds, confirms, releases, extends and cancels: ok or the error code.",
		}, []string{"operation", "outcome"}),
		reaped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: metricReaped,
			Help: "Holds the reaper expired.",
		}),
		storeFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricStoreFailures,
			Help: "Store calls that failed with a storage error, by route template.",
		}, []string{"route"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.operations, m.reaped, m.storeFailures} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	m.stats = make([][]atomic.Pointer[routeStats], len(routes)+1)
	for i := range m.stats {
		m.stats[i] = make([]atomic.Pointer[routeStats], len(methods))
	}
	return m, nil
}

// observe records one answered request. routeIdx is len(routes) for a
// request that matched no route.
func (m *metrics) observe(routeIdx int, label string, method []byte, status int, elapsed time.Duration) {
	mi := methodIndex(method)
	slot := &m.stats[routeIdx][mi]
	rs := slot.Load()
	if rs == nil {
		rs = &routeStats{route: label, method: methods[mi]}
		rs.duration = m.duration.WithLabelValues(label, methods[mi])
		if !slot.CompareAndSwap(nil, rs) {
			rs = slot.Load()
		}
	}
	rs.duration.Observe(elapsed.Seconds())
	si := statusIndex(status)
	if si < 0 {
		m.requests.WithLabelValues(rs.route, rs.method, strconv.Itoa(status)).Inc()
		return
	}
	cp := rs.byStatus[si].Load()
	if cp == nil {
		c := m.requests.WithLabelValues(rs.route, rs.method, strconv.Itoa(status))
		rs.byStatus[si].CompareAndSwap(nil, &c)
		cp = &c
	}
	(*cp).Inc()
}
