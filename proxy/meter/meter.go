package meter

import (
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// Defaults of Options.
const (
	// DefaultWindow is how much recent traffic the rates and percentiles
	// cover: the last second, so that the controller, which reads them
	// every second, decides on fresh figures (it smooths what it needs
	// to itself).
	DefaultWindow = time.Second
	// DefaultActiveWindow is how recently a visitor must have been seen
	// to count as active.
	DefaultActiveWindow = 60 * time.Second
	// DefaultSlot is the length of one slot of the window while the window
	// is at most maxSlots slots long.
	DefaultSlot = time.Second
)

// DefaultLatencyBuckets are the upper bounds, in seconds, of the
// waitroom_origin_request_duration_seconds histogram.
var DefaultLatencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

const (
	// maxSlots bounds the slots of a window: longer windows get longer
	// slots, so that memory per event stays small.
	maxSlots = 16
	// maxLatencyBuckets bounds Options.LatencyBuckets.
	maxLatencyBuckets = 32
	// maxShards bounds the shards of an event.
	maxShards = 32
	// activeEpochs is how many epochs one ActiveWindow spans.
	activeEpochs = 12
)

// Options configure a Meter. The zero value is usable: every field has a
// default.
type Options struct {
	// Window is how much recent traffic RequestRate, ErrorRate and the
	// latency percentiles cover (default 1 s). It is cut in ⌈Window/1 s⌉
	// equal slots, at most 16: 1 s slots by default, Window/16 for windows
	// over 16 s.
	Window time.Duration
	// ActiveWindow is how recently a visitor must have been seen to count
	// as active (default 60 s; see the package doc for the approximation).
	ActiveWindow time.Duration
	// Clock tells the time of Start, Done and Seen calls and of the
	// Prometheus gauges (default time.Now). It must be safe for concurrent
	// use; Measure is told its time by its caller.
	Clock func() time.Time
	// LatencyBuckets are the upper bounds in seconds of the exported
	// latency histogram, increasing, at most 32 (default
	// DefaultLatencyBuckets).
	LatencyBuckets []float64
	// Shards is how many shards each event's counters are spread over
	// (rounded up to a power of two, at most 32; default 4 × GOMAXPROCS).
	// A request counts in a shard picked at random, so two cores collide
	// on one with a chance of 1/Shards; more shards mean less contention
	// and more memory: about 1.6 KB per shard and slot of the ring (8
	// slots for the default window).
	Shards int
}

// Meter measures the origin's traffic for every event registered with
// Event. It is safe for concurrent use.
type Meter struct {
	p params

	mu     sync.RWMutex
	events map[string]*Event
	order  []*Event // registration order, for Collect
}

// params are what every Event of a Meter shares.
type params struct {
	clock    func() time.Time
	base     time.Time // time zero of the slot and epoch numbers
	slotNs   int64
	windowNs int64
	ringMask int64 // slots in a shard's ring − 1
	epochNs  int64
	shards   int
	bounds   []int64   // latency bucket upper bounds in ns
	boundsS  []float64 // the same in seconds, for export
}

// New returns a Meter with opts (zero fields take their defaults;
// LatencyBuckets that are not increasing and positive are replaced by the
// default).
func New(opts Options) *Meter {
	p := params{clock: opts.Clock}
	if p.clock == nil {
		p.clock = time.Now
	}
	p.base = p.clock()
	w := opts.Window
	if w <= 0 {
		w = DefaultWindow
	}
	n := int64((w + DefaultSlot - 1) / DefaultSlot)
	n = min(max(n, 1), maxSlots)
	p.slotNs = max(int64(w)/n, 1)
	p.windowNs = n * p.slotNs // a whole number of slots (w, less a few ns)
	// The ring holds the window's n slots, the one partly before it, and
	// a spare for a writer whose clock reads a little ahead of Measure's.
	p.ringMask = int64(1)<<bits.Len64(uint64(n+1)) - 1
	aw := opts.ActiveWindow
	if aw <= 0 {
		aw = DefaultActiveWindow
	}
	p.epochNs = max(int64(aw)/activeEpochs, 1)
	s := opts.Shards
	if s <= 0 {
		s = 4 * runtime.GOMAXPROCS(0)
	}
	s = min(s, maxShards)
	p.shards = 1 << bits.Len(uint(s-1))
	b := opts.LatencyBuckets
	if !validBuckets(b) {
		b = DefaultLatencyBuckets
	}
	p.boundsS = slices.Clone(b)
	p.bounds = make([]int64, len(b))
	for i, s := range b {
		p.bounds[i] = int64(s * float64(time.Second))
	}
	return &Meter{p: p, events: make(map[string]*Event)}
}

func validBuckets(b []float64) bool {
	if len(b) == 0 || len(b) > maxLatencyBuckets {
		return false
	}
	for i, v := range b {
		if !(v > 0) || v > 1e9 || (i > 0 && v <= b[i-1]) {
			return false
		}
	}
	return true
}

// nanos is the time t in nanoseconds since the meter's base, never
// negative.
func (p *params) nanos(t time.Time) int64 {
	return max(int64(t.Sub(p.base)), 0)
}

// Event returns the meter of event id, registering it on first use. It is
// meant for setup time (it takes a lock); the proxy keeps the pointer.
func (m *Meter) Event(id string) *Event {
	m.mu.RLock()
	e := m.events[id]
	m.mu.RUnlock()
	if e != nil {
		return e
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e = m.events[id]; e == nil {
		e = newEvent(id, &m.p)
		m.events[id] = e
		m.order = append(m.order, e)
	}
	return e
}

// Lookup returns the meter of event id, or nil when it was never
// registered.
func (m *Meter) Lookup(id string) *Event {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.events[id]
}

// Measure returns event's figures at now (see the package doc); an event
// never registered measures zero. Completions count from the previous
// Measure call for the event, so one caller (the admission engine) should
// own the calls.
func (m *Meter) Measure(event string, now time.Time) admission.Measurements {
	e := m.Lookup(event)
	if e == nil {
		return admission.Measurements{}
	}
	return e.Measure(now)
}

// Sample returns event's sample at now (see Event.Sample); an event
// never registered has an empty one.
func (m *Meter) Sample(event string, now time.Time) admission.Sample {
	e := m.Lookup(event)
	if e == nil {
		return admission.Sample{At: now}
	}
	return e.Sample(now)
}

// snapshot is the registered events in registration order.
func (m *Meter) snapshot() []*Event {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Clone(m.order)
}

var _ admission.Sampler = (*Meter)(nil)
