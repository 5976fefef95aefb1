package redislimit

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/redisbatch"
	"github.com/waitroom/waitroom/proxy/ratelimit"
)

// DefaultPrefix starts every key when Options.Prefix is empty.
const DefaultPrefix = "wr:rl:"

// DefaultPipelines is how many pipelines may be in flight at once when
// Options.Pipelines is 0.
const DefaultPipelines = 4

//go:embed gcra.lua
var gcraSource string

var gcraScript = redis.NewScript(gcraSource)

// Options configure a Limiter.
type Options struct {
	// Client is a standalone, Sentinel or Cluster client. Required; the
	// Limiter does not close it.
	Client redis.UniversalClient
	// Prefix starts every key; no braces (it would change the hash tag).
	// DefaultPrefix when empty. Two limiters with different budgets need
	// different prefixes.
	Prefix string
	// Buckets are the buckets' shapes and the prefix lengths (TableSize,
	// RateWindow and Clock do not apply: Redis keeps every bucket that is
	// not full, on its own clock).
	Buckets ratelimit.Config
	// Pipelines is how many pipelines of concurrent requests may be in
	// flight at once (see internal/redisbatch); 0 means DefaultPipelines.
	Pipelines int
}

// Limiter is the shared budget. It is safe for concurrent use, by any
// number of processes sharing the Redis.
type Limiter struct {
	batch          *redisbatch.Batcher
	prefix         string
	v4Bits, v6Bits int
	// args are the script's bucket arguments, in microseconds.
	args [4]int64
}

// New returns a Limiter, or an error naming what is wrong with opts. It
// does not contact Redis.
func New(opts Options) (*Limiter, error) {
	if opts.Client == nil {
		return nil, errors.New("redislimit: a client is required")
	}
	if err := opts.Buckets.Validate(); err != nil {
		return nil, err
	}
	if strings.ContainsAny(opts.Prefix, "{}") {
		return nil, fmt.Errorf("redislimit: prefix %q has a brace", opts.Prefix)
	}
	b := opts.Buckets
	l := &Limiter{
		batch:  redisbatch.New(opts.Client, cmp.Or(opts.Pipelines, DefaultPipelines)),
		prefix: cmp.Or(opts.Prefix, DefaultPrefix),
		v4Bits: cmp.Or(b.IPv4Prefix, ratelimit.DefaultIPv4Prefix),
		v6Bits: cmp.Or(b.IPv6Prefix, ratelimit.DefaultIPv6Prefix),
	}
	l.args[0], l.args[1] = shape(b.PerIP)
	l.args[2], l.args[3] = shape(b.PerPrefix)
	return l, nil
}

// shape is a bucket's emission interval and tolerance in microseconds
// (0, 0: no bucket).
func shape(b ratelimit.Bucket) (interval, tolerance int64) {
	if b.Rate == 0 {
		return 0, 0
	}
	iv := max(int64(math.Round(1e6/b.Rate)), 1)
	return iv, int64(b.Burst-1) * iv
}

// Allow takes a token from addr's bucket and one from its prefix's when
// both have one, and tells whether the request may pass; when it may
// not, retryAfter is how long until it would. An error (Redis did not
// answer, ctx ended) says nothing about the budget: whether the tokens
// were taken is unknown.
func (l *Limiter) Allow(ctx context.Context, addr netip.Addr) (ok bool, retryAfter time.Duration, err error) {
	wait, err := l.run(ctx, addr, true)
	return err == nil && wait == 0, wait, err
}

// Wait tells how long from now a request from addr would have to wait to
// pass both buckets (0: it would pass now), taking nothing: for a caller
// that charges only some outcomes (Allow after a failure) but must refuse
// before it acts once the budget is spent.
func (l *Limiter) Wait(ctx context.Context, addr netip.Addr) (time.Duration, error) {
	return l.run(ctx, addr, false)
}

// Keys returns the Redis keys of addr's bucket and its prefix's bucket.
func (l *Limiter) Keys(addr netip.Addr) (address, prefix string) {
	a := addr.Unmap().WithZone("")
	tag := l.prefix + "{" + ratelimit.PrefixOf(a, l.v4Bits, l.v6Bits).String() + "}"
	return tag + ":a:" + a.String(), tag + ":p"
}

func (l *Limiter) run(ctx context.Context, addr netip.Addr, take bool) (time.Duration, error) {
	ak, pk := l.Keys(addr)
	keys := []string{ak, pk}
	mode := "0"
	if take {
		mode = "1"
	}
	args := []any{mode, l.args[0], l.args[1], l.args[2], l.args[3]}
	raw, err := l.batch.Script(ctx, gcraScript, keys, args...)
	if err != nil {
		return 0, fmt.Errorf("redislimit: %w", err)
	}
	us, ok := raw.(int64)
	if !ok || us < 0 {
		return 0, fmt.Errorf("redislimit: unexpected reply %s", strconv.Quote(fmt.Sprint(raw)))
	}
	return time.Duration(us) * time.Microsecond, nil
}

// Close stops the pipelines; the client stays open.
func (l *Limiter) Close() { l.batch.Close() }
