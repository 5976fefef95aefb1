package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/internal/redisbatch"
)

// DefaultPrefix starts every key when Options.Prefix is empty.
const DefaultPrefix = "wr:replay:"

// DefaultPipelines is how many pipelines of redeems may be in flight at
// once when Options.Pipelines is 0.
const DefaultPipelines = 4

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
	// Pipelines is how many pipelines of concurrent redeems may be in
	// flight at once (see internal/redisbatch); 0 means DefaultPipelines.
	Pipelines int
}

// Guard is the Redis replay guard. It is safe for concurrent use, by any
// number of processes sharing the Redis.
type Guard struct {
	c      redis.UniversalClient
	batch  *redisbatch.Batcher
	prefix string
	closed atomic.Bool

	// Each redeem writes a value of its own, so that a SET go-redis
	// sends again after a lost reply recognises its own mark.
	origin [12]byte
	seq    atomic.Uint64
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
	if opts.Pipelines <= 0 {
		opts.Pipelines = DefaultPipelines
	}
	g := &Guard{c: opts.Client, batch: redisbatch.New(opts.Client, opts.Pipelines), prefix: opts.Prefix}
	if _, err := rand.Read(g.origin[:]); err != nil {
		panic("redisstore: no randomness: " + err.Error())
	}
	return g
}

// mark returns a value no other redeem writes: this guard's random origin
// and a sequence number.
func (g *Guard) mark() string {
	var b [20]byte
	copy(b[:], g.origin[:])
	binary.BigEndian.PutUint64(b[12:], g.seq.Add(1))
	return string(b[:])
}

// Key is the Redis key that marks id.
func (g *Guard) Key(id []byte) string {
	b := make([]byte, len(g.prefix)+hex.EncodedLen(len(id)))
	n := copy(b, g.prefix)
	hex.Encode(b[n:], id)
	return string(b)
}

// Redeem marks id used until expires and reports whether it was unused.
// Concurrent redeems go to Redis together, in pipelines (one round trip,
// and with appendfsync always one fsync, for many). An expiry already
// past marks nothing: Redeem returns false if id is marked, true
// otherwise. Errors (Redis unreachable, ctx done) come with false: whether
// the mark was made is then unknown.
//
// The command is SET NX GET PXAT with a value of this redeem's own: nil
// (nothing was there) or that value (go-redis sent the command again
// after losing the first reply) means it was unused; anything else, that
// another redeem came first.
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
	key, mark := g.Key(id), g.mark()
	cmd, err := g.batch.Do(ctx, func(p redis.Pipeliner) redis.Cmder {
		return p.Do(context.Background(), "set", key, mark, "nx", "get", "pxat", ms)
	})
	if err == nil {
		err = cmd.Err()
	}
	switch {
	case errors.Is(err, redis.Nil):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("redisstore: redeem: %w", err)
	}
	old, err := cmd.(*redis.Cmd).Text()
	if err != nil {
		return false, fmt.Errorf("redisstore: redeem: %w", err)
	}
	return old == mark, nil
}

// Check asks Redis once whether it takes the guard's command (SET with
// both NX and GET needs Redis 7.0 or later), so that an older server is
// refused at start-up rather than failing every join. It writes a key
// that expires in a millisecond.
func (g *Guard) Check(ctx context.Context) error {
	err := g.c.Do(ctx, "set", g.prefix+"check", g.mark(), "nx", "get", "px", 1).Err()
	switch {
	case err == nil, errors.Is(err, redis.Nil):
		return nil
	case strings.Contains(strings.ToLower(err.Error()), "syntax"):
		return fmt.Errorf("redisstore: the Redis server refuses SET NX GET (%v): the replay guard needs Redis 7.0 or later", err)
	}
	return fmt.Errorf("redisstore: checking Redis: %w", err)
}

// Close stops the guard: Redeem then fails with ErrClosed, after the
// redeems in flight are answered. It does not close the client. Closing
// twice is harmless.
func (g *Guard) Close() error {
	if !g.closed.Swap(true) {
		g.batch.Close()
	}
	return nil
}

var _ challenge.ReplayGuard = (*Guard)(nil)
