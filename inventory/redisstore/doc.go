// Package redisstore is the Redis-backed inventory store, for running
// several waitroom sidecars over one shared inventory, on a standalone
// Redis or a Redis Cluster.
//
// Each operation is one Lua script (embedded from lua/, a shared prelude
// plus one body per operation) that runs atomically on the shard owning
// the event: every key of an event carries the hash tag {ev:<id>}. Scripts
// are called by SHA and fall back to EVAL on NOSCRIPT. Expiry uses the
// Redis server's clock (TIME); each script first expires every due hold,
// so correctness never depends on the reaper.
//
// Durability is Redis's: the inventory Redis must run with appendonly yes
// and appendfsync always, or a Redis restart loses acknowledged sales, and
// with aof-load-truncated no. A script that writes more than one key
// reaches the AOF as one MULTI/EXEC block; when a crash tears that block,
// Redis with aof-load-truncated yes (its default) cuts the file inside the
// block, and a later restart applies the block's first commands: half a
// change, such as a seat freed while its order still holds it. With no, Redis refuses the torn file and redis-check-aof --fix
// cuts the block whole. New warns loudly (or, with RequirePersistence,
// refuses) otherwise.
//
// Key layout, for <p> = prefix + "{ev:<id>}:": <p>meta (definition and
// lookup fields), <p>rows (one status byte per seat, per row), <p>cnt
// (held/sold counters), <p>users (seats per user), <p>exp (live holds by
// expiry), <p>h:<hold>, <p>o:<order>, <p>i:<idempotency key> and
// <p>audit (a stream). prefix + "events" lists the events.
package redisstore
