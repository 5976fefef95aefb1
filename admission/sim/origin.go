package sim

import (
	"container/heap"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// Origin is a simulated ticket site serving admitted visitors. Each
// shopper sends a request, waits for the answer, thinks, and sends the
// next, until Requests of them succeeded (a purchase): then they leave,
// counting as a completion. The site serves up to its capacity in
// requests per second in arrival order; what it cannot serve waits, so
// latency grows with the backlog, and a request that waited longer than
// Timeout fails. The capacity is given in visitors per minute (what the
// site can sell), i.e. PerMinute/60 × Requests requests per second.
type Origin struct {
	// Capacity is the site's capacity over time: each step holds from At
	// until the next.
	Capacity []CapacityStep
	// Requests is how many successful requests a purchase takes on
	// average (20; each shopper needs between 75 % and 125 % of it).
	Requests int
	// Think is the mean pause between a shopper's requests (2 s,
	// exponentially distributed).
	Think time.Duration
	// Base is the latency of a request that does not wait (50 ms).
	Base time.Duration
	// Timeout fails a request that waited this long (5 s).
	Timeout time.Duration
}

// CapacityStep is the origin's capacity from At on.
type CapacityStep struct {
	At        time.Duration
	PerMinute float64
}

// origin is the running model: one FIFO server whose service rate is the
// capacity in requests per second. A request starts when it arrives or
// when the request before it is done, whichever is later; one that would
// have waited longer than the timeout fails instead.
type origin struct {
	cfg     Origin
	rng     *rand.Rand
	free    time.Time // when the server finishes what it has taken on
	serving []*shopper

	// This tick's measurements, and the last few ticks' for the sliding
	// window the proxy measures over.
	lat         []time.Duration
	requests    int
	errors      int
	completions int
	recent      []tickSample
}

// tickSample is one tick's requests, kept for the measurement window.
type tickSample struct {
	lat              []time.Duration
	requests, errors int
}

// measureTicks is the proxy's measurement window, in ticks.
const measureTicks = 5

type shopper struct {
	v      *visitor
	next   time.Time // when the next request goes out
	needs  int       // successful requests to finish
	done   int
	failed int
	left   bool
}

func newOrigin(cfg Origin, rng *rand.Rand) *origin {
	if cfg.Requests <= 0 {
		cfg.Requests = 20
	}
	if cfg.Think <= 0 {
		cfg.Think = 2 * time.Second
	}
	if cfg.Base <= 0 {
		cfg.Base = 50 * time.Millisecond
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	return &origin{cfg: cfg, rng: rng}
}

// capacity is visitors per minute at offset d.
func (o *origin) capacity(d time.Duration) float64 {
	c := 0.0
	for _, s := range o.cfg.Capacity {
		if d >= s.At {
			c = s.PerMinute
		}
	}
	return c
}

// enter starts a visitor shopping.
func (o *origin) enter(v *visitor, now time.Time) {
	lo := o.cfg.Requests * 3 / 4
	needs := lo + o.rng.IntN(o.cfg.Requests/2+1)
	o.serving = append(o.serving, &shopper{v: v, next: now, needs: max(needs, 1)})
}

// step serves the requests sent up to now in the order they were sent,
// including the ones shoppers send during the step.
func (o *origin) step(now time.Time, offset time.Duration) {
	o.lat, o.requests, o.errors, o.completions = o.lat[:0], 0, 0, 0
	perSec := o.capacity(offset) / 60 * float64(o.cfg.Requests)
	due := &shopperQueue{}
	for _, s := range o.serving {
		if !s.next.After(now) {
			heap.Push(due, s)
		}
	}
	for due.Len() > 0 {
		s := heap.Pop(due).(*shopper)
		sent := s.next
		o.requests++
		start := maxTime(sent, o.free)
		if perSec <= 0 || start.Sub(sent) > o.cfg.Timeout {
			o.errors++
			s.failed++
			if s.failed > 10 {
				s.left = true // gives up
				continue
			}
			s.next = sent.Add(o.cfg.Timeout + o.think()) // retries after the timeout
		} else {
			o.free = start.Add(time.Duration(float64(time.Second) / perSec))
			done := o.free.Add(o.cfg.Base)
			o.lat = append(o.lat, done.Sub(sent))
			s.done++
			if s.done >= s.needs {
				s.left = true
				s.v.completed = done
				o.completions++
				continue
			}
			s.next = done.Add(o.think())
		}
		if !s.next.After(now) {
			heap.Push(due, s)
		}
	}
	o.serving = slices.DeleteFunc(o.serving, func(s *shopper) bool { return s.left })
	o.recent = append(o.recent, tickSample{lat: slices.Clone(o.lat), requests: o.requests, errors: o.errors})
	if len(o.recent) > measureTicks {
		o.recent = o.recent[1:]
	}
}

// shopperQueue orders shoppers by when their next request goes out.
type shopperQueue []*shopper

func (q shopperQueue) Len() int           { return len(q) }
func (q shopperQueue) Less(i, j int) bool { return q[i].next.Before(q[j].next) }
func (q shopperQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *shopperQueue) Push(x any)        { *q = append(*q, x.(*shopper)) }
func (q *shopperQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

func (o *origin) think() time.Duration {
	return time.Duration(o.rng.ExpFloat64() * float64(o.cfg.Think))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// measure is what the proxy would report at this tick: latency and
// errors over its sliding window of the last few ticks, the rest now.
func (o *origin) measure() admission.Measurements {
	m := admission.Measurements{Completions: o.completions, Active: len(o.serving)}
	var lat []time.Duration
	requests, errors := 0, 0
	for _, t := range o.recent {
		lat = append(lat, t.lat...)
		requests += t.requests
		errors += t.errors
	}
	if requests > 0 {
		m.RequestRate = float64(requests) / float64(len(o.recent))
		m.ErrorRate = float64(errors) / float64(requests)
	}
	if len(lat) > 0 {
		slices.Sort(lat)
		m.LatencyP50 = lat[len(lat)/2]
		m.LatencyP95 = lat[len(lat)*95/100]
	} else if errors > 0 {
		m.LatencyP50, m.LatencyP95 = o.cfg.Timeout, o.cfg.Timeout
	}
	return m
}
