// Package redisconn opens the Redis client of one configuration section
// (a standalone Redis by URL, a Redis Cluster by seed addresses, or a
// master found through Redis Sentinel) for the store backends that keep
// their state in Redis: once, on first use, shared by every store built
// from that section, and closed by whoever made it. Its errors name the
// setting that failed (redis.url, redis.cluster, redis.sentinel) without
// the password.
//
// The client follows a failover: a command that Redis did not run (a
// refused dial, CLUSTERDOWN, MOVED, READONLY, …) is sent again with
// backoff for at most Settings.RetryFor, and a Redis Cluster client
// reloads its slots first, so it learns the promoted replica instead of
// dialling the dead master until go-redis's periodic reload (60 s by
// default). NotExecuted tells which errors those are.
//
// It is not a Redis abstraction: backends use the go-redis client it
// returns directly.
package redisconn
