package proxy

import (
	"hash/maphash"

	lru "github.com/hashicorp/golang-lru/v2"
)

// cacheShards spreads a token cache over independent locks so that
// concurrent requests on many cores rarely wait for each other.
const cacheShards = 64

// tokenCache remembers tokens (passes, tickets) that verified, so the hot
// path does one hash and one map lookup instead of the signature check. A
// token is looked up by a seeded hash of its bytes and then compared in
// full, so a lookup allocates nothing. It is safe for concurrent use.
type tokenCache[V any] struct {
	seed   maphash.Seed
	shards [cacheShards]*lru.Cache[uint64, *cached[V]]
}

// cached is one verified token and what the proxy keeps with it.
type cached[V any] struct {
	token string
	v     V
}

func newTokenCache[V any](size int) *tokenCache[V] {
	c := &tokenCache[V]{seed: maphash.MakeSeed()}
	per := max(1, size/cacheShards)
	for i := range c.shards {
		s, err := lru.New[uint64, *cached[V]](per)
		if err != nil {
			panic("proxy: " + err.Error()) // only for a size <= 0, excluded above
		}
		c.shards[i] = s
	}
	return c
}

func (c *tokenCache[V]) get(token []byte) *cached[V] {
	h := maphash.Bytes(c.seed, token)
	e, ok := c.shards[h%cacheShards].Get(h)
	if !ok || e.token != string(token) {
		return nil
	}
	return e
}

// add caches a verified token, its value filled in by set; the entry
// replaces any other with the same hash.
func (c *tokenCache[V]) add(token string, set func(v *V)) *cached[V] {
	h := maphash.String(c.seed, token)
	e := &cached[V]{token: token}
	set(&e.v)
	c.shards[h%cacheShards].Add(h, e)
	return e
}
