package admission

import (
	"context"
	"log/slog"

	"github.com/waitroom/waitroom/internal/redisconn"
	"github.com/waitroom/waitroom/internal/registry"
)

// Stores are the admission store backends by name, the values of the
// configuration's admission.store: "embedded" (admission/memstore) and
// "redis" (admission/redisstore) are built in. A backend is one package
// that registers itself here from an init function; the binary imports
// the built-in ones in one list file.
var Stores = registry.New[StoreFactory]("admission store")

// StoreFactory builds the stores of one backend. It is registered once
// and must be safe for concurrent use.
type StoreFactory interface {
	// Validate checks the settings the backend reads, without side
	// effects: nil or every problem, each a *registry.FieldError whose
	// path is relative to the admission section ("data_dir", "redis").
	Validate(c StoreConfig) error
	// Build opens a store from settings Validate accepted. An error that
	// one setting explains is a *registry.SettingError naming it. The
	// store's Close releases what Build opened, but not c.Redis, which
	// belongs to the caller.
	Build(ctx context.Context, c StoreConfig) (Store, error)
	// Shared reports whether replicas share the backend's state (and so
	// elect a leader per event and must agree on absolute times).
	Shared() bool
}

// StoreConfig is what a store backend is built from: the admission
// section's store settings. Each backend reads what it needs. Plain data
// but for Redis, which is safe for concurrent use.
type StoreConfig struct {
	// DataDir is the directory of a backend that keeps its state in
	// files.
	DataDir string
	// Redis is the section's Redis connection, opened on first use (never
	// nil when the wiring builds a store; the challenge replay guard
	// shares it).
	Redis *redisconn.Conn
	// RedisPrefix starts every key a Redis backend writes.
	RedisPrefix string
	// ReplayPrefix starts the keys of the challenge replay guard that
	// shares the Redis: a store that spends one-time values
	// (OnceStore) spends the guard's own key, so that the guard and the
	// store spend one value.
	ReplayPrefix string
	// Logger gets the store's warnings (never nil when the wiring builds
	// a store).
	Logger *slog.Logger
}
