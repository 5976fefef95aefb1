package redisstore

import (
	"context"

	"github.com/waitroom/waitroom/internal/registry"
	"github.com/waitroom/waitroom/inventory"
)

// Name is the backend's name in inventory.Stores: inventory.store: redis.
const Name = "redis"

func init() { inventory.Stores.Register(Name, factory{}) }

// factory builds Stores from the inventory section: redis,
// idempotency_ttl and hold_retention.
type factory struct{}

func (factory) Validate(c inventory.StoreConfig) error {
	if c.Redis == nil || !c.Redis.Settings().Configured() {
		return registry.Fail("redis", "set url (standalone Redis), cluster (Redis Cluster seed addresses) or sentinel (master name and Sentinel addresses) with store: %s", Name)
	}
	return nil
}

func (factory) Build(ctx context.Context, c inventory.StoreConfig) (inventory.Store, error) {
	client, err := c.Redis.Client()
	if err != nil {
		return nil, err
	}
	s, err := New(ctx, Options{Client: client, IdempotencyTTL: c.IdempotencyTTL, HoldRetention: c.HoldRetention,
		RequirePersistence: c.Redis.Settings().RequirePersistence, Logger: c.Logger,
		MinReplicasAcked: c.Redis.Settings().MinReplicasAcked, AckTimeout: c.Redis.Settings().AckTimeout})
	if err != nil {
		return nil, c.Redis.Fail(err)
	}
	return s, nil
}

var _ inventory.StoreFactory = factory{}
