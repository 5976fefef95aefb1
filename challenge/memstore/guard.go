package memstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/bits-and-blooms/bloom/v3"

	"github.com/waitroom/waitroom/challenge"
)

// WindowSlack is added to Options.Window to make the filters' period.
const WindowSlack = time.Second

// Defaults of Options.
const (
	// DefaultWindow suits challenges that live up to ten minutes.
	DefaultWindow = 10 * time.Minute
	// DefaultExpectedPerWindow sizes each filter for a million ids
	// (about 3.6 MB at the default false-positive rate).
	DefaultExpectedPerWindow = 1_000_000
	// DefaultFalsePositiveRate: one fresh id in a million refused.
	DefaultFalsePositiveRate = 1e-6
	// DefaultMaxExact bounds the exact set (about 13 MB when full).
	DefaultMaxExact = 100_000
)

// Errors of Redeem, for errors.Is.
var (
	// ErrClosed: the guard was closed.
	ErrClosed = errors.New("memstore: replay guard closed")
	// ErrFull: the exact set is full of ids that expire beyond the
	// filters' reach, none of which can be dropped safely: Window is
	// shorter than the ids' lifetime.
	ErrFull = errors.New("memstore: replay guard full of long-lived ids")
)

// Options configure a Guard. Zero fields take the defaults.
type Options struct {
	// Window is the longest lifetime of the ids redeemed, normally the
	// challenge TTL. The filters rotate every Window plus WindowSlack, so
	// that an id expiring up to that long after it is redeemed is always
	// in a filter (challenge expiries are rounded up to whole seconds).
	// An id that lives longer may expire beyond the filters' reach: it is
	// then held in the exact set only, which never drops it before its
	// expiry (and Redeem fails with ErrFull when such ids fill the set).
	Window time.Duration
	// ExpectedPerWindow is how many ids may expire within one window
	// before the false-positive rate degrades.
	ExpectedPerWindow uint
	// FalsePositiveRate is the chance, while within ExpectedPerWindow,
	// that a fresh id is refused as a replay, in (0, 1).
	FalsePositiveRate float64
	// MaxExact bounds the exact set of redeemed ids.
	MaxExact int
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Guard is the in-process replay guard. It is safe for concurrent use:
// every Redeem is one check-and-set under one mutex.
type Guard struct {
	now      func() time.Time
	window   int64 // ns
	maxExact int

	mu     sync.Mutex
	closed bool
	cur    int64 // index of the current window: ⌊now/window⌋
	// blooms[w&1] holds the ids expiring in window w, for w = cur, cur+1.
	blooms [2]*bloom.BloomFilter
	exact  map[key]int64 // id → expiry (unix ns)
	byExp  expiryHeap    // the exact set's entries, earliest expiry first
	long   []key         // exact entries expiring at or after reach, in no filter
}

// key is an id as a map key: its length then its bytes, zero padded, or
// 0xff then its SHA-256 for ids longer than 32 bytes.
type key [33]byte

func keyOf(id []byte) key {
	var k key
	if len(id) <= 32 {
		k[0] = byte(len(id))
		copy(k[1:], id)
	} else {
		k[0] = 0xff
		h := sha256.Sum256(id)
		copy(k[1:], h[:])
	}
	return k
}

// New returns a Guard. Fields of opts out of range take their defaults.
func New(opts Options) *Guard {
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.ExpectedPerWindow == 0 {
		opts.ExpectedPerWindow = DefaultExpectedPerWindow
	}
	if !(opts.FalsePositiveRate > 0 && opts.FalsePositiveRate < 1) {
		opts.FalsePositiveRate = DefaultFalsePositiveRate
	}
	if opts.MaxExact <= 0 {
		opts.MaxExact = DefaultMaxExact
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	g := &Guard{now: opts.Now, window: int64(opts.Window + WindowSlack), maxExact: opts.MaxExact,
		exact: make(map[key]int64, min(opts.MaxExact, 1024))}
	for i := range g.blooms {
		g.blooms[i] = bloom.NewWithEstimates(opts.ExpectedPerWindow, opts.FalsePositiveRate)
	}
	g.cur = g.windowOf(nanos(g.now()))
	return g
}

// Redeem marks id used until expires and reports whether it was unused:
// false when id is in the exact set or either filter. An id whose expiry
// has passed is not marked (true, unless it is still known as used). The
// context is not consulted: Redeem never blocks on anything but the
// mutex.
func (g *Guard) Redeem(_ context.Context, id []byte, expires time.Time) (bool, error) {
	k := keyOf(id)
	exp := nanos(expires)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false, ErrClosed
	}
	now := nanos(g.now())
	g.advance(now)
	g.prune(now)
	if _, ok := g.exact[k]; ok {
		return false, nil
	}
	if g.blooms[0].Test(k[:]) || g.blooms[1].Test(k[:]) {
		return false, nil
	}
	if exp <= now {
		return true, nil
	}
	if len(g.exact) >= g.maxExact {
		// Drop the earliest-expiring id: it is in a filter unless it
		// expires beyond the reach, and then so does every other one.
		if g.byExp[0].exp >= g.reach() {
			return false, ErrFull
		}
		delete(g.exact, g.byExp.pop().k)
	}
	g.exact[k] = exp
	g.byExp.push(entry{exp: exp, k: k})
	if exp < g.reach() {
		g.blooms[g.windowOf(exp)&1].Add(k[:])
	} else {
		g.long = append(g.long, k)
	}
	return true, nil
}

// Close releases the filters; Redeem then fails with ErrClosed. Closing
// twice is harmless.
func (g *Guard) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	g.blooms = [2]*bloom.BloomFilter{}
	g.exact, g.byExp, g.long = nil, nil, nil
	return nil
}

// reach is the first expiry beyond the filters: the end of window cur+1.
func (g *Guard) reach() int64 { return satMul(g.cur+2, g.window) }

func (g *Guard) windowOf(t int64) int64 {
	w := t / g.window
	if t%g.window < 0 {
		w--
	}
	return w
}

// advance rotates the filters into now's window: those of windows that
// ended are cleared (their ids have all expired) and reused, and exact
// ids that came within reach are added to their filters.
func (g *Guard) advance(now int64) {
	w := g.windowOf(now)
	if w <= g.cur {
		return
	}
	if w == g.cur+1 {
		g.blooms[g.cur&1].ClearAll()
	} else {
		g.blooms[0].ClearAll()
		g.blooms[1].ClearAll()
	}
	g.cur = w
	reach := g.reach()
	keep := g.long[:0]
	for _, k := range g.long {
		exp, ok := g.exact[k]
		switch {
		case !ok || exp <= now: // pruned or about to be
		case exp < reach:
			g.blooms[g.windowOf(exp)&1].Add(k[:])
		default:
			keep = append(keep, k)
		}
	}
	clear(g.long[len(keep):])
	g.long = keep
}

// prune drops expired ids from the exact set.
func (g *Guard) prune(now int64) {
	for len(g.byExp) > 0 && g.byExp[0].exp <= now {
		delete(g.exact, g.byExp.pop().k)
	}
}

// nanos is t in unix nanoseconds, clamped to int64.
func nanos(t time.Time) int64 {
	switch {
	case t.Before(minTime):
		return math.MinInt64
	case t.After(maxTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

func satMul(a, b int64) int64 {
	if a > 0 && a > math.MaxInt64/b {
		return math.MaxInt64
	}
	if a < 0 && a < math.MinInt64/b {
		return math.MinInt64
	}
	return a * b
}

// entry is one id of the exact set in the expiry heap.
type entry struct {
	exp int64
	k   key
}

// expiryHeap is a binary min-heap by expiry (container/heap would box
// every entry).
type expiryHeap []entry

func (h *expiryHeap) push(e entry) {
	*h = append(*h, e)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].exp <= s[i].exp {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *expiryHeap) pop() entry {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(s) {
			break
		}
		m := l
		if r := l + 1; r < len(s) && s[r].exp < s[l].exp {
			m = r
		}
		if s[i].exp <= s[m].exp {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

var _ challenge.ReplayGuard = (*Guard)(nil)
