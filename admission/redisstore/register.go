package redisstore

import (
	"context"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/registry"
)

// Name is the backend's name in admission.Stores: admission.store:
// redis.
const Name = "redis"

func init() { admission.Stores.Register(Name, factory{}) }

// factory builds Stores from the admission section: redis and
// redis_prefix.
type factory struct{}

func (factory) Validate(c admission.StoreConfig) error {
	if c.Redis == nil || !c.Redis.Settings().Configured() {
		return registry.Fail("redis", "set url (standalone Redis), cluster (Redis Cluster seed addresses) or sentinel (master name and Sentinel addresses) with store: %s", Name)
	}
	return nil
}

func (factory) Build(ctx context.Context, c admission.StoreConfig) (admission.Store, error) {
	client, err := c.Redis.Client()
	if err != nil {
		return nil, err
	}
	s, err := New(ctx, Options{Client: client, Prefix: c.RedisPrefix, ReplayPrefix: c.ReplayPrefix, RequirePersistence: c.Redis.Settings().RequirePersistence, Logger: c.Logger,
		MinReplicasAcked: c.Redis.Settings().MinReplicasAcked, AckTimeout: c.Redis.Settings().AckTimeout})
	if err != nil {
		return nil, c.Redis.Fail(err)
	}
	return s, nil
}

// Shared is true: every replica uses the one Redis.
func (factory) Shared() bool { return true }

var _ admission.StoreFactory = factory{}
