// Package redispersist reads the persistence settings (appendonly,
// appendfsync, aof-load-truncated) of every master behind a go-redis
// client, so that the Redis-backed stores can warn, or refuse to start,
// when acknowledged writes would not survive a Redis restart whole.
//
// Check only reports. Enforce says what is wrong in the same words for
// every store (each names what it keeps in Redis) and refuses when the
// store requires persistence. It is not a health check and does not
// watch the settings after the call.
package redispersist
