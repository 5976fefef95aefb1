// Package redisstore is the Redis-backed admission store, for running
// several waitroom replicas over one set of queues, on a standalone Redis
// or a Redis Cluster.
//
// Every key of an event carries the hash tag {adm:<event>}, so an event
// lives in one Cluster slot and its scripts see all of its keys. With
// p = Prefix + "{adm:<event>}:":
//
//	p m:<lane>:<tranche>     members: 16 raw bytes per visitor, APPENDed (STRLEN/16 of them)
//	p seed:<lane>:<tranche>  the tranche's seed (SET NX: the first writer wins)
//	p draws:<lane>           draw records (zset: score tranche, member the draw as JSON)
//	p drawlast:<lane>        "<tranche> <next number>" of the lane's last draw
//	p serving                serving counters (hash: lane -> decimal, raised by a Lua max)
//	p claims:<lane>          claims (bitmap: SETBIT number)
//	p used:<lane>            passes used at the gate (bitmap: BITFIELD SET u1 number, a batch per call)
//	p revoked                revocations (zset: score until in Unix ms, pruned on use)
//	p bars                   visitor bars (hash: 16 raw bytes -> "from:until:reason", ms)
//	p barexp                 their expiry (zset: score until, member visitor; pruned on use)
//	p inv:<code>             an invite use (SET NX PXAT forget)
//	p acct:<key>             an account's place (JSON; SET NX GET PXAT forget)
//	p control                an operator's overrides (JSON)
//	p controller             the controller's state (raw bytes)
//	p lease                  the leader's id (SET PX ttl, renewed by compare-and-extend)
//
// Compound operations are Lua scripts (lua/, embedded), called by SHA
// with a fallback to EVAL on NOSCRIPT. Concurrent AppendMember and Claim
// calls are sent in shared pipelines. Members are read back with
// GETRANGE in 16 MiB pieces, so ten million of them never need one
// 160 MB reply. Revocations and visitor bars run out by the Redis
// server's clock.
//
// Durability is Redis's: the admission Redis must run with appendonly
// yes and appendfsync always for AppendMember and the other durable
// operations to survive a Redis crash, and with aof-load-truncated no.
// RecordDraw and BarVisitors write more than one key and reach the AOF
// as one MULTI/EXEC block; when a crash tears that block, Redis with
// aof-load-truncated yes (its default) cuts the file inside the block,
// and a later restart applies the block's first commands (a tranche with
// two draw records, so two orders; a bar without its expiry, which never
// ends) or, when no other block follows, drops every join and serving
// counter acknowledged after them. With no, Redis refuses the torn file
// and redis-check-aof --fix cuts the block whole. New logs an error (or,
// with RequirePersistence, refuses) otherwise.
// Nothing is expired automatically except leases, invite uses and
// accounts' places: an event's keys stay until an operator deletes them.
//
// It is not for a single process with no Redis around: memstore is the
// embedded store.
package redisstore
