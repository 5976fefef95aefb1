package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/api"
	"github.com/waitroom/waitroom/inventory/memstore"
	"github.com/waitroom/waitroom/inventory/redisstore"
)

// OpenInventoryStore builds the store cfg names. The returned close
// function releases it (and its Redis client). Its errors are
// *StartError values naming inventory.data_dir or inventory.redis.
func OpenInventoryStore(ctx context.Context, cfg config.Inventory, log *slog.Logger) (inventory.Store, func() error, error) {
	switch cfg.Store {
	case config.StoreRedis:
		c, err := redisClient(cfg.Redis, "inventory.redis", log)
		if err != nil {
			return nil, nil, err
		}
		s, err := redisstore.New(ctx, redisstore.Options{Client: c, IdempotencyTTL: cfg.IdempotencyTTL.Std(),
			HoldRetention: cfg.HoldRetention.Std(), RequirePersistence: cfg.Redis.RequirePersistence, Logger: log})
		if err != nil {
			c.Close()
			return nil, nil, redisErr("inventory.redis", cfg.Redis, err)
		}
		return s, func() error { return errors.Join(s.Close(), c.Close()) }, nil
	default:
		s, err := memstore.Open(memstore.Options{Dir: cfg.DataDir, IdempotencyTTL: cfg.IdempotencyTTL.Std(),
			HoldRetention: cfg.HoldRetention.Std(), Logger: log})
		if err != nil {
			return nil, nil, startErr("inventory.data_dir", cfg.DataDir, err)
		}
		return s, s.Close, nil
	}
}

// redisErr names the Redis setting (path.url or path.cluster) a store
// could not use, with the address but never the password.
func redisErr(path string, cfg config.Redis, err error) error {
	if len(cfg.Cluster) > 0 {
		return startErr(path+".cluster", strings.Join(cfg.Cluster, ","), err)
	}
	return startErr(path+".url", redisHost(cfg.URL), err)
}

// redisLog receives go-redis's own messages (a pool's failed dials),
// which it would otherwise print to the process's stderr on its own: the
// error that matters is returned to the caller and said once. The last
// logger given to redisClient wins; they are debug messages.
var (
	redisLog     atomic.Pointer[slog.Logger]
	redisLogOnce sync.Once
)

type redisLogger struct{}

func (redisLogger) Printf(_ context.Context, format string, v ...any) {
	if l := redisLog.Load(); l != nil {
		l.Debug("redis: " + fmt.Sprintf(format, v...))
	}
}

// redisClient connects to a standalone Redis (url) or a cluster; path is
// the Redis section's key, for errors.
func redisClient(cfg config.Redis, path string, log *slog.Logger) (redis.UniversalClient, error) {
	redisLog.Store(log)
	redisLogOnce.Do(func() { redis.SetLogger(redisLogger{}) })
	if len(cfg.Cluster) > 0 {
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: cfg.Cluster, Username: cfg.Username,
			Password: cfg.Password, PoolSize: cfg.PoolSize}), nil
	}
	opts, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return nil, startErr(path+".url", "", err)
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

// Sidecar is a seat-hold sidecar whose store is open: NewSidecar
// checks everything that can fail at start-up, Run serves. Not safe for
// concurrent use.
type Sidecar struct {
	cfg        config.Inventory
	log        *slog.Logger
	ln         net.Listener
	store      inventory.Store
	closeStore func() error
	srv        *api.Server
}

// NewSidecar opens the store cfg names and builds the API for ln. Call
// Run, or Close to give the store back without serving.
func NewSidecar(ctx context.Context, cfg config.Inventory, log *slog.Logger, ln net.Listener) (*Sidecar, error) {
	store, closeStore, err := OpenInventoryStore(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	srv, err := api.New(store, api.Options{Token: cfg.APIToken, InsecureNoAuth: cfg.InsecureNoAuth, Logger: log,
		MaxBodyBytes: int(cfg.MaxBodyBytes)})
	if err != nil {
		closeStore()
		return nil, err
	}
	return &Sidecar{cfg: cfg, log: log, ln: ln, store: store, closeStore: closeStore, srv: srv}, nil
}

// Close releases the store; after Run it does nothing.
func (s *Sidecar) Close() error {
	if s.closeStore == nil {
		return nil
	}
	err := s.closeStore()
	s.closeStore = nil
	return err
}

// Run serves the HTTP API and runs the reaper until ctx ends, then closes
// the store.
func (s *Sidecar) Run(ctx context.Context) error {
	cfg, log, ln := s.cfg, s.log, s.ln
	if cfg.InsecureNoAuth {
		log.Warn("inventory: running WITHOUT authentication (insecure_no_auth): anyone who reaches " + ln.Addr().String() + " can hold and sell seats")
	}
	reaper := &inventory.Reaper{Store: s.store, Interval: cfg.Reaper.Interval.Std(), Batch: cfg.Reaper.Batch,
		Logger: log, OnReap: s.srv.ObserveReap}
	rctx, stopReaper := context.WithCancel(context.Background())
	reaped := make(chan struct{})
	go func() { defer close(reaped); reaper.Run(rctx) }()

	log.Info("inventory sidecar listening", "addr", ln.Addr().String(), "store", string(cfg.Store))
	serveErr := s.srv.Serve(ctx, ln)
	stopReaper()
	<-reaped
	closeErr := s.Close()
	if serveErr != nil && !errors.Is(serveErr, context.Canceled) {
		return serveErr
	}
	return closeErr
}

// RunInventory runs the seat-hold sidecar on ln until ctx ends: the HTTP
// API over the configured store, and the reaper.
func RunInventory(ctx context.Context, cfg config.Inventory, log *slog.Logger, ln net.Listener) error {
	s, err := NewSidecar(ctx, cfg, log, ln)
	if err != nil {
		return err
	}
	return s.Run(ctx)
}
