package redisstore

import (
	"context"
	"time"

	"github.com/waitroom/waitroom/challenge"
)

// Name is the backend's name in challenge.ReplayStores, the Redis
// admission store's: the guard is shared by every replica, through the
// admission store's client.
const Name = "redis"

func init() { challenge.ReplayStores.Register(Name, factory{}) }

// checkTimeout bounds Build's check that Redis takes the guard's command.
const checkTimeout = 10 * time.Second

// factory builds Guards in the config's Redis under its RedisPrefix.
type factory struct{}

func (factory) Build(ctx context.Context, c challenge.ReplayStoreConfig) (challenge.ReplayGuard, error) {
	client, err := c.Redis.Client()
	if err != nil {
		return nil, err
	}
	g := New(Options{Client: client, Prefix: c.RedisPrefix})
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	if err := g.Check(cctx); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

var _ challenge.ReplayStoreFactory = factory{}
