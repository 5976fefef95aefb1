package meter

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/loghist"
)

// Token is one request to the origin, from Start to Done: when it started
// and the shard it counts in. It is a small value; pass the one Start
// returned to Done exactly once. The zero Token is no request: Done
// ignores it.
type Token struct {
	at    int64 // ns since the meter's base, plus 1 (0: no request)
	shard uint32
}

// Presence is one admitted visitor's mark in an event's active count. The
// proxy embeds one in each cached pass entry, so that counting distinct
// visitors needs no lookup. The zero value is ready to use; it belongs to
// one Event, and must not be copied after first use. It is safe for
// concurrent use.
type Presence struct {
	epoch     atomic.Int64 // the last epoch the visitor was seen in (0: never; doneEpoch: completed)
	completed atomic.Bool
	// key is the visitor's admission.VisitorKey with bit 32 set, once
	// Identify named it (0: anonymous).
	key atomic.Uint64
}

// identified marks a Presence's key as set.
const identified = 1 << 32

// Identify names the visitor of p, so that the event's samples list it
// (see Event.Sample) and the leader counts it once however many replicas
// see it. Call it before p's first use (the proxy does when it caches a
// pass); an anonymous Presence is counted, but not named. An identified
// visitor costs the event a map entry until a Sample finds it gone
// (the admission engine samples every tick).
func (p *Presence) Identify(v admission.VisitorID) {
	p.key.Store(uint64(admission.VisitorKey(v)) | identified)
}

// Status classes of the requests_total series.
const (
	class5xx    = 4
	classOther  = 5 // a status outside 100–599
	classFailed = 6 // no answer from the origin: timeout, connection error, shed
	numClasses  = 7
)

var classNames = [numClasses]string{"1xx", "2xx", "3xx", "4xx", "5xx", "other", "failed"}

func classOf(status int, failed bool) int {
	switch {
	case failed:
		return classFailed
	case status >= 100 && status <= 599:
		return status/100 - 1
	}
	return classOther
}

// cacheLine pads the shards apart, so that cores writing to different
// shards do not share a cache line.
const cacheLine = 128

// slot holds one slot's worth of the window in one shard.
//
// Its counters are 32 bits, to halve the memory of the many slots: one
// shard's slot would need 4 × 10⁹ requests to wrap, over 10⁷ a second
// even in the slots of the longest windows.
type slot struct {
	tag      atomic.Int64 // the slot number held, plus 1 (0: never used)
	requests atomic.Uint32
	errors   atomic.Uint32
	hist     [loghist.Buckets]atomic.Uint32
}

// shard is one of an event's sets of counters; a request counts in one
// shard, picked at random at Start.
type shard struct {
	inFlight atomic.Int64
	classes  [numClasses]atomic.Uint64            // since the start, for export
	latSum   atomic.Uint64                        // ns, since the start, for export
	lat      [maxLatencyBuckets + 1]atomic.Uint64 // per exported bucket, then +Inf
	mu       sync.Mutex                           // taken to recycle a slot
	slots    []slot                               // the ring
	_        [cacheLine]byte
}

// slot returns the ring slot for slot number sn, recycling it when it
// holds an older one; nil when it already holds a newer one (the caller's
// time is too old to count).
func (sh *shard) slot(sn, mask int64) *slot {
	sl := &sh.slots[sn&mask]
	tag := sn + 1
	cur := sl.tag.Load()
	if cur == tag {
		return sl
	}
	if cur > tag {
		return nil
	}
	sh.mu.Lock()
	if cur = sl.tag.Load(); cur < tag {
		sl.requests.Store(0)
		sl.errors.Store(0)
		for i := range sl.hist {
			sl.hist[i].Store(0)
		}
		sl.tag.Store(tag)
	}
	sh.mu.Unlock()
	if cur > tag {
		return nil
	}
	return sl
}

// epochRing is how many epochs the active count keeps: the activeEpochs+1
// it sums, one ahead for a writer whose clock leads, and a margin that
// keeps a visitor's move out of an old epoch from landing on a recycled
// one.
const epochRing = 16

// epochCount is the number of visitors last seen in one epoch.
type epochCount struct {
	tag atomic.Int64 // the epoch (0: never used)
	n   atomic.Int64
}

// Event is one event's meter. Its methods are safe for concurrent use, and
// a nil *Event measures nothing (Start, Done, Seen and Complete do
// nothing), so a route without an event needs no branch.
type Event struct {
	id        string
	p         *params
	created   int64 // ns since the base
	shards    []shard
	shardMask uint32

	epochMu sync.Mutex // taken to recycle an epoch
	epochs  [epochRing]epochCount

	// named holds the identified visitors' last epochs by key: written
	// when a visitor enters an epoch (once per visitor and epoch), read
	// and pruned by Sample.
	namedMu sync.Mutex
	named   map[uint32]int64

	completions atomic.Uint64 // since the start
	reported    atomic.Uint64 // completions at the previous Measure
}

func newEvent(id string, p *params) *Event {
	e := &Event{
		id:        id,
		p:         p,
		created:   p.nanos(p.clock()),
		shards:    make([]shard, p.shards),
		shardMask: uint32(p.shards - 1),
		named:     make(map[uint32]int64),
	}
	for i := range e.shards {
		e.shards[i].slots = make([]slot, p.ringMask+1)
	}
	return e
}

// ID is the event's id.
func (e *Event) ID() string { return e.id }

// Start records that a request to the origin begins (one more in flight)
// and returns its Token for Done.
func (e *Event) Start() Token {
	if e == nil {
		return Token{}
	}
	return e.StartAt(e.p.clock())
}

// StartAt is Start at now, for a caller that has just read the clock
// anyway (a clock read costs tens of ns on some machines). now must come
// from the meter's clock (Options.Clock; time.Now by default).
func (e *Event) StartAt(now time.Time) Token {
	if e == nil {
		return Token{}
	}
	var s uint32
	if e.shardMask != 0 {
		s = rand.Uint32() & e.shardMask
	}
	e.shards[s].inFlight.Add(1)
	return Token{at: e.p.nanos(now) + 1, shard: s}
}

// Done records that the request of t ended: one fewer in flight, its
// latency (now − its start) when the origin answered, its status class.
// failed is a request the origin did not answer: a timeout, a connection
// error, or one shed by the proxy. Failed requests and 5xx statuses count
// as errors.
func (e *Event) Done(t Token, status int, failed bool) {
	if e == nil || t.at == 0 {
		return
	}
	e.DoneAt(t, e.p.clock(), status, failed)
}

// DoneAt is Done at now (see StartAt).
func (e *Event) DoneAt(t Token, now time.Time, status int, failed bool) {
	if e == nil || t.at == 0 {
		return
	}
	end := e.p.nanos(now)
	sh := &e.shards[t.shard&e.shardMask]
	sh.inFlight.Add(-1)
	class := classOf(status, failed)
	sh.classes[class].Add(1)
	var lat int64
	if !failed {
		lat = max(end-(t.at-1), 0)
		sh.latSum.Add(uint64(lat))
		sh.lat[e.p.exportBucket(lat)].Add(1)
	}
	sl := sh.slot(end/e.p.slotNs, e.p.ringMask)
	if sl == nil {
		return
	}
	sl.requests.Add(1)
	if failed || class == class5xx {
		sl.errors.Add(1)
	}
	if !failed {
		sl.hist[loghist.Bucket(uint64(lat)/1000)].Add(1)
	}
}

// exportBucket is the exported histogram bucket of a latency of ns.
func (p *params) exportBucket(ns int64) int {
	for i, b := range p.bounds {
		if ns <= b {
			return i
		}
	}
	return len(p.bounds)
}

// Seen records a request of the admitted visitor whose Presence p is: the
// visitor is active. Only the first call per visitor and epoch (a twelfth
// of ActiveWindow) writes a shared counter; the others are one clock read
// and one atomic load.
func (e *Event) Seen(p *Presence) {
	if e == nil || p == nil {
		return
	}
	e.SeenAt(p, e.p.clock())
}

// SeenAt is Seen at now (see StartAt). Seen needs only epoch precision,
// so the time the request arrived will do (fasthttp's RequestCtx.Time).
func (e *Event) SeenAt(p *Presence, now time.Time) {
	if e == nil || p == nil {
		return
	}
	ep := e.p.nanos(now)/e.p.epochNs + 1
	last := p.epoch.Load()
	if last >= ep || last == doneEpoch {
		return
	}
	for !p.epoch.CompareAndSwap(last, ep) {
		if last = p.epoch.Load(); last >= ep || last == doneEpoch {
			return
		}
	}
	e.epochInc(ep)
	if k := p.key.Load(); k != 0 {
		e.namedMu.Lock()
		if e.named[uint32(k)] < ep {
			e.named[uint32(k)] = ep
		}
		e.namedMu.Unlock()
	}
	if last > 0 && ep-last <= epochRing-4 {
		// The visitor leaves its old epoch. Older ones are out of every
		// sum already and may have been recycled: leave them alone.
		if c := &e.epochs[last%epochRing]; c.tag.Load() == last {
			c.n.Add(-1)
		}
	}
}

// HandOver moves p's place in the active count to q, the Presence of the
// same visitor's next pass (a renewed one): q counts from the epoch p was
// last seen in, and p counts no more. q must not have been seen yet. It is
// safe for concurrent use with SeenAt and Complete on either.
func (p *Presence) HandOver(q *Presence) {
	last := p.epoch.Swap(doneEpoch)
	if p.completed.Load() {
		q.completed.Store(true)
	}
	q.key.CompareAndSwap(0, p.key.Load())
	q.epoch.Store(last)
}

// epochInc counts one more visitor last seen in epoch ep.
func (e *Event) epochInc(ep int64) {
	c := &e.epochs[ep%epochRing]
	tag := c.tag.Load()
	if tag != ep {
		if tag > ep {
			return
		}
		e.epochMu.Lock()
		if tag = c.tag.Load(); tag < ep {
			c.n.Store(0)
			c.tag.Store(ep)
		}
		e.epochMu.Unlock()
		if tag > ep {
			return
		}
	}
	c.n.Add(1)
}

// Complete records that the origin said the visitor of p completed (a
// purchase); only the first call per Presence counts, and reports true.
func (e *Event) Complete(p *Presence) bool {
	if e == nil || p == nil || p.completed.Load() {
		return false
	}
	if !p.completed.CompareAndSwap(false, true) {
		return false
	}
	e.completions.Add(1)
	if k := p.key.Load(); k != 0 {
		e.namedMu.Lock()
		delete(e.named, uint32(k))
		e.namedMu.Unlock()
	}
	// A visitor who completed is done: they leave the active count now
	// rather than when ActiveWindow has passed, which frees their place
	// for the next visitor in the queue at once.
	for {
		last := p.epoch.Load()
		if last < 0 {
			return true
		}
		if !p.epoch.CompareAndSwap(last, doneEpoch) {
			continue
		}
		cur := e.p.nanos(e.p.clock())/e.p.epochNs + 1
		if last > 0 && cur-last <= epochRing-4 {
			if c := &e.epochs[last%epochRing]; c.tag.Load() == last {
				c.n.Add(-1)
			}
		}
		return true
	}
}

// doneEpoch marks a Presence whose visitor completed: never counted again.
const doneEpoch = -1

// Measure returns the event's figures at now (see the package doc).
// Completions count from the previous Measure call.
func (e *Event) Measure(now time.Time) admission.Measurements {
	var (
		w window
		m admission.Measurements
	)
	t := e.p.nanos(now)
	e.window(t, &w)
	if w.span > 0 {
		m.RequestRate = w.reqs / time.Duration(w.span).Seconds()
	}
	if w.reqs > 0 {
		m.ErrorRate = min(w.errs/w.reqs, 1)
	}
	m.LatencyP50 = loghist.Percentile(&w.hist, w.timed, 0.50)
	m.LatencyP95 = loghist.Percentile(&w.hist, w.timed, 0.95)
	m.LatencyP99 = loghist.Percentile(&w.hist, w.timed, 0.99)
	m.LatencyMean = loghist.Mean(&w.hist, w.timed)
	m.Answered = w.timed
	m.InFlight = int(max(w.inFlight, 0))
	m.Active = int(e.active(t))
	m.Completions = int(e.takeCompletions())
	return m
}

// Sample returns the event's sample at now, for the admission leader to
// sum with the other replicas' (admission.Sampler): the window's counts
// and latency histogram, the requests in flight, the completions since
// the meter started, and the identified visitors seen within
// ActiveWindow with the end of the epoch they were last seen in (those
// not seen since are forgotten here), in no order: the engine sorts
// what it publishes. Active visitors that were never
// identified are Unlisted. Minted and Redeemed are the engine's to fill.
// It does not move Measure's completions.
func (e *Event) Sample(now time.Time) admission.Sample {
	var w window
	t := e.p.nanos(now)
	e.window(t, &w)
	s := admission.Sample{At: now, Window: time.Duration(w.span), Requests: w.reqs, Errors: w.errs,
		Latency: w.hist, InFlight: int(max(w.inFlight, 0)), Completions: e.completions.Load()}
	cur := t/e.p.epochNs + 1
	e.namedMu.Lock()
	s.Visitors = make([]admission.SeenVisitor, 0, len(e.named))
	for k, ep := range e.named {
		if ep < cur-activeEpochs {
			delete(e.named, k)
			continue
		}
		seen := e.p.base.Add(time.Duration(ep * e.p.epochNs))
		if seen.After(now) {
			seen = now
		}
		s.Visitors = append(s.Visitors, admission.SeenVisitor{Key: k, Seen: seen})
	}
	e.namedMu.Unlock()
	s.Unlisted = int(max(e.active(t)-int64(len(s.Visitors)), 0))
	return s
}

// window is what the window ending at a time holds, summed over the
// shards.
type window struct {
	hist              [loghist.Buckets]float64
	reqs, errs, timed float64
	span              int64 // ns
	inFlight          int64
}

// window sums the window ending at t (ns since the base) into w.
func (e *Event) window(t int64, w *window) {
	p := e.p
	start, weighted := t-p.windowNs, true
	if start < e.created {
		start, weighted = e.created, false
	}
	first, last := start/p.slotNs, t/p.slotNs
	oldest := 1.0 // the share of the first slot inside the window
	if weighted {
		oldest = float64((first+1)*p.slotNs-start) / float64(p.slotNs)
	}
	for i := range e.shards {
		sh := &e.shards[i]
		w.inFlight += sh.inFlight.Load()
		for sn := first; sn <= last; sn++ {
			sl := &sh.slots[sn&p.ringMask]
			if sl.tag.Load() != sn+1 {
				continue
			}
			f := 1.0
			if sn == first {
				f = oldest
			}
			w.reqs += f * float64(sl.requests.Load())
			w.errs += f * float64(sl.errors.Load())
			for b := range sl.hist {
				if c := sl.hist[b].Load(); c != 0 {
					w.hist[b] += f * float64(c)
					w.timed += f * float64(c)
				}
			}
		}
	}
	w.span = max(t-start, 0)
}

// active is the number of visitors last seen in the epoch of t or the
// activeEpochs before it.
func (e *Event) active(t int64) int64 {
	cur := t/e.p.epochNs + 1
	var n int64
	for i := range e.epochs {
		c := &e.epochs[i]
		if tag := c.tag.Load(); tag >= cur-activeEpochs && tag <= cur {
			n += c.n.Load()
		}
	}
	return max(n, 0)
}

// takeCompletions returns the completions since the previous call.
func (e *Event) takeCompletions() uint64 {
	for {
		prev := e.reported.Load()
		cur := e.completions.Load()
		if e.reported.CompareAndSwap(prev, cur) {
			return cur - prev
		}
	}
}
