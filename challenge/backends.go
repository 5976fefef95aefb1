package challenge

import (
	"context"
	"time"

	"github.com/waitroom/waitroom/internal/redisconn"
	"github.com/waitroom/waitroom/internal/registry"
)

// ReplayStores are the replay guard backends by name. A guard lives where
// the queues do, so its name is the admission store's (admission.store):
// "embedded" (challenge/memstore, one process) and "redis"
// (challenge/redisstore, shared by every replica) are built in. A backend
// is one package that registers itself here from an init function; the
// binary imports the built-in ones in one list file.
var ReplayStores = registry.New[ReplayStoreFactory]("replay guard store")

// ReplayStoreFactory builds the replay guards of one backend. It is
// registered once and must be safe for concurrent use. It has no
// validation of its own: its settings are the admission section's, which
// the admission store backend of the same name validates.
type ReplayStoreFactory interface {
	// Build opens a guard and checks that it can work. The guard's Close
	// releases what Build opened, but not c.Redis, which belongs to the
	// caller.
	Build(ctx context.Context, c ReplayStoreConfig) (ReplayGuard, error)
}

// ReplayStoreConfig is what a replay guard backend is built from. Plain
// data but for Redis, which is safe for concurrent use.
type ReplayStoreConfig struct {
	// Redis is the admission section's Redis connection, shared with the
	// admission store (never nil when the wiring builds a guard).
	Redis *redisconn.Conn
	// RedisPrefix starts every key a Redis backend writes.
	RedisPrefix string
	// Window is at least how long a redeemed id must be remembered: the
	// longest lifetime of what is redeemed (challenges, CAPTCHA tokens).
	Window time.Duration
}
