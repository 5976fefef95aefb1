package challenge

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Reasons of RateSignal.
const (
	ReasonRateIP     = "rate_ip"
	ReasonRatePrefix = "rate_prefix"
)

// The prefixes RateSignal counts per network: an IPv4 /24 and an IPv6
// /64 (the usual smallest allocation to one customer or site).
const (
	RatePrefixBitsV4 = 24
	RatePrefixBitsV6 = 64
)

// ErrInvalidRateOptions is returned (wrapped) by NewRateSignal.
var ErrInvalidRateOptions = errors.New("challenge: invalid rate signal options")

// RateLimit is a pair of request rates per window. At or below Soft a key
// is not suspicious; suspicion rises linearly to 1 at Hard. Both 0
// disables the limit.
type RateLimit struct {
	// Soft is the rate where suspicion starts to rise.
	Soft int
	// Hard is the rate of full suspicion; above Soft.
	Hard int
}

func (l RateLimit) off() bool { return l.Soft == 0 && l.Hard == 0 }

// suspicion of rate n.
func (l RateLimit) suspicion(n float64) float64 {
	switch {
	case l.off() || n <= float64(l.Soft):
		return 0
	case n >= float64(l.Hard):
		return 1
	}
	return (n - float64(l.Soft)) / float64(l.Hard-l.Soft)
}

// RateOptions configures a RateSignal.
type RateOptions struct {
	// Window the rates are counted over, at least a second.
	Window time.Duration
	// PerIP limits the requests of one address.
	PerIP RateLimit
	// PerPrefix limits the requests of one IPv4 /24 or IPv6 /64.
	PerPrefix RateLimit
	// MaxKeys bounds the addresses (and, separately, the prefixes)
	// tracked; the least recently seen are forgotten first. At least 1.
	MaxKeys int
	// Now is the clock for requests whose Request.Now is zero; nil means
	// time.Now.
	Now func() time.Time
}

// RateSignal judges a request by how many requests its address and its
// network prefix made recently. Every Check counts the request (a join
// attempt is counted when it is scored) and judges the new rate, so call
// it once per request.
//
// Rates are sliding-window estimates: per key, the counts of the current
// and previous fixed windows, the previous one weighted by the part of it
// still inside the sliding window. Time is Request.Now (or the clock when
// zero); a request stamped earlier than the key's current window counts
// into it. IPv4-mapped IPv6 addresses count as IPv4. A request without an
// address is not judged.
//
// Memory is bounded by MaxKeys per table (about 160 bytes a key). It is
// safe for concurrent use.
type RateSignal struct {
	window      int64 // nanoseconds
	perIP       RateLimit
	perPrefix   RateLimit
	now         func() time.Time
	ips         rateTable[netip.Addr]
	prefixes    rateTable[netip.Prefix]
	trackIP     bool
	trackPrefix bool
}

// NewRateSignal returns a RateSignal for o, or an error (wrapping
// ErrInvalidRateOptions) listing every problem.
func NewRateSignal(o RateOptions) (*RateSignal, error) {
	var errs []error
	if o.Window < time.Second {
		errs = append(errs, fmt.Errorf("%w: window %v is under a second", ErrInvalidRateOptions, o.Window))
	}
	for _, l := range []struct {
		name string
		l    RateLimit
	}{{"per-IP", o.PerIP}, {"per-prefix", o.PerPrefix}} {
		if !l.l.off() && (l.l.Soft < 0 || l.l.Hard <= l.l.Soft) {
			errs = append(errs, fmt.Errorf("%w: %s limit: want 0 ≤ soft < hard (got soft %d, hard %d)", ErrInvalidRateOptions, l.name, l.l.Soft, l.l.Hard))
		}
	}
	if o.MaxKeys < 1 {
		errs = append(errs, fmt.Errorf("%w: max keys %d is under 1", ErrInvalidRateOptions, o.MaxKeys))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s := &RateSignal{
		window: int64(o.Window), perIP: o.PerIP, perPrefix: o.PerPrefix, now: o.Now,
		trackIP: !o.PerIP.off(), trackPrefix: !o.PerPrefix.off(),
	}
	if s.now == nil {
		s.now = time.Now
	}
	if err := s.ips.init(o.MaxKeys); err != nil {
		return nil, err
	}
	if err := s.prefixes.init(o.MaxKeys); err != nil {
		return nil, err
	}
	return s, nil
}

// Check implements Signal: it counts r and judges the resulting rates.
func (s *RateSignal) Check(_ context.Context, r *Request) (Finding, error) {
	ip := r.IP.Unmap().WithZone("")
	if !ip.IsValid() {
		return Finding{}, nil
	}
	now := r.Now
	if now.IsZero() {
		now = s.now()
	}
	t := now.UnixNano()
	var f Finding
	if s.trackIP {
		if sus := s.perIP.suspicion(s.ips.hit(ip, t, s.window)); sus > 0 {
			f = Finding{Suspicion: sus, Reason: ReasonRateIP}
		}
	}
	if s.trackPrefix {
		bits := RatePrefixBitsV6
		if ip.Is4() {
			bits = RatePrefixBitsV4
		}
		p, _ := ip.Prefix(bits) // cannot fail: bits fits the family
		if sus := s.perPrefix.suspicion(s.prefixes.hit(p, t, s.window)); sus > f.Suspicion {
			f = Finding{Suspicion: sus, Reason: ReasonRatePrefix}
		}
	}
	return f, nil
}

// rateTable is an LRU of sliding-window counters.
type rateTable[K comparable] struct {
	mu  sync.Mutex
	lru *simplelru.LRU[K, rateCounter]
}

// rateCounter counts requests in fixed window win (start time ÷ window)
// and the one before.
type rateCounter struct {
	win       int64
	cur, prev uint32
}

func (t *rateTable[K]) init(size int) error {
	l, err := simplelru.NewLRU[K, rateCounter](size, nil)
	if err != nil {
		return fmt.Errorf("challenge: rate table: %w", err)
	}
	t.lru = l
	return nil
}

// hit counts one request of key at unix-nanosecond time now and returns
// the sliding-window rate including it.
func (t *rateTable[K]) hit(key K, now, window int64) float64 {
	win, into := now/window, now%window
	if into < 0 { // before 1970: floor, not truncate
		win, into = win-1, into+window
	}
	t.mu.Lock()
	c, _ := t.lru.Peek(key)
	switch {
	case c.cur == 0 && c.prev == 0:
		c.win = win
	case win == c.win+1:
		c.win, c.prev, c.cur = win, c.cur, 0
	case win > c.win+1:
		c.win, c.prev, c.cur = win, 0, 0
	case win < c.win:
		// Stamped before the key's current window (requests scored out of
		// order): count it into the current one.
		into = 0
	}
	if c.cur < ^uint32(0) {
		c.cur++
	}
	t.lru.Add(key, c)
	t.mu.Unlock()
	weight := 1 - float64(into)/float64(window)
	return float64(c.prev)*weight + float64(c.cur)
}

var _ Signal = (*RateSignal)(nil)
