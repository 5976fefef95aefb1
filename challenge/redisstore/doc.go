// Package redisstore is the challenge.ReplayGuard kept in Redis, shared
// by every waitroom replica that uses the same Redis (standalone or
// Cluster), so that a challenge redeemed at one replica is refused at all
// the others.
//
// Each redeem is one command on one key, atomic on the server:
//
//	SET <prefix><hex id> <mark> NX GET PXAT <expiry in unix ms>
//
// which answers nil when the id was unused (it is then marked until its
// expiry, by the Redis server's clock) and the mark already there when it
// was used. Every redeem writes a mark of its own (the guard's random
// origin and a sequence number), so a command go-redis sends again after
// a lost reply finds its own mark and still counts as the first redeem:
// a visitor is never refused for the network's fault. NX with GET needs
// Redis 7.0 or later. Keys expire by themselves: nothing needs cleaning
// up. With one key per command it works unchanged on Redis Cluster.
//
// Concurrent redeems are sent together in pipelines (internal/redisbatch):
// one round trip and, with appendfsync always, one fsync for many, where
// one command per join would queue on the client's connection pool.
//
// The guard does not own its client: Close stops the guard but leaves
// the client open for whoever created it.
//
// It is not for a single process with no Redis (memstore is), nor a
// store of anything but ids.
package redisstore
