// Package redispersist reads the persistence settings (appendonly,
// appendfsync, aof-load-truncated) of every master behind a go-redis client, so that the
// Redis-backed stores can warn when acknowledged writes would not survive
// a Redis restart.
//
// It only reports; what to say, and whether to refuse, is the caller's
// business. It is not a health check and does not watch the settings
// after the call.
package redispersist
