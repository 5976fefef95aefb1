package main

import (
	"encoding/json"
	"log"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/waitroom/waitroom/admission/sim/figures"
)

// Paths of the origin besides its pages.
const (
	originHealthPath = "/healthz"        // waitroom's health checks; not counted
	originSeriesPath = "/__bench/series" // the per-second figures so far, JSON
	checkoutPath     = "/gated/checkout" // answers X-Waitroom-Complete: 1
	originMarker     = "X-Bench-Origin"  // set on every page the origin served
)

// originConfig is the shape of the origin: Capacity requests served at
// once, each taking Latency; up to Queue more wait in line (FIFO), the
// rest are answered 503 with Retry-After: 1. Between BrownStart and
// BrownEnd after T0 the capacity is Capacity × BrownFactor.
type originConfig struct {
	T0                   time.Time
	Capacity, Queue      int
	Latency              time.Duration
	BrownStart, BrownEnd time.Duration // 0, 0: no brown-out
	BrownFactor          float64
}

// reduced is the capacity during the brown-out (at least 1).
func (c originConfig) reduced() int {
	return max(1, int(float64(c.Capacity)*c.BrownFactor+0.5))
}

// capacityAt is the capacity in force at offset d from T0.
func (c originConfig) capacityAt(d time.Duration) int {
	if c.BrownEnd > c.BrownStart && d >= c.BrownStart && d < c.BrownEnd {
		return c.reduced()
	}
	return c.Capacity
}

// second is what the origin recorded in one second after T0.
type second struct {
	busy      float64   // slot-seconds spent serving
	capSum    float64   // capacity-seconds on offer
	done      int       // pages answered 200
	checkouts int       // of which checkouts
	rejected  int       // answered 503: the queue was full
	maxQueue  int       // the longest the line was
	lat       []float64 // arrival to answer, ms, of the pages answered
}

// originRow is one second of the origin's series as it reports it.
type originRow struct {
	T         int     `json:"t"`
	Capacity  float64 `json:"capacity"` // mean slots on offer
	Busy      float64 `json:"busy"`     // mean slots in use
	Done      int     `json:"done"`
	Checkouts int     `json:"checkouts"`
	Rejected  int     `json:"rejected"`
	MaxQueue  int     `json:"max_queue"`
	P50       float64 `json:"p50_ms"` // 0 when nothing was answered
	P95       float64 `json:"p95_ms"`
}

// origin is the benchmark's shop: a fixed number of service slots and a
// bounded line in front of them. It is safe for concurrent use.
type origin struct {
	cfg originConfig

	mu    sync.Mutex
	cap   int
	busy  int
	queue []chan struct{}
	last  time.Time // busy is integrated up to here
	secs  []second
}

func newOrigin(cfg originConfig) *origin {
	return &origin{cfg: cfg, cap: cfg.capacityAt(time.Since(cfg.T0)), last: time.Now()}
}

// at returns the record of second i (growing the series), or nil for a
// time before T0.
func (o *origin) at(i int) *second {
	if i < 0 {
		return nil
	}
	for len(o.secs) <= i {
		o.secs = append(o.secs, second{})
	}
	return &o.secs[i]
}

func (o *origin) index(t time.Time) int {
	d := t.Sub(o.cfg.T0)
	if d < 0 {
		return -1
	}
	return int(d / time.Second)
}

// advance integrates the slots in use and on offer up to now, split at
// second boundaries. o.mu is held.
func (o *origin) advance(now time.Time) {
	for o.last.Before(now) {
		end := now
		var s *second
		if i := o.index(o.last); i >= 0 {
			s = o.at(i)
			if b := o.cfg.T0.Add(time.Duration(i+1) * time.Second); b.Before(end) {
				end = b
			}
		} else if o.cfg.T0.Before(end) {
			end = o.cfg.T0
		}
		if s != nil {
			dt := end.Sub(o.last).Seconds()
			s.busy += float64(o.busy) * dt
			s.capSum += float64(o.cap) * dt
		}
		o.last = end
	}
}

// handOff gives free slots to the head of the line. o.mu is held.
func (o *origin) handOff() {
	for o.busy < o.cap && len(o.queue) > 0 {
		o.busy++
		close(o.queue[0])
		o.queue = o.queue[1:]
	}
}

// setCapacity changes the slots on offer.
func (o *origin) setCapacity(n int) {
	o.mu.Lock()
	o.advance(time.Now())
	o.cap = n
	o.handOff()
	o.mu.Unlock()
}

// schedule applies the brown-out at its times.
func (o *origin) schedule() {
	c := o.cfg
	if c.BrownEnd <= c.BrownStart {
		return
	}
	time.AfterFunc(time.Until(c.T0.Add(c.BrownStart)), func() { o.setCapacity(c.reduced()) })
	time.AfterFunc(time.Until(c.T0.Add(c.BrownEnd)), func() { o.setCapacity(c.Capacity) })
}

// acquire takes a slot, waiting in line when all are busy; false when the
// line is full (or the client went away).
func (o *origin) acquire(r *http.Request) bool {
	o.mu.Lock()
	o.advance(time.Now())
	if o.busy < o.cap && len(o.queue) == 0 {
		o.busy++
		o.mu.Unlock()
		return true
	}
	if len(o.queue) >= o.cfg.Queue {
		if s := o.at(o.index(time.Now())); s != nil {
			s.rejected++
		}
		o.mu.Unlock()
		return false
	}
	ch := make(chan struct{})
	o.queue = append(o.queue, ch)
	if s := o.at(o.index(time.Now())); s != nil {
		s.maxQueue = max(s.maxQueue, len(o.queue))
	}
	o.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-r.Context().Done():
		o.mu.Lock()
		defer o.mu.Unlock()
		if i := slices.Index(o.queue, ch); i >= 0 {
			o.queue = slices.Delete(o.queue, i, i+1)
			return false
		}
		o.advance(time.Now()) // the slot was handed over meanwhile: give it back
		o.busy--
		o.handOff()
		return false
	}
}

// release frees a slot and records the page answered.
func (o *origin) release(arrived time.Time, checkout bool) {
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.advance(now)
	o.busy--
	o.handOff()
	if s := o.at(o.index(now)); s != nil {
		s.done++
		if checkout {
			s.checkouts++
		}
		s.lat = append(s.lat, float64(now.Sub(arrived))/float64(time.Millisecond))
	}
}

func (o *origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case originHealthPath:
		w.Write([]byte("ok\n"))
		return
	case originSeriesPath:
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(o.series())
		return
	}
	arrived := time.Now()
	if !o.acquire(r) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	time.Sleep(o.cfg.Latency)
	checkout := strings.HasPrefix(r.URL.Path, checkoutPath)
	o.release(arrived, checkout)
	w.Header().Set(originMarker, "1")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if checkout {
		w.Header().Set("X-Waitroom-Complete", "1")
	}
	w.Write([]byte("<!doctype html><title>shop</title><p>a page of the shop\n"))
}

// series reports every whole second so far.
func (o *origin) series() []originRow {
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	o.advance(now)
	n := min(len(o.secs), max(o.index(now), 0)) // the current second is not whole yet
	out := make([]originRow, n)
	for i := range n {
		s := o.secs[i]
		out[i] = originRow{T: i, Capacity: s.capSum, Busy: s.busy, Done: s.done, Checkouts: s.checkouts,
			Rejected: s.rejected, MaxQueue: s.maxQueue, P50: figures.Quantile(s.lat, 0.5), P95: figures.Quantile(s.lat, 0.95)}
	}
	return out
}

// runOrigin serves the origin on addr until killed.
func runOrigin(addr string, cfg originConfig) {
	o := newOrigin(cfg)
	o.schedule()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatalf("origin: %v", err)
	}
	srv := &http.Server{Handler: o, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 5 * time.Minute}
	log.Fatal(srv.Serve(ln))
}
