package ratelimit

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strings"
	"time"
)

// Defaults of Config.
const (
	DefaultIPv4Prefix = 24
	DefaultIPv6Prefix = 48
	DefaultTableSize  = 1 << 16
	DefaultRateWindow = 10 * time.Second
)

// Limits of Config values.
const (
	// MinRate is the lowest Rate that is not 0 (one request per 1000 s),
	// so that an emission interval fits comfortably in int64 nanoseconds.
	MinRate = 0.001
	// MaxBurst is the largest Burst.
	MaxBurst = 1_000_000
)

// ErrBadConfig is what New returns for a Config it cannot run; the
// message names every problem.
var ErrBadConfig = errors.New("ratelimit: invalid configuration")

// Bucket is one token bucket's shape.
type Bucket struct {
	// Rate is the sustained rate in requests (tokens) per second; 0 turns
	// the bucket off (every request passes it).
	Rate float64
	// Burst is the bucket's capacity: how many requests may come at once
	// after a quiet spell. It must be at least 1 when Rate is set.
	Burst int
}

// Config configures a Limiter.
type Config struct {
	// PerIP is every client address's bucket.
	PerIP Bucket
	// PerPrefix is the bucket every address in one prefix shares.
	PerPrefix Bucket
	// IPv4Prefix and IPv6Prefix are the prefix lengths in bits (default
	// 24 and 48; 1–32 and 1–128).
	IPv4Prefix, IPv6Prefix int
	// TableSize is how many addresses, and how many prefixes, are
	// tracked; the least recently used are forgotten first (default
	// 65536). An entry costs about 100 bytes.
	TableSize int
	// RateWindow is the time constant of Rate and PrefixRate (default
	// 10 s).
	RateWindow time.Duration
	// Clock tells the time (default time.Now). It must be safe for
	// concurrent use.
	Clock func() time.Time
}

// gcra is a bucket's shape in nanoseconds.
type gcra struct {
	interval  int64 // between two tokens: 1/Rate
	tolerance int64 // (Burst − 1) × interval
}

func newGCRA(b Bucket) gcra {
	if b.Rate == 0 {
		return gcra{}
	}
	iv := max(int64(math.Round(float64(time.Second)/b.Rate)), 1)
	return gcra{interval: iv, tolerance: int64(b.Burst-1) * iv}
}

// check decides a request at now on a bucket whose theoretical arrival
// time is tat: it returns the new tat when the request may pass, or how
// long to wait when it may not.
func (g gcra) check(tat, now int64) (next, wait int64) {
	if g.interval == 0 {
		return tat, 0
	}
	tat = max(tat, now)
	if w := tat - now - g.tolerance; w > 0 {
		return 0, w
	}
	return tat + g.interval, 0
}

// Limiter holds the buckets and rates of client addresses and prefixes.
// It is safe for concurrent use.
type Limiter struct {
	clock          func() time.Time
	base           time.Time
	ip, prefix     gcra
	v4Bits, v6Bits int
	tau            float64 // RateWindow in ns
	ips, prefixes  *table
}

// New returns a Limiter for cfg (zero fields take their defaults), or an
// error wrapping ErrBadConfig that lists every problem.
func New(cfg Config) (*Limiter, error) {
	if err := validate(cfg); err != nil {
		return nil, err
	}
	l := &Limiter{
		clock:  cfg.Clock,
		ip:     newGCRA(cfg.PerIP),
		prefix: newGCRA(cfg.PerPrefix),
		v4Bits: cmp.Or(cfg.IPv4Prefix, DefaultIPv4Prefix),
		v6Bits: cmp.Or(cfg.IPv6Prefix, DefaultIPv6Prefix),
		tau:    float64(cmp.Or(cfg.RateWindow, DefaultRateWindow)),
	}
	if l.clock == nil {
		l.clock = time.Now
	}
	l.base = l.clock()
	size := cmp.Or(cfg.TableSize, DefaultTableSize)
	l.ips, l.prefixes = newTable(size), newTable(size)
	return l, nil
}

// Validate reports what New would refuse in cfg (nil: nothing), for a
// limiter elsewhere that takes the same shape (package redislimit).
func (cfg Config) Validate() error { return validate(cfg) }

func validate(cfg Config) error {
	var p []string
	bucket := func(name string, b Bucket) {
		switch {
		case math.IsNaN(b.Rate) || math.IsInf(b.Rate, 0) || b.Rate < 0:
			p = append(p, name+".Rate: must be a number ≥ 0")
		case b.Rate > 0 && b.Rate < MinRate:
			p = append(p, fmt.Sprintf("%s.Rate: must be 0 (off) or at least %v", name, MinRate))
		}
		switch {
		case b.Burst < 0 || b.Burst > MaxBurst:
			p = append(p, fmt.Sprintf("%s.Burst: must be from 0 to %d", name, MaxBurst))
		case b.Rate > 0 && b.Burst < 1:
			p = append(p, name+".Burst: must be at least 1 when Rate is set")
		}
	}
	bucket("PerIP", cfg.PerIP)
	bucket("PerPrefix", cfg.PerPrefix)
	if cfg.IPv4Prefix < 0 || cfg.IPv4Prefix > 32 {
		p = append(p, "IPv4Prefix: must be from 1 to 32 (0: default 24)")
	}
	if cfg.IPv6Prefix < 0 || cfg.IPv6Prefix > 128 {
		p = append(p, "IPv6Prefix: must be from 1 to 128 (0: default 48)")
	}
	if cfg.TableSize < 0 {
		p = append(p, "TableSize: must be ≥ 0 (0: default 65536)")
	}
	if cfg.RateWindow < 0 {
		p = append(p, "RateWindow: must be ≥ 0 (0: default 10s)")
	}
	if len(p) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrBadConfig, strings.Join(p, "; "))
}

// nanos is t in ns since the limiter's base, never negative.
func (l *Limiter) nanos(t time.Time) int64 { return max(int64(t.Sub(l.base)), 0) }

// Allow takes one token from addr's bucket and one from its prefix's
// bucket and tells whether the request may pass; when it may not,
// retryAfter is how long until it would (see the package doc). Either way
// the request counts in Rate and PrefixRate.
func (l *Limiter) Allow(addr netip.Addr) (ok bool, retryAfter time.Duration) {
	return l.AllowAt(addr, l.clock())
}

// AllowAt is Allow at now, for a caller that has the time already (e.g.
// fasthttp's RequestCtx.Time); now must come from the limiter's clock.
func (l *Limiter) AllowAt(addr netip.Addr, now time.Time) (ok bool, retryAfter time.Duration) {
	t := l.nanos(now)
	ik := addrKey(addr)
	pk := l.prefixKey(ik)
	is, ps := l.ips.shardOf(ik), l.prefixes.shardOf(pk)
	// Lock order: the address's shard, then the prefix's (another table):
	// no cycle.
	is.mu.Lock()
	ps.mu.Lock()
	ie, pe := is.touch(ik, t), ps.touch(pk, t)
	ie.observe(t, l.tau)
	pe.observe(t, l.tau)
	itat, iwait := l.ip.check(ie.tat, t)
	ptat, pwait := l.prefix.check(pe.tat, t)
	if ok = iwait == 0 && pwait == 0; ok {
		ie.tat, pe.tat = itat, ptat
	}
	ps.mu.Unlock()
	is.mu.Unlock()
	return ok, time.Duration(max(iwait, pwait))
}

// WaitAt tells how long from now a request from addr would have to wait
// to pass both buckets (0: it would pass now), without taking a token or
// counting it in the rates: for a caller that charges only for some
// outcomes (AllowAt after a failure), but must refuse before it acts
// once the budget is spent. now must come from the limiter's clock.
func (l *Limiter) WaitAt(addr netip.Addr, now time.Time) time.Duration {
	t := l.nanos(now)
	ik := addrKey(addr)
	pk := l.prefixKey(ik)
	is, ps := l.ips.shardOf(ik), l.prefixes.shardOf(pk)
	is.mu.Lock()
	ps.mu.Lock()
	_, iwait := l.ip.check(is.touch(ik, t).tat, t)
	_, pwait := l.prefix.check(ps.touch(pk, t).tat, t)
	ps.mu.Unlock()
	is.mu.Unlock()
	return time.Duration(max(iwait, pwait))
}

// Rate is addr's recent request rate in requests per second (see the
// package doc); 0 for an address not tracked.
func (l *Limiter) Rate(addr netip.Addr) float64 {
	return l.ips.rate(addrKey(addr), l.nanos(l.clock()), l.tau)
}

// PrefixRate is the recent request rate of addr's prefix, all its
// addresses together; 0 for a prefix not tracked.
func (l *Limiter) PrefixRate(addr netip.Addr) float64 {
	return l.prefixes.rate(l.prefixKey(addrKey(addr)), l.nanos(l.clock()), l.tau)
}

// Prefix is the prefix whose bucket addr shares (IPv4-mapped addresses
// as IPv4, without zone); the zero Prefix for the zero Addr.
func (l *Limiter) Prefix(addr netip.Addr) netip.Prefix { return PrefixOf(addr, l.v4Bits, l.v6Bits) }

// PrefixOf is the prefix of addr v4Bits or v6Bits long (by its family,
// IPv4-mapped addresses as IPv4, without zone); the zero Prefix for the
// zero Addr. The bits must be within the family's length.
func PrefixOf(addr netip.Addr, v4Bits, v6Bits int) netip.Prefix {
	a := addr.Unmap().WithZone("")
	bits := v6Bits
	if a.Is4() {
		bits = v4Bits
	}
	p, _ := a.Prefix(bits)
	return p
}

// key is an address, or a prefix's first address, in 16 bytes (IPv4 as
// IPv4-mapped IPv6).
type key struct{ hi, lo uint64 }

func addrKey(a netip.Addr) key {
	// As16 gives an IPv4 address in its mapped form and drops the zone:
	// an address and its mapped form have one key.
	b := a.As16()
	return key{
		hi: uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
			uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7]),
		lo: uint64(b[8])<<56 | uint64(b[9])<<48 | uint64(b[10])<<40 | uint64(b[11])<<32 |
			uint64(b[12])<<24 | uint64(b[13])<<16 | uint64(b[14])<<8 | uint64(b[15]),
	}
}

// v4Mapped is the high 32 bits of lo in an IPv4-mapped key.
const v4Mapped = 0xffff

// prefixKey masks k to its prefix: IPv4 (mapped) keys to v4Bits of the
// IPv4 address, the others to v6Bits.
func (l *Limiter) prefixKey(k key) key {
	if k.hi == 0 && k.lo>>32 == v4Mapped {
		k.lo &^= 1<<(32-l.v4Bits) - 1
		return k
	}
	if b := l.v6Bits; b <= 64 {
		k.hi &^= 1<<(64-b) - 1
		k.lo = 0
	} else {
		k.lo &^= 1<<(128-b) - 1
	}
	return k
}
