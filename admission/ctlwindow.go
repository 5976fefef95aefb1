package admission

import (
	"math"
	"time"
)

// ctlExtreme is a windowed minimum or maximum, the way BBR keeps its
// minimum round trip and its maximum delivery rate: the window is cut in
// buckets of equal width, each holds the extreme of the samples that fell
// in it, and the extreme of the window is the extreme over the buckets
// younger than the window. A sample older than the window is forgotten
// however extreme it was, so an origin that got slower (or faster) for
// good is followed within one window. The zero value is unusable: see
// newCtlExtreme.
type ctlExtreme struct {
	width int64 // ns per bucket
	max   bool  // a maximum (else a minimum)
	idx   []int64
	val   []float64
}

// newCtlExtreme returns an empty windowed minimum (or maximum, with max)
// over window, in n buckets.
func newCtlExtreme(window time.Duration, n int, max bool) ctlExtreme {
	return ctlExtreme{width: int64(window) / int64(n), max: max, idx: make([]int64, n), val: make([]float64, n)}
}

// note adds a sample taken at t.
func (e *ctlExtreme) note(t time.Time, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	k := t.UnixNano()/e.width + 1 // 0 marks an empty bucket
	i := int(k % int64(len(e.idx)))
	if e.idx[i] != k {
		e.idx[i], e.val[i] = k, v
		return
	}
	if (e.max && v > e.val[i]) || (!e.max && v < e.val[i]) {
		e.val[i] = v
	}
}

// get returns the extreme of the samples within the window before t, and
// whether there is any.
func (e *ctlExtreme) get(t time.Time) (float64, bool) {
	k := t.UnixNano()/e.width + 1
	n := int64(len(e.idx))
	best, ok := 0.0, false
	for i, b := range e.idx {
		if b == 0 || b > k || b <= k-n {
			continue
		}
		v := e.val[i]
		if !ok || (e.max && v > best) || (!e.max && v < best) {
			best, ok = v, true
		}
	}
	return best, ok
}

// reset forgets every sample.
func (e *ctlExtreme) reset() { clear(e.idx) }

// ctlEWMA is an exponentially weighted moving average per tick. The zero
// value is empty: its first sample is taken whole.
type ctlEWMA struct {
	v   float64
	set bool
}

func (a *ctlEWMA) add(x, alpha float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return
	}
	if !a.set {
		a.v, a.set = x, true
		return
	}
	a.v += alpha * (x - a.v)
}
