package sim

import (
	"container/heap"
	"time"
)

// eventLoop is the simulated time of a benchmark run: things to do at
// offsets from T0, done in time order (in the order they were scheduled
// when at the same time), each with the fake clock set to its time. It
// is not safe for concurrent use.
type eventLoop struct {
	t0  time.Time
	now time.Duration // after T0
	clk *fakeClock
	seq uint64
	q   loopQueue
}

type loopItem struct {
	at  time.Duration
	seq uint64
	fn  func()
}

type loopQueue []loopItem

func (q loopQueue) Len() int { return len(q) }
func (q loopQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q loopQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *loopQueue) Push(x any)   { *q = append(*q, x.(loopItem)) }
func (q *loopQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

func newEventLoop(t0 time.Time) *eventLoop {
	l := &eventLoop{t0: t0, clk: &fakeClock{}}
	l.set(0)
	return l
}

// set moves the clock to d after T0.
func (l *eventLoop) set(d time.Duration) {
	l.now = d
	l.clk.set(l.t0.Add(d))
}

// time is the simulated time now.
func (l *eventLoop) time() time.Time { return l.t0.Add(l.now) }

// at schedules fn at d after T0 (now, if d is past).
func (l *eventLoop) at(d time.Duration, fn func()) {
	l.seq++
	heap.Push(&l.q, loopItem{at: max(d, l.now), seq: l.seq, fn: fn})
}

// after schedules fn d from now.
func (l *eventLoop) after(d time.Duration, fn func()) { l.at(l.now+d, fn) }

// run does everything due up to until, in order, and stops early when
// stop says so.
func (l *eventLoop) run(until time.Duration, stop func() bool) {
	for l.q.Len() > 0 && l.q[0].at <= until && !stop() {
		it := heap.Pop(&l.q).(loopItem)
		l.set(it.at)
		it.fn()
	}
}
