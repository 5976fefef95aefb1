package redisstore

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/challenge"
)

// DefaultPrefix starts every key when Options.Prefix is empty.
const DefaultPrefix = "wr:replay:"

// ErrClosed: the guard was closed.
var ErrClosed = errors.New("redisstore: replay guard closed")

// Options configure a Guard.
type Options struct {
	// Client is a standalone (*redis.Client), cluster
	// (*redis.ClusterClient) or other universal client. Required. The
	// Guard does not close it.
	Client redis.UniversalClient
	// Prefix starts every key: <Prefix><hex id>. DefaultPrefix when empty.
	Prefix string
}

// Guard is the Redis replay guard. It is safe for concurrent use, by any
// number of processes sharing the Redis.
type Guard struct {
	c      redis.UniversalClient
	prefix string
	closed atomic.Bool
}

// New returns a Guard over opts.Client; it panics without a client (a
// programming error). It does not contact Redis: a Redis that cannot be
// reached shows as errors from Redeem.
func New(opts Options) *Guard {
	if opts.Client == nil {
		panic("redisstore: a client is required")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	return &Guard{c: opts.Client, prefix: opts.Prefix}
}

// Key is the Redis key that marks id.
func (g *Guard) Key(id []byte) string {
	b := make([]byte, len(g.prefix)+hex.EncodedLen(len(id)))
	n := copy(b, g.prefix)
	hex.Encode(b[n:], id)
	return string(b)
}

// Redeem marks id used until expires (by SET NX PXAT) and reports whether
// it was unused. An expiry already past marks nothing: Redeem returns
// false if id is marked, true otherwise. Errors (Redis unreachable, ctx
// done) come with false: whether the mark was made is then unknown.
func (g *Guard) Redeem(ctx context.Context, id []byte, expires time.Time) (bool, error) {
	if g.closed.Load() {
		return false, ErrClosed
	}
	// Round up to the millisecond, so the mark never ends early; Redis
	// wants a positive time, and any time before 1970 is past anyway.
	ms := expires.UnixMilli()
	if expires.Nanosecond()%int(time.Millisecond) != 0 {
		ms++
	}
	ms = max(ms, 1)
	err := g.c.Do(ctx, "set", g.Key(id), "1", "nx", "pxat", ms).Err()
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, redis.Nil):
		return false, nil
	}
	return false, fmt.Errorf("redisstore: redeem: %w", err)
}

// Close stops the guard: Redeem then fails with ErrClosed. It does not
// close the client. Closing twice is harmless.
func (g *Guard) Close() error {
	g.closed.Store(true)
	return nil
}

var _ challenge.ReplayGuard = (*Guard)(nil)
