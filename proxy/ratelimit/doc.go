// Package ratelimit limits requests per client IP address and per IP
// prefix (an IPv4 /24, an IPv6 /48 by default) with token buckets, so that
// one address, or one network, cannot flood the waiting room's API
// (/_wr/api/*: joins and status polls). It also keeps each address's and
// prefix's recent request rate, a risk signal for the bot defence.
//
// A bucket is a GCRA (generic cell rate algorithm) token bucket: one
// int64 per key, the "theoretical arrival time", in nanoseconds. A bucket
// of Rate r and Burst b lets b requests through at once after a quiet
// spell and r a second after that; a refused request is told exactly when
// the next one would pass. The emission interval 1/r is rounded to whole
// nanoseconds.
//
// A request must pass both its address's bucket and its prefix's bucket.
// One refused by either takes a token from neither: a client refused
// because its network is busy keeps its own allowance, and a client over
// its own limit does not drain the bucket its neighbours share. The
// retry-after of a refusal is the wait until both buckets would let it
// through (if nobody else took tokens meanwhile).
//
// IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) count as the IPv4 address;
// zones are ignored. An invalid (zero) netip.Addr counts as the
// unspecified address "::", in one shared bucket.
//
// Keys live in two tables (addresses, prefixes) of at most TableSize
// entries each, least recently used evicted first. A table is split in up
// to 64 shards by a seeded hash of the key, each shard an LRU under its
// own mutex, so cores rarely wait for one another. The LRU is a small
// intrusive one (entries in a slice, linked by index, an evicted entry's
// slot reused for the newcomer) rather than github.com/hashicorp/golang-lru:
// that one allocates a list element for every new key and locks inside
// Get/Add, where a bucket update needs its own read-modify-write. Here a
// known address costs no allocation at all, and a flood of new addresses
// (the case a rate limiter exists for) next to none once the table is
// full: evicted slots are reused, and only the Go map indexing each shard
// reallocates now and then to clear deleted keys (about 500 allocations
// per 2 million new addresses, measured with a 4096-entry table).
// An evicted key comes back with a full bucket: TableSize should exceed
// the addresses active within a bucket's refill time (Burst/Rate).
//
// Rate and PrefixRate are exponentially decayed rates: every request
// (allowed or refused) adds 1/RateWindow, and the sum decays with time
// constant RateWindow. At a steady λ requests a second (λ·RateWindow ≫ 1)
// it reads λ ± 1/(2·RateWindow); right after a burst of n requests it
// reads n/RateWindow, and it halves every 0.69·RateWindow of silence.
//
// It is not the proxy's load shedder (that bounds requests in flight to
// the origin), it does not decide who is a bot (the challenge package
// scores risk, reading Rate), and it does not parse X-Forwarded-For: the
// caller passes the client address it trusts.
package ratelimit
