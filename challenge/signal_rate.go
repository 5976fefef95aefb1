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

// Reasons of RateSignal: per address, network prefix and fingerprint,
// over the window and (…_long) the long window.
const (
	ReasonRateIP              = "rate_ip"
	ReasonRatePrefix          = "rate_prefix"
	ReasonRateFingerprint     = "rate_fingerprint"
	ReasonRateIPLong          = "rate_ip_long"
	ReasonRatePrefixLong      = "rate_prefix_long"
	ReasonRateFingerprintLong = "rate_fingerprint_long"
)

// The default prefixes RateSignal counts per network: an IPv4 /24 and an
// IPv6 /48 (a site: an office's or a customer's whole allocation, where
// a /64 is one network of it). One IPv6 address is counted as its /64
// (RateAddressBitsV6): a host picks any address of its /64 at will.
const (
	RatePrefixBitsV4  = 24
	RatePrefixBitsV6  = 48
	RateAddressBitsV6 = 64
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

// RateWindow is a sliding window and the limits counted over it.
type RateWindow struct {
	// Window the rates are counted over, at least a second; 0 (for
	// RateOptions.Long) means no such window.
	Window time.Duration
	// PerIP limits the requests of one address (an IPv6 /64).
	PerIP RateLimit
	// PerPrefix limits the requests of one network prefix
	// (RateOptions.PrefixBitsV4, PrefixBitsV6).
	PerPrefix RateLimit
	// PerFingerprint limits the requests of one client fingerprint: the
	// JA4's TLSStack with the HeaderFingerprint, counted only for requests
	// with a JA4 whose stack is not a browser's (RateOptions.Browsers),
	// since every visitor of one browser version shares its fingerprint.
	PerFingerprint RateLimit
}

// RateOptions configures a RateSignal.
type RateOptions struct {
	// Window the rates are counted over, at least a second.
	Window time.Duration
	// PerIP, PerPrefix and PerFingerprint are the limits over Window (see
	// RateWindow).
	PerIP, PerPrefix, PerFingerprint RateLimit
	// Long is a second, longer window (an hour) for clients that pace
	// themselves under the short one's limits; its Window 0 means none.
	Long RateWindow
	// PrefixBitsV4 and PrefixBitsV6 are the prefix lengths PerPrefix
	// counts; 0 means RatePrefixBitsV4 (8 to 32) and RatePrefixBitsV6 (16
	// to 64).
	PrefixBitsV4, PrefixBitsV6 int
	// Browsers are JA4 fingerprints of browsers: requests with their
	// TLSStack are not counted per fingerprint.
	Browsers []string
	// MaxKeys bounds the addresses (and, separately, the prefixes and the
	// fingerprints) tracked; the least recently seen are forgotten first.
	// At least 1.
	MaxKeys int
	// Now is the clock for requests whose Request.Now is zero; nil means
	// time.Now.
	Now func() time.Time
}

// RateSignal judges a request by how many requests its address, its
// network prefix and its client fingerprint made recently, over a short
// window and optionally a long one; the highest suspicion of them counts.
//
// What is counted: the challenge fetches (Request.Join false), one per
// queue place tried, so that a place counts once and a client that
// fetches challenges to probe for easier work pays for every probe. A
// join (Request.Join true) is judged on the rates as they stand, without
// counting, so it scores what its challenge fetch scored unless others
// came since.
//
// Rates are sliding-window estimates: per key, the counts of the current
// and previous fixed windows, the previous one weighted by the part of it
// still inside the sliding window. Time is Request.Now (or the clock when
// zero); a request stamped earlier than the key's current window counts
// into it. IPv4-mapped IPv6 addresses count as IPv4; an IPv6 address
// counts as its /64. A request without an address is not judged by
// address or prefix.
//
// Memory is bounded by MaxKeys per table (about 200 bytes a key). It is
// safe for concurrent use; Check allocates nothing once its keys are
// tracked.
type RateSignal struct {
	windows  [2]int64 // nanoseconds; [1] is 0 without a long window
	limits   [2]RateWindow
	bits4    int
	bits6    int
	browsers map[string]bool
	now      func() time.Time
	ips      rateTable[netip.Prefix]
	prefixes rateTable[netip.Prefix]
	prints   rateTable[rateFingerprint]
	track    [3]bool // ip, prefix, fingerprint
}

// rateFingerprint is a fingerprint key: the JA4's TLSStack (the same on
// every connection, resumed or not) and the header fingerprint.
type rateFingerprint struct {
	stack   [ja4StackLen]byte
	headers [6]byte
}

// NewRateSignal returns a RateSignal for o, or an error (wrapping
// ErrInvalidRateOptions) listing every problem.
func NewRateSignal(o RateOptions) (*RateSignal, error) {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidRateOptions}, args...)...))
	}
	short := RateWindow{Window: o.Window, PerIP: o.PerIP, PerPrefix: o.PerPrefix, PerFingerprint: o.PerFingerprint}
	if o.Window < time.Second {
		fail("window %v is under a second", o.Window)
	}
	if o.Long.Window != 0 && o.Long.Window <= o.Window {
		fail("long window %v is not longer than the window %v", o.Long.Window, o.Window)
	}
	for _, w := range []struct {
		name string
		w    RateWindow
	}{{"", short}, {"long ", o.Long}} {
		for _, l := range []struct {
			name string
			l    RateLimit
		}{{"per-IP", w.w.PerIP}, {"per-prefix", w.w.PerPrefix}, {"per-fingerprint", w.w.PerFingerprint}} {
			if !l.l.off() && (l.l.Soft < 0 || l.l.Hard <= l.l.Soft) {
				fail("%s%s limit: want 0 ≤ soft < hard (got soft %d, hard %d)", w.name, l.name, l.l.Soft, l.l.Hard)
			}
		}
	}
	if o.PrefixBitsV4 == 0 {
		o.PrefixBitsV4 = RatePrefixBitsV4
	}
	if o.PrefixBitsV6 == 0 {
		o.PrefixBitsV6 = RatePrefixBitsV6
	}
	if o.PrefixBitsV4 < 8 || o.PrefixBitsV4 > 32 {
		fail("IPv4 prefix /%d is not /8 to /32", o.PrefixBitsV4)
	}
	if o.PrefixBitsV6 < 16 || o.PrefixBitsV6 > RateAddressBitsV6 {
		fail("IPv6 prefix /%d is not /16 to /64", o.PrefixBitsV6)
	}
	browsers := make(map[string]bool, len(o.Browsers))
	for i, b := range o.Browsers {
		if !ValidJA4(b) {
			fail("browser %d: %q is not a JA4 fingerprint", i, b)
		}
		browsers[TLSStack(b)] = true
	}
	if o.MaxKeys < 1 {
		fail("max keys %d is under 1", o.MaxKeys)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s := &RateSignal{
		windows: [2]int64{int64(o.Window), int64(o.Long.Window)},
		limits:  [2]RateWindow{short, o.Long},
		bits4:   o.PrefixBitsV4, bits6: o.PrefixBitsV6, browsers: browsers, now: o.Now,
	}
	if o.Long.Window == 0 {
		s.limits[1] = RateWindow{}
	}
	for _, l := range s.limits {
		s.track[0] = s.track[0] || !l.PerIP.off()
		s.track[1] = s.track[1] || !l.PerPrefix.off()
		s.track[2] = s.track[2] || !l.PerFingerprint.off()
	}
	if s.now == nil {
		s.now = time.Now
	}
	for _, t := range []interface{ init(int) error }{&s.ips, &s.prefixes, &s.prints} {
		if err := t.init(o.MaxKeys); err != nil {
			return nil, err
		}
	}
	return s, nil
}

var rateReasons = [2][3]string{
	{ReasonRateIP, ReasonRatePrefix, ReasonRateFingerprint},
	{ReasonRateIPLong, ReasonRatePrefixLong, ReasonRateFingerprintLong},
}

// Check implements Signal: it counts r (a challenge fetch) and judges
// the resulting rates.
func (s *RateSignal) Check(_ context.Context, r *Request) (Finding, error) {
	now := r.Now
	if now.IsZero() {
		now = s.now()
	}
	t, count := now.UnixNano(), !r.Join
	var f Finding
	judge := func(kind int, rates [2]float64) {
		for w := range rates {
			var l RateLimit
			switch kind {
			case 0:
				l = s.limits[w].PerIP
			case 1:
				l = s.limits[w].PerPrefix
			default:
				l = s.limits[w].PerFingerprint
			}
			if sus := l.suspicion(rates[w]); sus > f.Suspicion {
				f = Finding{Suspicion: sus, Reason: rateReasons[w][kind]}
			}
		}
	}
	if ip := r.IP.Unmap().WithZone(""); ip.IsValid() {
		if s.track[0] {
			bits := 32
			if ip.Is6() {
				bits = RateAddressBitsV6
			}
			p, _ := ip.Prefix(bits) // cannot fail: bits fits the family
			judge(0, s.ips.hit(p, t, s.windows, count))
		}
		if s.track[1] {
			bits := s.bits6
			if ip.Is4() {
				bits = s.bits4
			}
			p, _ := ip.Prefix(bits)
			judge(1, s.prefixes.hit(p, t, s.windows, count))
		}
	}
	if s.track[2] && ValidJA4(r.JA4) {
		var k rateFingerprint
		appendTLSStack(k.stack[:0], r.JA4)
		if !s.browsers[string(k.stack[:])] {
			k.headers = headerFingerprintSum(r.Headers)
			judge(2, s.prints.hit(k, t, s.windows, count))
		}
	}
	return f, nil
}

// rateTable is an LRU of sliding-window counters, one per window.
type rateTable[K comparable] struct {
	mu  sync.Mutex
	lru *simplelru.LRU[K, [2]rateCounter]
}

// rateCounter counts requests in fixed window win (start time ÷ window)
// and the one before.
type rateCounter struct {
	win       int64
	cur, prev uint32
}

func (t *rateTable[K]) init(size int) error {
	l, err := simplelru.NewLRU[K, [2]rateCounter](size, nil)
	if err != nil {
		return fmt.Errorf("challenge: rate table: %w", err)
	}
	t.lru = l
	return nil
}

// hit counts one request of key at unix-nanosecond time now, when count
// is set, and returns the sliding-window rates over each window (0 for a
// window of 0), the request included.
func (t *rateTable[K]) hit(key K, now int64, windows [2]int64, count bool) [2]float64 {
	var rates [2]float64
	t.mu.Lock()
	defer t.mu.Unlock()
	cs, found := t.lru.Peek(key)
	if !found && !count {
		return rates
	}
	for i, window := range windows {
		if window > 0 {
			rates[i] = cs[i].advance(now, window, count)
		}
	}
	if count {
		t.lru.Add(key, cs)
	}
	return rates
}

// advance moves c to the window of now, counts a request when count is
// set, and returns the sliding-window rate.
func (c *rateCounter) advance(now, window int64, count bool) float64 {
	win, into := now/window, now%window
	if into < 0 { // before 1970: floor, not truncate
		win, into = win-1, into+window
	}
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
	if count && c.cur < ^uint32(0) {
		c.cur++
	}
	weight := 1 - float64(into)/float64(window)
	return float64(c.prev)*weight + float64(c.cur)
}

var _ Signal = (*RateSignal)(nil)
