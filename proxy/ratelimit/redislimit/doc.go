// Package redislimit is the rate limiter's budget shared by every
// replica: the same GCRA buckets as package ratelimit (one per client
// address, one per prefix), kept in Redis and decided by one Lua script,
// so that an address spread over several waitroom replicas behind a load
// balancer gets one budget, not one per replica.
//
// Each bucket is one Redis key holding its theoretical arrival time in
// microseconds of the Redis server's clock (TIME): replicas whose clocks
// disagree still share one timeline. A key lives only while its bucket
// is not full (PX until its arrival time), so an idle address costs
// nothing. An address's key and its prefix's key share a hash tag (the
// prefix), so one script decides both on one Redis Cluster shard, and a
// request refused by either takes a token from neither, as in package
// ratelimit.
//
// Concurrent requests go to Redis together (internal/redisbatch): one
// round trip for many. Scripts are called by SHA and loaded with EVAL on
// NOSCRIPT (a restarted node, a failover).
//
// It is not the whole limiter: the proxy keeps its in-memory buckets in
// front of this one (they are free, and they keep a flood from one
// address away from Redis) and uses this one for what passed them. When
// Redis does not answer in time, Allow and Wait return the error and the
// caller decides (the proxy falls back to its own buckets; see
// proxy.Options.SharedLimiter).
package redislimit
