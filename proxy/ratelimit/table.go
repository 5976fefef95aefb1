package ratelimit

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"unsafe"
)

const (
	// maxShards bounds a table's shards.
	maxShards = 64
	// minPerShard is the fewest entries a shard is given when the table
	// is small: small tables get fewer shards, so that their LRU order
	// stays close to a global one.
	minPerShard = 64
	// initialEntries is how many entries a shard has room for before it
	// first grows; shards grow up to their capacity as keys come.
	initialEntries = 16
	// none is the null index of the LRU links.
	none = -1
)

// entry is one key's state.
type entry struct {
	key        key
	prev, next int32   // LRU neighbours: prev is more recent
	tat        int64   // the bucket's theoretical arrival time, ns
	rate       float64 // decayed request rate at rateAt, per second
	rateAt     int64   // when rate was last updated, ns
}

// observe counts a request at now in the decayed rate: the rate decays
// with time constant tau (ns) and each request adds 1/tau per second.
func (e *entry) observe(now int64, tau float64) {
	e.rate = e.decayed(now, tau) + 1e9/tau
	e.rateAt = max(now, e.rateAt)
}

// decayed is the rate at now, in requests per second.
func (e *entry) decayed(now int64, tau float64) float64 {
	if dt := now - e.rateAt; dt > 0 {
		return e.rate * decay(float64(dt)/tau)
	}
	return e.rate
}

// decay is e^−x for x > 0. An address that sends requests microseconds
// apart (a flood, exactly what the limiter is for) decays its rate by a
// tiny x on each, where the series' first terms are exact to 1e-10 and
// cost a fraction of math.Exp.
func decay(x float64) float64 {
	if x < 1.0/1024 {
		return 1 - x + x*x/2 // error below x³/6 < 2e-10
	}
	return math.Exp(-x)
}

// shard is one LRU of a table. Its fields are guarded by mu.
type shard struct {
	shardFields
	// Pad to whole cache lines, so that two shards' locks and links never
	// share one (the shards are an array).
	_ [cacheLine - unsafe.Sizeof(shardFields{})%cacheLine]byte
}

type shardFields struct {
	mu         sync.Mutex
	index      map[key]int32
	entries    []entry
	capacity   int
	head, tail int32 // most and least recently used; none when empty
}

// cacheLine is a cache line's size, with room for adjacent-line
// prefetching.
const cacheLine = 128

// table is a sharded LRU of keys. It is safe for concurrent use through
// its shards' mutexes.
type table struct {
	shards []shard
	shift  uint // 64 − log2(len(shards))
	seed   [2]uint64
}

// newTable returns a table of size entries in all (at least one per
// shard).
func newTable(size int) *table {
	n := 1
	for n < maxShards && size/(2*n) >= minPerShard {
		n *= 2
	}
	t := &table{
		shards: make([]shard, n),
		shift:  uint(64 - bits.TrailingZeros(uint(n))),
		seed:   [2]uint64{rand.Uint64(), rand.Uint64()},
	}
	for i := range t.shards {
		c := size / n
		if i < size%n {
			c++
		}
		c = max(c, 1)
		t.shards[i].shardFields = shardFields{
			index:    make(map[key]int32, min(c, initialEntries)),
			entries:  make([]entry, 0, min(c, initialEntries)),
			capacity: c,
			head:     none,
			tail:     none,
		}
	}
	return t
}

// shardOf is k's shard, by a hash seeded per table so that a client
// cannot choose addresses that crowd one shard.
func (t *table) shardOf(k key) *shard {
	h := (k.hi ^ t.seed[0]) * 0x9e3779b97f4a7c15
	h = (h ^ k.lo ^ t.seed[1]) * 0xbf58476d1ce4e5b9
	h ^= h >> 31
	h *= 0x94d049bb133111eb
	return &t.shards[h>>t.shift&uint64(len(t.shards)-1)]
}

// rate is k's decayed request rate at now; 0 when k is not tracked. It
// does not count as a use of k.
func (t *table) rate(k key, now int64, tau float64) float64 {
	s := t.shardOf(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.index[k]
	if !ok {
		return 0
	}
	return s.entries[i].decayed(now, tau)
}

// touch returns k's entry, made the most recently used; a new key gets a
// fresh entry (full bucket, no rate), in the least recently used one's
// place when the shard is full. The caller holds s.mu, and the pointer is
// valid until it releases it.
func (s *shard) touch(k key, now int64) *entry {
	if i, ok := s.index[k]; ok {
		s.toFront(i)
		return &s.entries[i]
	}
	var i int32
	if len(s.entries) < s.capacity {
		i = int32(len(s.entries))
		s.entries = append(s.entries, entry{})
	} else {
		i = s.tail
		s.unlink(i)
		delete(s.index, s.entries[i].key)
	}
	s.entries[i] = entry{key: k, prev: none, next: none, rateAt: now}
	s.index[k] = i
	s.pushFront(i)
	return &s.entries[i]
}

func (s *shard) toFront(i int32) {
	if s.head == i {
		return
	}
	s.unlink(i)
	s.pushFront(i)
}

func (s *shard) unlink(i int32) {
	e := &s.entries[i]
	if e.prev != none {
		s.entries[e.prev].next = e.next
	} else {
		s.head = e.next
	}
	if e.next != none {
		s.entries[e.next].prev = e.prev
	} else {
		s.tail = e.prev
	}
	e.prev, e.next = none, none
}

func (s *shard) pushFront(i int32) {
	e := &s.entries[i]
	e.prev, e.next = none, s.head
	if s.head != none {
		s.entries[s.head].prev = i
	}
	s.head = i
	if s.tail == none {
		s.tail = i
	}
}
