package app

import (
	"context"
	"errors"
	"log/slog"
	"net"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	_ "github.com/waitroom/waitroom/cmd/waitroom/internal/backends" // the built-in store backends
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/redisconn"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/api"
)

// OpenInventoryStore builds the store cfg names, by the backend
// registered under inventory.store. The returned close function releases
// it (and its Redis client). Its errors are *StartError values naming
// inventory.data_dir or inventory.redis.
func OpenInventoryStore(ctx context.Context, cfg config.Inventory, log *slog.Logger) (inventory.Store, func() error, error) {
	f, ok := inventory.Stores.Lookup(string(cfg.Store))
	if !ok {
		return nil, nil, noBackend("inventory.store", string(cfg.Store), inventory.Stores.Names())
	}
	conn := redisconn.New(cfg.Redis.Settings(), log)
	s, err := f.Build(ctx, cfg.StoreConfig(conn, log))
	if err != nil {
		conn.Close()
		return nil, nil, settingErr("inventory", err)
	}
	return s, func() error { return errors.Join(s.Close(), conn.Close()) }, nil
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
	probe      *storeProbe // waitroom_store_up{store="inventory"} on the sidecar's /metrics
}

// NewSidecar opens the store cfg names and builds the API for ln. Call
// Run, or Close to give the store back without serving.
func NewSidecar(ctx context.Context, cfg config.Inventory, log *slog.Logger, ln net.Listener) (*Sidecar, error) {
	store, closeStore, err := OpenInventoryStore(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	probe := newStoreProbe("inventory", store.Ping)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), probe)
	srv, err := api.New(store, api.Options{Token: cfg.APIToken, InsecureNoAuth: cfg.InsecureNoAuth, Logger: log,
		MaxBodyBytes: int(cfg.MaxBodyBytes), Registry: reg})
	if err != nil {
		closeStore()
		return nil, err
	}
	return &Sidecar{cfg: cfg, log: log, ln: ln, store: store, closeStore: closeStore, srv: srv, probe: probe}, nil
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
	probed := make(chan struct{})
	go func() { defer close(probed); s.probe.run(rctx) }()

	log.Info("inventory sidecar listening", "addr", ln.Addr().String(), "store", string(cfg.Store))
	serveErr := s.srv.Serve(ctx, ln)
	stopReaper()
	<-reaped
	<-probed
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
