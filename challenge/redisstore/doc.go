// Package redisstore is the challenge.ReplayGuard kept in Redis, shared
// by every waitroom replica that uses the same Redis (standalone or
// Cluster), so that a challenge redeemed at one replica is refused at all
// the others.
//
// Each redeem is one command on one key, atomic on the server:
//
//	SET <prefix><hex id> 1 NX PXAT <expiry in unix ms>
//
// which answers OK when the id was unused (it is then marked until its
// expiry, by the Redis server's clock) and nil when it was used. Keys
// expire by themselves: nothing needs cleaning up. With one key per
// command it works unchanged on Redis Cluster.
//
// The guard does not own its client: Close stops the guard but leaves
// the client open for whoever created it.
//
// It is not for a single process with no Redis (memstore is), nor a
// store of anything but ids.
package redisstore
