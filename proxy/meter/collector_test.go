package meter

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// collect gathers m through a registry and returns every sample as
// name{label="value",...} → value; histograms as name_bucket{...,le=...},
// name_sum and name_count.
func collect(t testing.TB, m *Meter) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]float64)
	for _, mf := range mfs {
		for _, s := range mf.GetMetric() {
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := func(suffix string, extra ...string) string {
				return mf.GetName() + suffix + "{" + strings.Join(append(labels[:len(labels):len(labels)], extra...), ",") + "}"
			}
			switch {
			case s.GetCounter() != nil:
				out[key("")] = s.GetCounter().GetValue()
			case s.GetGauge() != nil:
				out[key("")] = s.GetGauge().GetValue()
			case s.GetHistogram() != nil:
				h := s.GetHistogram()
				out[key("_count")] = float64(h.GetSampleCount())
				out[key("_sum")] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					out[key("_bucket", fmt.Sprintf("le=%q", fmt.Sprint(b.GetUpperBound())))] = float64(b.GetCumulativeCount())
				}
			}
		}
	}
	return out
}

func TestCollector(t *testing.T) {
	m, c := newTestMeter(t, Options{LatencyBuckets: []float64{0.01, 0.1, 1}})
	a := m.Event("shop")
	m.Event("idle")
	c.Set(time.Minute)
	for _, r := range []struct {
		lat    time.Duration
		status int
		failed bool
	}{
		{5 * time.Millisecond, 200, false},
		{10 * time.Millisecond, 200, false}, // on the bound: le 0.01
		{50 * time.Millisecond, 302, false},
		{500 * time.Millisecond, 404, false},
		{2 * time.Second, 500, false},
		{3 * time.Second, 0, true},
		{0, 199, false},
		{0, 700, false},
	} {
		request(a, c, r.lat, r.status, r.failed)
	}
	a.Start() // one left in flight
	var p, q Presence
	a.Seen(&p)
	a.Seen(&q)
	a.Complete(&p)
	a.Complete(&p)

	got := collect(t, m)
	want := map[string]float64{
		`waitroom_origin_requests_total{class="1xx",event="shop"}`:                1,
		`waitroom_origin_requests_total{class="2xx",event="shop"}`:                2,
		`waitroom_origin_requests_total{class="3xx",event="shop"}`:                1,
		`waitroom_origin_requests_total{class="4xx",event="shop"}`:                1,
		`waitroom_origin_requests_total{class="5xx",event="shop"}`:                1,
		`waitroom_origin_requests_total{class="other",event="shop"}`:              1,
		`waitroom_origin_requests_total{class="failed",event="shop"}`:             1,
		`waitroom_origin_request_duration_seconds_count{event="shop"}`:            7,
		`waitroom_origin_request_duration_seconds_sum{event="shop"}`:              2.565,
		`waitroom_origin_request_duration_seconds_bucket{event="shop",le="0.01"}`: 4,
		`waitroom_origin_request_duration_seconds_bucket{event="shop",le="0.1"}`:  5,
		`waitroom_origin_request_duration_seconds_bucket{event="shop",le="1"}`:    6,
		`waitroom_origin_in_flight_requests{event="shop"}`:                        1,
		`waitroom_origin_active_visitors{event="shop"}`:                           1, // p completed
		`waitroom_origin_completions_total{event="shop"}`:                         1,
		`waitroom_origin_requests_total{class="2xx",event="idle"}`:                0,
		`waitroom_origin_request_duration_seconds_count{event="idle"}`:            0,
		`waitroom_origin_in_flight_requests{event="idle"}`:                        0,
		`waitroom_origin_active_visitors{event="idle"}`:                           0,
		`waitroom_origin_completions_total{event="idle"}`:                         0,
		`waitroom_origin_request_duration_seconds_bucket{event="idle",le="0.1"}`:  0,
	}
	for k, v := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("missing %s", k)
			continue
		}
		if !approx(g, v) {
			t.Errorf("%s = %v, want %v", k, g, v)
		}
	}
	// Every series is one of the five names, labelled by event.
	for k := range got {
		if !strings.HasPrefix(k, "waitroom_origin_") || !strings.Contains(k, `event="`) {
			t.Errorf("unexpected series %s", k)
		}
	}
	// The gauges follow the clock: an hour later nobody is active.
	c.Add(time.Hour)
	if g := collect(t, m)[`waitroom_origin_active_visitors{event="shop"}`]; g != 0 {
		t.Errorf("active an hour later = %v, want 0", g)
	}
}
