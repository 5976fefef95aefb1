package inventory

import (
	"context"
	"log/slog"
	"time"

	"github.com/waitroom/waitroom/internal/redisconn"
	"github.com/waitroom/waitroom/internal/registry"
)

// Stores are the inventory store backends by name, the values of the
// configuration's inventory.store: "embedded" (inventory/memstore) and
// "redis" (inventory/redisstore) are built in. A backend is one package
// that registers itself here from an init function; the binary imports
// the built-in ones in one list file.
var Stores = registry.New[StoreFactory]("inventory store")

// StoreFactory builds the stores of one backend. It is registered once
// and must be safe for concurrent use.
type StoreFactory interface {
	// Validate checks the settings the backend reads, without side
	// effects: nil or every problem, each a *registry.FieldError whose
	// path is relative to the inventory section ("data_dir", "redis").
	Validate(c StoreConfig) error
	// Build opens a store from settings Validate accepted. An error that
	// one setting explains is a *registry.SettingError naming it. The
	// store's Close releases what Build opened, but not c.Redis, which
	// belongs to the caller.
	Build(ctx context.Context, c StoreConfig) (Store, error)
}

// StoreConfig is what a store backend is built from: the inventory
// section's store settings. Each backend reads what it needs. Plain data
// but for Redis, which is safe for concurrent use.
type StoreConfig struct {
	// DataDir is the directory of a backend that keeps its state in
	// files.
	DataDir string
	// Redis is the section's Redis connection, opened on first use (never
	// nil when the wiring builds a store).
	Redis *redisconn.Conn
	// IdempotencyTTL is how long an idempotency key is remembered.
	IdempotencyTTL time.Duration
	// HoldRetention is how long a released or expired hold can be read.
	HoldRetention time.Duration
	// Logger gets the store's warnings (never nil when the wiring builds
	// a store).
	Logger *slog.Logger
}
