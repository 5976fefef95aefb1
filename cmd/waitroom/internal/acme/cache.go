package acme

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/crypto/acme/autocert"
)

// RedisCache is an autocert.Cache in Redis, shared by the replicas of one
// deployment. Every key starts with Prefix and the hash tag {acme}, so in
// a Redis Cluster they all live on one shard.
//
// A Get that misses a certificate takes a lock (SET NX with a lifetime)
// before it reports the miss, so that its caller, and only it, orders the
// certificate; the Put of the certificate releases the lock. A Get that
// finds the lock held by another replica waits until the certificate
// appears, and returns it, or until the lock is released or lapses
// without one (that replica failed), and then competes for the lock
// again. Challenge answers and the account key are not locked.
type RedisCache struct {
	Client redis.UniversalClient
	Prefix string
	// LockTTL bounds how long a replica may order before another may try;
	// 0 means DefaultLockTTL.
	LockTTL time.Duration
	// Poll is how often a waiting Get looks again; 0 means 250 ms.
	Poll time.Duration
	// owner names this cache's locks, so that it releases only its own.
	owner string
}

// DefaultLockTTL is how long an order may take before another replica
// tries: autocert's GetCertificate gives an order 5 minutes.
const DefaultLockTTL = 5 * time.Minute

var _ autocert.Cache = (*RedisCache)(nil)

// NewRedisCache returns a cache under prefix in c.
func NewRedisCache(c redis.UniversalClient, prefix string) *RedisCache {
	var b [12]byte
	rand.Read(b[:])
	return &RedisCache{Client: c, Prefix: prefix, owner: hex.EncodeToString(b[:])}
}

func (c *RedisCache) key(name string) string  { return c.Prefix + "{acme}:" + name }
func (c *RedisCache) lock(name string) string { return c.Prefix + "{acme}:lock:" + name }

// locked reports whether name is a certificate's (not a challenge
// answer's or the account key's): a miss of those is what orders.
func locked(name string) bool {
	return !strings.HasSuffix(name, "+token") && !strings.HasSuffix(name, "+http-01") &&
		!strings.HasPrefix(name, "acme_account")
}

// Get returns the data stored under name, or autocert.ErrCacheMiss; for a
// certificate that is missing it first holds the lock (see RedisCache).
func (c *RedisCache) Get(ctx context.Context, name string) ([]byte, error) {
	poll := c.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	ttl := c.LockTTL
	if ttl <= 0 {
		ttl = DefaultLockTTL
	}
	for {
		b, err := c.Client.Get(ctx, c.key(name)).Bytes()
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, redis.Nil) {
			return nil, err
		}
		if !locked(name) {
			return nil, autocert.ErrCacheMiss
		}
		ok, err := c.Client.SetNX(ctx, c.lock(name), c.owner, ttl).Result()
		if err != nil {
			return nil, err
		}
		if ok {
			// Ours; but the holder before us may have put it just now.
			if b, err := c.Client.Get(ctx, c.key(name)).Bytes(); err == nil {
				c.unlock(ctx, name)
				return b, nil
			}
			return nil, autocert.ErrCacheMiss
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// Put stores data under name and releases this cache's lock of it.
func (c *RedisCache) Put(ctx context.Context, name string, data []byte) error {
	if err := c.Client.Set(ctx, c.key(name), data, 0).Err(); err != nil {
		return err
	}
	if locked(name) {
		c.unlock(ctx, name)
	}
	return nil
}

// Delete removes name.
func (c *RedisCache) Delete(ctx context.Context, name string) error {
	return c.Client.Del(ctx, c.key(name)).Err()
}

// unlockScript deletes a lock only while it is still the caller's.
var unlockScript = redis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0`)

func (c *RedisCache) unlock(ctx context.Context, name string) {
	unlockScript.Run(ctx, c.Client, []string{c.lock(name)}, c.owner)
}

// Release gives up this cache's lock of name, for an order that failed,
// so that another replica need not wait for the lock to lapse.
func (c *RedisCache) Release(ctx context.Context, name string) { c.unlock(ctx, name) }
