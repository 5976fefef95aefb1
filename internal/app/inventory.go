package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/config"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/api"
	"github.com/waitroom/waitroom/inventory/memstore"
	"github.com/waitroom/waitroom/inventory/redisstore"
)

// OpenInventoryStore builds the store cfg names. The returned close
// function releases it (and its Redis client).
func OpenInventoryStore(ctx context.Context, cfg config.Inventory, log *slog.Logger) (inventory.Store, func() error, error) {
	switch cfg.Store {
	case config.StoreRedis:
		c, err := redisClient(cfg.Redis)
		if err != nil {
			return nil, nil, err
		}
		s, err := redisstore.New(ctx, redisstore.Options{Client: c, IdempotencyTTL: cfg.IdempotencyTTL.Std(),
			HoldRetention: cfg.HoldRetention.Std(), RequirePersistence: cfg.Redis.RequirePersistence, Logger: log})
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		return s, func() error { return errors.Join(s.Close(), c.Close()) }, nil
	default:
		s, err := memstore.Open(memstore.Options{Dir: cfg.DataDir, IdempotencyTTL: cfg.IdempotencyTTL.Std(),
			HoldRetention: cfg.HoldRetention.Std(), Logger: log})
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	}
}

// redisClient connects to a standalone Redis (url) or a cluster.
func redisClient(cfg config.Redis) (redis.UniversalClient, error) {
	if len(cfg.Cluster) > 0 {
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: cfg.Cluster, Username: cfg.Username,
			Password: cfg.Password, PoolSize: cfg.PoolSize}), nil
	}
	opts, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("inventory.redis.url: %w", err)
	}
	if cfg.Username != "" {
		opts.Username = cfg.Username
	}
	if cfg.Password != "" {
		opts.Password = cfg.Password
	}
	if cfg.PoolSize > 0 {
		opts.PoolSize = cfg.PoolSize
	}
	return redis.NewClient(opts), nil
}

// RunInventory runs the seat-hold sidecar on ln until ctx ends: the HTTP
// API over the configured store, and the reaper.
func RunInventory(ctx context.Context, cfg config.Inventory, log *slog.Logger, ln net.Listener) error {
	store, closeStore, err := OpenInventoryStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	srv, err := api.New(store, api.Options{Token: cfg.APIToken, InsecureNoAuth: cfg.InsecureNoAuth, Logger: log,
		MaxBodyBytes: int(cfg.MaxBodyBytes)})
	if err != nil {
		closeStore()
		return err
	}
	if cfg.InsecureNoAuth {
		log.Warn("inventory: running WITHOUT authentication (insecure_no_auth): anyone who reaches " + ln.Addr().String() + " can hold and sell seats")
	}
	reaper := &inventory.Reaper{Store: store, Interval: cfg.Reaper.Interval.Std(), Batch: cfg.Reaper.Batch,
		Logger: log, OnReap: srv.ObserveReap}
	rctx, stopReaper := context.WithCancel(context.Background())
	reaped := make(chan struct{})
	go func() { defer close(reaped); reaper.Run(rctx) }()

	log.Info("inventory sidecar listening", "addr", ln.Addr().String(), "store", string(cfg.Store))
	serveErr := srv.Serve(ctx, ln)
	stopReaper()
	<-reaped
	closeErr := closeStore()
	if serveErr != nil && !errors.Is(serveErr, context.Canceled) {
		return serveErr
	}
	return closeErr
}
