package admission

import (
	"sync"
	"sync/atomic"
	"time"
)

// Per-number state kept in memory, indexed by queue number: when the
// visitor last polled (liveness), and whether they came for their turn
// (claims). Both are chunked arrays of atomics: a status poll marks its
// number without a lock or an allocation, and growing (at each draw) adds
// chunks without copying or moving existing ones.

const (
	chunkBits = 16
	chunkLen  = 1 << chunkBits
	// liveTick is the resolution of liveness marks.
	liveTick = 4 * time.Second
)

// liveness remembers each number's last poll, in liveTick steps since a
// fixed origin (0: never polled). Safe for concurrent use.
type liveness struct {
	origin time.Time
	mu     sync.Mutex // serialises growth
	chunks atomic.Pointer[[]*[chunkLen]atomic.Uint32]
}

func newLiveness(origin time.Time) *liveness {
	l := &liveness{origin: origin}
	l.chunks.Store(&[]*[chunkLen]atomic.Uint32{})
	return l
}

// grow makes room for numbers up to n.
func (l *liveness) grow(n uint64) {
	need := int(n>>chunkBits) + 1
	if len(*l.chunks.Load()) >= need {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	cur := *l.chunks.Load()
	if len(cur) >= need {
		return
	}
	next := make([]*[chunkLen]atomic.Uint32, need)
	copy(next, cur)
	for i := len(cur); i < need; i++ {
		next[i] = new([chunkLen]atomic.Uint32)
	}
	l.chunks.Store(&next)
}

func (l *liveness) stamp(t time.Time) uint32 {
	return uint32(max(t.Sub(l.origin)/liveTick, 0)) + 1
}

// mark notes a poll by number n at t (numbers beyond the grown range are
// ignored: they are not drawn yet).
func (l *liveness) mark(n uint64, t time.Time) {
	chunks := *l.chunks.Load()
	if c := int(n >> chunkBits); c < len(chunks) {
		chunks[c][n&(chunkLen-1)].Store(l.stamp(t))
	}
}

// lastPoll returns when n last polled (rounded down to liveTick), or the
// zero time and false.
func (l *liveness) lastPoll(n uint64) (time.Time, bool) {
	chunks := *l.chunks.Load()
	c := int(n >> chunkBits)
	if c >= len(chunks) {
		return time.Time{}, false
	}
	s := chunks[c][n&(chunkLen-1)].Load()
	if s == 0 {
		return time.Time{}, false
	}
	return l.origin.Add(time.Duration(s-1) * liveTick), true
}

// bitset is a growable set of numbers. Safe for concurrent use.
type bitset struct {
	mu     sync.Mutex
	chunks atomic.Pointer[[]*[chunkLen / 64]atomic.Uint64]
}

func newBitset() *bitset {
	b := &bitset{}
	b.chunks.Store(&[]*[chunkLen / 64]atomic.Uint64{})
	return b
}

func (b *bitset) grow(n uint64) {
	need := int(n>>chunkBits) + 1
	if len(*b.chunks.Load()) >= need {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := *b.chunks.Load()
	if len(cur) >= need {
		return
	}
	next := make([]*[chunkLen / 64]atomic.Uint64, need)
	copy(next, cur)
	for i := len(cur); i < need; i++ {
		next[i] = new([chunkLen / 64]atomic.Uint64)
	}
	b.chunks.Store(&next)
}

// set adds n and reports whether it was absent (numbers beyond the grown
// range are grown first).
func (b *bitset) set(n uint64) bool {
	b.grow(n)
	chunks := *b.chunks.Load()
	w := &chunks[n>>chunkBits][(n&(chunkLen-1))>>6]
	bit := uint64(1) << (n & 63)
	for {
		old := w.Load()
		if old&bit != 0 {
			return false
		}
		if w.CompareAndSwap(old, old|bit) {
			return true
		}
	}
}

func (b *bitset) has(n uint64) bool {
	chunks := *b.chunks.Load()
	c := int(n >> chunkBits)
	if c >= len(chunks) {
		return false
	}
	return chunks[c][(n&(chunkLen-1))>>6].Load()&(uint64(1)<<(n&63)) != 0
}
