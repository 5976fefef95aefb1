package memstore

import (
	"context"

	"github.com/waitroom/waitroom/internal/registry"
	"github.com/waitroom/waitroom/inventory"
)

// Name is the backend's name in inventory.Stores: inventory.store:
// embedded.
const Name = "embedded"

func init() { inventory.Stores.Register(Name, factory{}) }

// factory builds Stores from the inventory section: data_dir,
// idempotency_ttl and hold_retention.
type factory struct{}

func (factory) Validate(c inventory.StoreConfig) error {
	if c.DataDir == "" {
		return registry.Fail("data_dir", "must be set with store: %s", Name)
	}
	return nil
}

func (factory) Build(_ context.Context, c inventory.StoreConfig) (inventory.Store, error) {
	s, err := Open(Options{Dir: c.DataDir, IdempotencyTTL: c.IdempotencyTTL, HoldRetention: c.HoldRetention, Logger: c.Logger})
	if err != nil {
		return nil, &registry.SettingError{Key: "data_dir", Value: c.DataDir, Err: err}
	}
	return s, nil
}

var _ inventory.StoreFactory = factory{}
