package meter

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// fakeClock is a clock tests move by hand; safe for concurrent use.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) Now() time.Time { return t0.Add(time.Duration(c.ns.Load())) }

// Set moves the clock to t0+d.
func (c *fakeClock) Set(d time.Duration) { c.ns.Store(int64(d)) }

func (c *fakeClock) Add(d time.Duration) { c.ns.Add(int64(d)) }

func newTestMeter(t testing.TB, opts Options) (*Meter, *fakeClock) {
	t.Helper()
	c := &fakeClock{}
	opts.Clock = c.Now
	if opts.Shards == 0 {
		opts.Shards = 4
	}
	if opts.Window == 0 {
		opts.Window = 5 * time.Second // the window's arithmetic shows over several slots
	}
	return New(opts), c
}

// request runs one request of latency lat ending at the clock's time.
func request(e *Event, c *fakeClock, lat time.Duration, status int, failed bool) {
	c.Add(-lat)
	tok := e.Start()
	c.Add(lat)
	e.Done(tok, status, failed)
}

func approx(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestMeasureWindow(t *testing.T) {
	type req struct {
		at     time.Duration // when it ends
		lat    time.Duration
		status int
		failed bool
	}
	// spread returns n requests of latency lat ending evenly over [from, from+1s).
	spread := func(from time.Duration, n int, lat time.Duration, status int) []req {
		var rs []req
		for i := range n {
			rs = append(rs, req{at: from + time.Duration(i)*time.Second/time.Duration(n), lat: lat, status: status})
		}
		return rs
	}
	join := func(parts ...[]req) []req {
		var all []req
		for _, p := range parts {
			all = append(all, p...)
		}
		return all
	}
	var ramp []req // latencies 1..100 ms, ending in second 10
	for i := 1; i <= 100; i++ {
		ramp = append(ramp, req{at: 10*time.Second + time.Duration(i)*time.Millisecond, lat: time.Duration(i) * time.Millisecond, status: 200})
	}
	tests := []struct {
		name    string
		reqs    []req
		at      time.Duration
		rate    float64
		errRate float64
		p50     time.Duration
		p95     time.Duration
		p99     time.Duration // checked when set
	}{
		{name: "nothing", at: 10 * time.Second},
		{
			name: "20 per second over the whole window",
			reqs: join(spread(10*time.Second, 20, 30*time.Millisecond, 200), spread(11*time.Second, 20, 30*time.Millisecond, 200),
				spread(12*time.Second, 20, 30*time.Millisecond, 200), spread(13*time.Second, 20, 30*time.Millisecond, 200),
				spread(14*time.Second, 20, 30*time.Millisecond, 200)),
			at: 15 * time.Second, rate: 20, p50: 30 * time.Millisecond, p95: 30 * time.Millisecond,
		},
		{
			name: "older than the window is gone",
			reqs: join(spread(3*time.Second, 50, time.Millisecond, 200), spread(10*time.Second, 10, 2*time.Millisecond, 200)),
			at:   15 * time.Second, rate: 2, p50: 2 * time.Millisecond, p95: 2 * time.Millisecond,
		},
		{
			name: "the current slot counts",
			reqs: spread(14*time.Second, 10, 5*time.Millisecond, 200),
			at:   14*time.Second + 999*time.Millisecond, rate: 2, p50: 5 * time.Millisecond, p95: 5 * time.Millisecond,
		},
		{
			name: "half the oldest slot is in the window",
			reqs: join(spread(10*time.Second, 40, 10*time.Millisecond, 200), spread(14*time.Second, 10, 90*time.Millisecond, 200)),
			// window [10.5 s, 15.5 s]: 20 of slot 10's 40 and all 10 of slot 14
			at: 15*time.Second + 500*time.Millisecond, rate: 30.0 / 5, p50: 10 * time.Millisecond, p95: 90 * time.Millisecond,
		},
		{
			name: "percentiles of 1..100 ms",
			reqs: ramp,
			at:   12 * time.Second, rate: 100.0 / 5, p50: 50 * time.Millisecond, p95: 95 * time.Millisecond, p99: 99 * time.Millisecond,
		},
		{
			name: "5xx and failures are errors; failures have no latency",
			reqs: join(spread(10*time.Second, 85, 20*time.Millisecond, 200), spread(11*time.Second, 10, 200*time.Millisecond, 503),
				[]req{{at: 12 * time.Second, lat: time.Second, failed: true}, {at: 12 * time.Second, lat: time.Second, failed: true},
					{at: 12 * time.Second, lat: 5 * time.Second, failed: true}, {at: 12 * time.Second, failed: true, status: 503},
					{at: 12 * time.Second, lat: time.Minute, failed: true}}),
			// 100 requests, 15 errors; latencies: 85 × 20 ms, 10 × 200 ms.
			at: 13 * time.Second, rate: 100.0 / 5, errRate: 0.15, p50: 20 * time.Millisecond, p95: 200 * time.Millisecond,
		},
		{
			name: "4xx are not errors",
			reqs: join(spread(10*time.Second, 9, time.Millisecond, 404), spread(10*time.Second, 1, time.Millisecond, 500)),
			at:   11 * time.Second, rate: 2, errRate: 0.1, p50: time.Millisecond, p95: time.Millisecond,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, c := newTestMeter(t, Options{})
			e := m.Event("ev")
			for _, r := range tc.reqs {
				c.Set(r.at)
				request(e, c, r.lat, r.status, r.failed)
			}
			got := m.Measure("ev", t0.Add(tc.at))
			if !approx(got.RequestRate, tc.rate) {
				t.Errorf("RequestRate = %v, want %v", got.RequestRate, tc.rate)
			}
			if !approx(got.ErrorRate, tc.errRate) {
				t.Errorf("ErrorRate = %v, want %v", got.ErrorRate, tc.errRate)
			}
			if !within(got.LatencyP50, tc.p50) {
				t.Errorf("LatencyP50 = %v, want %v within 1/32", got.LatencyP50, tc.p50)
			}
			if !within(got.LatencyP95, tc.p95) {
				t.Errorf("LatencyP95 = %v, want %v within 1/32", got.LatencyP95, tc.p95)
			}
			if tc.p99 != 0 && !within(got.LatencyP99, tc.p99) {
				t.Errorf("LatencyP99 = %v, want %v within 1/32", got.LatencyP99, tc.p99)
			}
			if got.InFlight != 0 {
				t.Errorf("InFlight = %d, want 0", got.InFlight)
			}
		})
	}
}

// TestYoungEvent: before an event has existed for a whole window, the
// rate is over its lifetime.
func TestYoungEvent(t *testing.T) {
	m, c := newTestMeter(t, Options{})
	c.Set(100 * time.Second)
	e := m.Event("young") // created at 100 s
	for i := range 10 {
		c.Set(100*time.Second + time.Duration(i)*100*time.Millisecond)
		request(e, c, 0, 200, false)
	}
	tests := []struct {
		at   time.Duration
		rate float64
	}{
		{100 * time.Second, 0}, // no time has passed
		{102 * time.Second, 5},
		{104 * time.Second, 2.5},
		{105 * time.Second, 2},
		{105*time.Second + 500*time.Millisecond, 1}, // window [100.5 s, 105.5 s]: half of slot 100
	}
	for _, tc := range tests {
		t.Run(tc.at.String(), func(t *testing.T) {
			got := m.Measure("young", t0.Add(tc.at)).RequestRate
			want := tc.rate
			if !approx(got, want) {
				t.Errorf("RequestRate at %v = %v, want %v", tc.at, got, want)
			}
		})
	}
}

// TestSlotRecycling: a slot that comes round again starts from zero.
func TestSlotRecycling(t *testing.T) {
	m, c := newTestMeter(t, Options{Shards: 1})
	e := m.Event("ev")
	ring := int(m.p.ringMask + 1)
	for s := range 3 * ring {
		c.Set(time.Duration(s)*time.Second + 10*time.Millisecond)
		for range s + 1 { // s+1 requests in second s
			request(e, c, 0, 200, false)
		}
		// Just after the slot ends, the window holds seconds s-4 … s.
		want := 0
		for k := max(s-4, 0); k <= s; k++ {
			want += k + 1
		}
		got := e.Measure(t0.Add(time.Duration(s+1) * time.Second))
		if wantRate := float64(want) / min(float64(s+1), 5); !approx(got.RequestRate, wantRate) {
			t.Fatalf("second %d: RequestRate = %v, want %v", s, got.RequestRate, wantRate)
		}
	}
	// Long idle: everything is out of the window.
	if got := e.Measure(t0.Add(time.Hour)); got.RequestRate != 0 || got.LatencyP95 != 0 {
		t.Fatalf("after an idle hour: %+v, want zero rates", got)
	}
}

func TestStaleDone(t *testing.T) {
	// A Done whose clock reads a slot the ring has moved past is dropped,
	// not counted in the newer slot.
	m, c := newTestMeter(t, Options{Shards: 1})
	e := m.Event("ev")
	c.Set(20 * time.Second)
	request(e, c, 0, 200, false)
	c.Set(20*time.Second - time.Duration(m.p.ringMask+1)*time.Second)
	tok := e.Start()
	e.Done(tok, 500, false)
	got := e.Measure(t0.Add(20*time.Second + 500*time.Millisecond))
	if !approx(got.RequestRate, 1.0/5) || got.ErrorRate != 0 || got.InFlight != 0 {
		t.Fatalf("got %+v, want 0.2 req/s, no errors, none in flight", got)
	}
}

func TestInFlight(t *testing.T) {
	m, _ := newTestMeter(t, Options{Shards: 8})
	e := m.Event("ev")
	var toks []Token
	for range 10 {
		toks = append(toks, e.Start())
	}
	steps := []struct {
		done int
		want int
	}{{0, 10}, {3, 7}, {7, 0}}
	for _, s := range steps {
		for range s.done {
			e.Done(toks[0], 200, false)
			toks = toks[1:]
		}
		if got := m.Measure("ev", t0).InFlight; got != s.want {
			t.Fatalf("InFlight = %d, want %d", got, s.want)
		}
	}
	e.Done(Token{}, 200, false) // a zero token is no request
	if got := m.Measure("ev", t0).InFlight; got != 0 {
		t.Fatalf("InFlight after a zero Token's Done = %d, want 0", got)
	}
}

func TestActive(t *testing.T) {
	// ActiveWindow 60 s: epochs of 5 s; a visitor seen at t counts until
	// at least t+60 s and at most until the end of the 13th epoch after
	// the one holding t.
	type seen struct {
		at      time.Duration
		visitor int
	}
	tests := []struct {
		name string
		seen []seen
		at   time.Duration
		want int
	}{
		{"nobody", nil, 30 * time.Second, 0},
		{"one visitor, many requests", []seen{{1 * time.Second, 0}, {2 * time.Second, 0}, {30 * time.Second, 0}, {31 * time.Second, 0}}, 40 * time.Second, 1},
		{"three visitors", []seen{{1 * time.Second, 0}, {2 * time.Second, 1}, {50 * time.Second, 2}}, 55 * time.Second, 3},
		{"seen exactly ActiveWindow ago", []seen{{3 * time.Second, 0}}, 63 * time.Second, 1},
		{"still counted up to one epoch more", []seen{{1 * time.Second, 0}}, 64*time.Second + 999*time.Millisecond, 1},
		{"gone after that", []seen{{1 * time.Second, 0}}, 65 * time.Second, 0},
		{"one gone, one recent", []seen{{1 * time.Second, 0}, {40 * time.Second, 1}}, 70 * time.Second, 1},
		{"back after leaving the window", []seen{{1 * time.Second, 0}, {66 * time.Second, 0}}, 67 * time.Second, 1},
		{"back after a long absence", []seen{{1 * time.Second, 0}, {30 * time.Second, 1}, {500 * time.Second, 0}}, 500 * time.Second, 1},
		{"moves between epochs", []seen{{1 * time.Second, 0}, {11 * time.Second, 0}, {21 * time.Second, 0}, {21 * time.Second, 1}, {59 * time.Second, 0}}, 60 * time.Second, 2},
		{"a stale clock does not move a visitor back", []seen{{30 * time.Second, 0}, {2 * time.Second, 0}}, 88 * time.Second, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, c := newTestMeter(t, Options{})
			e := m.Event("ev")
			var ps [3]Presence
			for _, s := range tc.seen {
				c.Set(s.at)
				e.Seen(&ps[s.visitor])
			}
			if got := m.Measure("ev", t0.Add(tc.at)).Active; got != tc.want {
				t.Errorf("Active = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestCompletions(t *testing.T) {
	m, _ := newTestMeter(t, Options{})
	e := m.Event("ev")
	var a, b, c Presence
	steps := []struct {
		complete []*Presence
		want     int
	}{
		{[]*Presence{&a, &b, &a}, 2}, // a counts once
		{nil, 0},                     // reset by the previous Measure
		{[]*Presence{&c, &b}, 1},
		{[]*Presence{&a, &b, &c}, 0},
	}
	for i, s := range steps {
		for _, p := range s.complete {
			e.Complete(p)
		}
		if got := m.Measure("ev", t0).Completions; got != s.want {
			t.Fatalf("step %d: Completions = %d, want %d", i, got, s.want)
		}
	}
}

func TestCompletedVisitorsLeaveActive(t *testing.T) {
	m, _ := newTestMeter(t, Options{})
	e := m.Event("ev")
	var a, b, c Presence
	for _, p := range []*Presence{&a, &b, &c} {
		e.SeenAt(p, t0)
	}
	if got := m.Measure("ev", t0).Active; got != 3 {
		t.Fatalf("Active = %d, want 3", got)
	}
	e.Complete(&b)
	e.SeenAt(&b, t0.Add(10*time.Second)) // browses on after completing
	if got := m.Measure("ev", t0.Add(10*time.Second)).Active; got != 2 {
		t.Fatalf("after a completion Active = %d, want 2", got)
	}
	e.Complete(&a)
	e.Complete(&a)
	if got := m.Measure("ev", t0.Add(10*time.Second)).Active; got != 1 {
		t.Fatalf("after completing twice Active = %d, want 1", got)
	}
}

func TestEventsAreSeparate(t *testing.T) {
	m, c := newTestMeter(t, Options{})
	a, b := m.Event("a"), m.Event("b")
	if m.Event("a") != a || m.Lookup("a") != a || m.Lookup("c") != nil {
		t.Fatal("Event/Lookup do not return the registered meter")
	}
	if a.ID() != "a" {
		t.Fatalf("ID = %q", a.ID())
	}
	c.Set(time.Second)
	request(a, c, time.Millisecond, 200, false)
	request(a, c, time.Millisecond, 200, false)
	var p Presence
	a.Seen(&p)
	a.Complete(&p)
	now := t0.Add(2 * time.Second)
	if got := m.Measure("b", now); got != (admission.Measurements{}) {
		t.Errorf("event b measured %+v, want zero", got)
	}
	if got := m.Measure("unknown", now); got != (admission.Measurements{}) {
		t.Errorf("unknown event measured %+v, want zero", got)
	}
	if got := m.Measure("a", now); got.RequestRate != 1 || got.Active != 0 || got.Completions != 1 {
		t.Errorf("event a measured %+v", got)
	}
	_ = b
}

func TestNilEvent(t *testing.T) {
	var e *Event
	var p Presence
	tok := e.Start()
	e.Done(tok, 200, false)
	e.Seen(&p)
	e.Complete(&p)
	if tok != (Token{}) {
		t.Fatal("nil Event's Start returned a token")
	}
	m, _ := newTestMeter(t, Options{})
	m.Event("ev").Seen(nil)
	m.Event("ev").Complete(nil)
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name                   string
		opts                   Options
		window, slot, epoch    time.Duration
		ring, shards, nbuckets int
	}{
		{"defaults", Options{Shards: 4}, time.Second, time.Second, 5 * time.Second, 4, 4, len(DefaultLatencyBuckets)},
		{"short window", Options{Window: 500 * time.Millisecond, Shards: 1}, 500 * time.Millisecond, 500 * time.Millisecond, 5 * time.Second, 4, 1, len(DefaultLatencyBuckets)},
		{"fractional window", Options{Window: 2500 * time.Millisecond, Shards: 3}, 2499999999, 833333333, 5 * time.Second, 8, 4, len(DefaultLatencyBuckets)},
		{"long window", Options{Window: time.Minute, ActiveWindow: 2 * time.Minute, Shards: 100}, time.Minute, time.Minute / 16, 10 * time.Second, 32, maxShards, len(DefaultLatencyBuckets)},
		{"custom buckets", Options{LatencyBuckets: []float64{0.1, 1}, Shards: 2}, time.Second, time.Second, 5 * time.Second, 4, 2, 2},
		{"bad buckets", Options{LatencyBuckets: []float64{1, 0.1}, Shards: 2}, time.Second, time.Second, 5 * time.Second, 4, 2, len(DefaultLatencyBuckets)},
		{"NaN bucket", Options{LatencyBuckets: []float64{math.NaN()}, Shards: 2}, time.Second, time.Second, 5 * time.Second, 4, 2, len(DefaultLatencyBuckets)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := New(tc.opts).p
			got := []int64{p.windowNs, p.slotNs, p.epochNs, p.ringMask + 1, int64(p.shards), int64(len(p.bounds))}
			want := []int64{int64(tc.window), int64(tc.slot), int64(tc.epoch), int64(tc.ring), int64(tc.shards), int64(tc.nbuckets)}
			for i, name := range []string{"window", "slot", "epoch", "ring", "shards", "buckets"} {
				if got[i] != want[i] {
					t.Errorf("%s = %d, want %d", name, got[i], want[i])
				}
			}
		})
	}
	if s := New(Options{}).p.shards; s < runtime.GOMAXPROCS(0) || s&(s-1) != 0 {
		t.Errorf("default shards = %d, want a power of two ≥ GOMAXPROCS", s)
	}
}

// TestConcurrent hammers one event from many goroutines (run with -race)
// and checks that nothing is lost.
func TestConcurrent(t *testing.T) {
	m, c := newTestMeter(t, Options{Shards: 8})
	c.Set(10 * time.Second)
	e := m.Event("ev")
	c.Set(20 * time.Second)
	const workers, perWorker = 8, 500
	presences := make([]Presence, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				tok := e.Start()
				e.Seen(&presences[(w+i)%workers])
				status := 200
				if i%10 == 0 {
					status = 502
				}
				e.Done(tok, status, false)
				if w%2 == 0 {
					e.Complete(&presences[w]) // half the visitors complete
				}
			}
		})
	}
	// Measure and Collect while the writers run.
	wg.Go(func() {
		for range 50 {
			m.Measure("ev", c.Now())
			collect(t, m)
		}
	})
	wg.Wait()
	got := m.Measure("ev", t0.Add(20*time.Second+500*time.Millisecond))
	// All requests ended at 20 s; the window is [15.5 s, 20.5 s].
	if want := float64(workers*perWorker) / 5; !approx(got.RequestRate, want) {
		t.Errorf("RequestRate = %v, want %v", got.RequestRate, want)
	}
	if !approx(got.ErrorRate, 0.1) {
		t.Errorf("ErrorRate = %v, want 0.1", got.ErrorRate)
	}
	if got.InFlight != 0 || got.Active != workers/2 {
		t.Errorf("InFlight = %d, Active = %d; want 0 and %d (the visitors who did not complete)", got.InFlight, got.Active, workers/2)
	}
	s := collect(t, m)
	if n := s[`waitroom_origin_requests_total{class="2xx",event="ev"}`] + s[`waitroom_origin_requests_total{class="5xx",event="ev"}`]; n != workers*perWorker {
		t.Errorf("requests_total = %v, want %d", n, workers*perWorker)
	}
	if n := s[`waitroom_origin_completions_total{event="ev"}`]; n != workers/2 {
		t.Errorf("completions_total = %v, want %d", n, workers/2)
	}
}

// TestAtVariants: StartAt, DoneAt and SeenAt use the times they are
// given, not the clock.
func TestAtVariants(t *testing.T) {
	m, c := newTestMeter(t, Options{})
	e := m.Event("ev")
	c.Set(time.Hour) // the clock is far away: only the given times count
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for i := range 10 {
		start := 10*time.Second + time.Duration(i)*time.Millisecond
		tok := e.StartAt(at(start))
		e.DoneAt(tok, at(start+40*time.Millisecond), 200, false)
	}
	open := e.StartAt(at(11 * time.Second))
	var p, q Presence
	e.SeenAt(&p, at(11*time.Second))
	e.SeenAt(&q, at(11*time.Second))
	got := m.Measure("ev", at(12*time.Second))
	if !approx(got.RequestRate, 2) || !within(got.LatencyP95, 40*time.Millisecond) || got.InFlight != 1 || got.Active != 2 {
		t.Fatalf("got %+v, want 2 req/s, p95 40 ms, 1 in flight, 2 active", got)
	}
	if !within(got.LatencyMean, 40*time.Millisecond) || !approx(got.Answered, 10) {
		t.Fatalf("got %+v, want a mean of 40 ms over 10 answered", got)
	}
	e.DoneAt(open, at(11*time.Second), 0, true)
	if got := m.Measure("ev", at(12*time.Second)); got.InFlight != 0 || !approx(got.ErrorRate, 1.0/11) {
		t.Fatalf("got %+v, want none in flight, error rate 1/11", got)
	}
	var nilEvent *Event
	nilEvent.DoneAt(nilEvent.StartAt(at(0)), at(0), 200, false)
	nilEvent.SeenAt(&p, at(0))
}

// TestConcurrentMovingClock runs writers while the clock moves through
// many slots and epochs, so that slots and epochs are recycled under
// concurrent writes (run with -race); the cumulative counters lose
// nothing.
func TestConcurrentMovingClock(t *testing.T) {
	m, c := newTestMeter(t, Options{Shards: 4, Window: 2 * time.Second, ActiveWindow: 3 * time.Second})
	e := m.Event("ev")
	const workers, perWorker = 4, 2000
	presences := make([]Presence, 64)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				if i%50 == 0 {
					c.Add(37 * time.Millisecond)
				}
				tok := e.Start()
				e.Seen(&presences[(w*perWorker+i)%len(presences)])
				e.Done(tok, 200, i%7 == 0)
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			got := m.Measure("ev", c.Now())
			// A visitor moving to a newer epoch while Measure sums the
			// epochs may be counted in both: at most one per writer.
			if got.ErrorRate < 0 || got.ErrorRate > 1 || got.RequestRate < 0 || got.Active < 0 || got.Active > len(presences)+workers {
				t.Errorf("implausible figures %+v", got)
				return
			}
		}
	})
	wg.Wait()
	s := collect(t, m)
	if n := s[`waitroom_origin_requests_total{class="2xx",event="ev"}`] + s[`waitroom_origin_requests_total{class="failed",event="ev"}`]; n != workers*perWorker {
		t.Errorf("requests_total = %v, want %d", n, workers*perWorker)
	}
	if n := s[`waitroom_origin_in_flight_requests{event="ev"}`]; n != 0 {
		t.Errorf("in flight = %v, want 0", n)
	}
	// Once the clock is still, the active count is exact again: everyone
	// seen in the current epoch.
	c.Add(time.Minute)
	for i := range presences {
		e.Seen(&presences[i])
	}
	if got := m.Measure("ev", c.Now()).Active; got != len(presences) {
		t.Errorf("Active = %d, want %d", got, len(presences))
	}
}

// TestHandOver: a visitor whose pass is renewed keeps one place in the
// active count, carried by the new pass's Presence from then on.
func TestHandOver(t *testing.T) {
	m, _ := newTestMeter(t, Options{})
	e := m.Event("ev")
	var old, renewed, other Presence
	e.SeenAt(&old, t0)
	e.SeenAt(&other, t0)
	old.HandOver(&renewed)
	e.SeenAt(&renewed, t0.Add(20*time.Second))
	e.SeenAt(&old, t0.Add(21*time.Second)) // a request still carrying the old pass
	if got := m.Measure("ev", t0.Add(21*time.Second)).Active; got != 2 {
		t.Fatalf("after a renewal Active = %d, want 2", got)
	}
	// The old Presence left its epoch: once the window has passed the
	// first sighting, only the renewed one counts.
	e.SeenAt(&renewed, t0.Add(70*time.Second))
	if got := m.Measure("ev", t0.Add(70*time.Second)).Active; got != 1 {
		t.Fatalf("later Active = %d, want 1 (the renewed pass)", got)
	}
	// Completing through the renewed pass takes the visitor out.
	e.Complete(&renewed)
	if got := m.Measure("ev", t0.Add(70*time.Second)).Active; got != 0 {
		t.Fatalf("after completing Active = %d, want 0", got)
	}
}

// within tells whether got is want within the histogram's error (1/32,
// or 0.5 µs for tiny values).
func within(got, want time.Duration) bool {
	d := math.Abs(float64(got - want))
	return d <= 500 || d <= float64(want)/32
}

// TestSample: a sample has Measure's window (without moving its
// completions), the identified visitors seen within the active window
// by key with the end of the epoch they were last seen in, the others
// unlisted; a completed visitor is listed no more, a renewed pass keeps
// its visitor's key.
func TestSample(t *testing.T) {
	m, c := newTestMeter(t, Options{ActiveWindow: 60 * time.Second})
	e := m.Event("ev")
	va, vb := admission.VisitorID{1}, admission.VisitorID{2}
	var a, b, anon, done Presence
	a.Identify(va)
	b.Identify(vb)
	done.Identify(admission.VisitorID{3})
	c.Set(10 * time.Second)
	e.Seen(&a)
	e.Seen(&b)
	e.Seen(&anon)
	e.Seen(&done)
	request(e, c, 20*time.Millisecond, 200, false)
	request(e, c, 20*time.Millisecond, 503, false)
	c.Set(12 * time.Second)
	e.Complete(&done)
	c.Set(40 * time.Second)
	e.Seen(&b) // a later epoch: b's latest activity
	var renewed Presence
	a.HandOver(&renewed)
	c.Set(64 * time.Second) // a's epoch (10 s) is still in the window, the others' too
	request(e, c, 30*time.Millisecond, 200, false)
	s := e.Sample(c.Now())
	ms := e.Measure(c.Now())
	if s.Completions != 1 || ms.Completions != 1 {
		t.Errorf("completions: sample %d, Measure %d; want 1 each (Sample leaves Measure's alone)", s.Completions, ms.Completions)
	}
	if got := s.Requests / s.Window.Seconds(); !approx(got, ms.RequestRate) || s.Errors > s.Requests {
		t.Errorf("sample rate %v, Measure's %v", got, ms.RequestRate)
	}
	keys := map[uint32]time.Time{}
	for _, v := range s.Visitors {
		keys[v.Key] = v.Seen
	}
	ka, kb := admission.VisitorKey(va), admission.VisitorKey(vb)
	if len(keys) != 2 || keys[ka].IsZero() || keys[kb].IsZero() {
		t.Fatalf("visitors %+v; want a and b (not the completed one)", s.Visitors)
	}
	if !keys[kb].After(t0.Add(40*time.Second)) || keys[kb].After(t0.Add(46*time.Second)) ||
		!keys[ka].After(t0.Add(10*time.Second)) || keys[ka].After(t0.Add(16*time.Second)) {
		t.Errorf("last seen: a %v, b %v (t0 %v)", keys[ka], keys[kb], t0)
	}
	if s.Unlisted != 1 || ms.Active != 3 {
		t.Errorf("unlisted %d, active %d; want the anonymous one, and 3 active", s.Unlisted, ms.Active)
	}
	// The renewed pass carries a's key on.
	c.Set(80 * time.Second)
	e.Seen(&renewed)
	c.Set(110 * time.Second) // a (as renewed) at 80 s is in the window, b at 40 s is not
	s = e.Sample(c.Now())
	if len(s.Visitors) != 1 || s.Visitors[0].Key != ka {
		t.Errorf("visitors later: %+v, want a's key only", s.Visitors)
	}
}
