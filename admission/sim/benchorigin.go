package sim

import (
	"math/rand/v2"
	"sort"
	"time"

	"github.com/waitroom/waitroom/admission/sim/figures"
)

// slotOrigin is bench/controller's origin in simulated time: Capacity
// requests served at once, each for the latency (plus the service
// overhead the real one shows), up to Queue more waiting in line (FIFO),
// the rest answered 503 at once; the capacity in force changes at the
// brown-out's times. It keeps the real origin's per-second record: slots
// in use and on offer integrated over each second, pages answered, 503s,
// the longest line, and the latencies (arrival to answer) of the pages
// answered. It is driven by the simulation's event loop and not safe for
// concurrent use.
type slotOrigin struct {
	loop *eventLoop
	// service is how long a request starting at start holds its slot;
	// queued tells that it waited in line and was handed the slot.
	service func(start time.Duration, queued bool) time.Duration

	queueMax int
	cap      int
	busy     int
	queue    []*originRequest
	last     time.Duration // busy is integrated up to here (after T0)
	secs     []originSecond
}

// originRequest is a request at the origin; answer is called when the
// origin answers it (status 200 or 503) at the loop's current time.
type originRequest struct {
	arrived time.Duration
	answer  func(status int, latency time.Duration)
}

// originSecond is what the origin recorded in one second after T0.
type originSecond struct {
	busy, capSum float64
	done         int
	rejected     int
	maxQueue     int
	lat          []float64 // ms
}

func newSlotOrigin(loop *eventLoop, capacity, queue int, service func(start time.Duration, queued bool) time.Duration) *slotOrigin {
	return &slotOrigin{loop: loop, cap: capacity, queueMax: queue, service: service, last: loop.now}
}

// at returns the record of the second holding d (growing the series), or
// nil before T0.
func (o *slotOrigin) at(d time.Duration) *originSecond {
	if d < 0 {
		return nil
	}
	i := int(d / time.Second)
	for len(o.secs) <= i {
		o.secs = append(o.secs, originSecond{})
	}
	return &o.secs[i]
}

// advance integrates the slots in use and on offer up to now, split at
// second boundaries.
func (o *slotOrigin) advance(now time.Duration) {
	for o.last < now {
		end := now
		var s *originSecond
		if o.last >= 0 {
			s = o.at(o.last)
			end = min(end, (o.last/time.Second+1)*time.Second)
		} else {
			end = min(end, 0)
		}
		if s != nil {
			dt := (end - o.last).Seconds()
			s.busy += float64(o.busy) * dt
			s.capSum += float64(o.cap) * dt
		}
		o.last = end
	}
}

// arrive is a request reaching the origin now.
func (o *slotOrigin) arrive(r *originRequest) {
	now := o.loop.now
	o.advance(now)
	r.arrived = now
	switch {
	case o.busy < o.cap && len(o.queue) == 0:
		o.busy++
		o.serve(r, false)
	case len(o.queue) >= o.queueMax:
		if s := o.at(now); s != nil {
			s.rejected++
		}
		r.answer(503, 0)
	default:
		o.queue = append(o.queue, r)
		if s := o.at(now); s != nil {
			s.maxQueue = max(s.maxQueue, len(o.queue))
		}
	}
}

// serve holds a slot for r and answers it when its service ends.
func (o *slotOrigin) serve(r *originRequest, queued bool) {
	o.loop.after(o.service(o.loop.now, queued), func() {
		now := o.loop.now
		o.advance(now)
		o.busy--
		o.handOff()
		if s := o.at(now); s != nil {
			s.done++
			s.lat = append(s.lat, float64(now-r.arrived)/float64(time.Millisecond))
		}
		r.answer(200, now-r.arrived)
	})
}

// handOff gives free slots to the head of the line.
func (o *slotOrigin) handOff() {
	for o.busy < o.cap && len(o.queue) > 0 {
		o.busy++
		r := o.queue[0]
		o.queue = o.queue[1:]
		o.serve(r, true)
	}
}

// setCapacity changes the slots on offer now.
func (o *slotOrigin) setCapacity(n int) {
	o.advance(o.loop.now)
	o.cap = n
	o.handOff()
}

// rows returns the first n whole seconds as the benchmark's rows (the
// crowd's and the waitroom's columns left for the caller).
func (o *slotOrigin) rows(n int) []figures.Row {
	o.advance(time.Duration(n) * time.Second)
	rows := make([]figures.Row, n)
	for i := range rows {
		var s originSecond
		if i < len(o.secs) {
			s = o.secs[i]
		}
		rows[i] = figures.Row{T: i, Capacity: s.capSum, Busy: s.busy, Done: s.done, Rejected: s.rejected,
			MaxQueue: s.maxQueue, P50: figures.Quantile(s.lat, 0.5), P95: figures.Quantile(s.lat, 0.95),
			Limit: -1, Serving: -1, Passes: -1}
	}
	return rows
}

// stalls are the origin's pauses (Model.StallRate, StallMean), drawn as
// they are needed: a Poisson process of stalls with exponentially
// distributed lengths, in time order, none overlapping.
type stalls struct {
	rate float64
	mean time.Duration
	rng  *rand.Rand
	from time.Duration // the next stall starts after this
	list []stall
}

type stall struct{ from, to time.Duration }

// at returns stall i, drawing it (and those before it) if need be.
func (s *stalls) at(i int) stall {
	for len(s.list) <= i {
		gap := time.Duration(s.rng.ExpFloat64() / s.rate * float64(time.Second))
		from := s.from + gap
		to := from + time.Duration(s.rng.ExpFloat64()*float64(s.mean))
		s.list = append(s.list, stall{from, to})
		s.from = to
	}
	return s.list[i]
}

// finish is when work started at start is done, the stalls it meets
// not counting.
func (s *stalls) finish(start, work time.Duration) time.Duration {
	if s.rate <= 0 || s.mean <= 0 {
		return start + work
	}
	// The first stall that ends after start (the list only grows, in
	// order, so that a search over what is drawn finds it or its place).
	i := sort.Search(len(s.list), func(i int) bool { return s.list[i].to > start })
	t := start
	for ; ; i++ {
		st := s.at(i)
		if st.from >= t+work {
			return t + work
		}
		if st.from > t {
			work -= st.from - t
		}
		t = max(t, st.to)
	}
}
