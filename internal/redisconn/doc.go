// Package redisconn opens the Redis client of one configuration section
// (a standalone Redis by URL or a Redis Cluster by seed addresses) for
// the store backends that keep their state in Redis: once, on first use,
// shared by every store built from that section, and closed by whoever
// made it. Its errors name the setting that failed (redis.url,
// redis.cluster) without the password.
//
// It is not a Redis abstraction: backends use the go-redis client it
// returns directly.
package redisconn
