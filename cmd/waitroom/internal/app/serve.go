package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/acme"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/redisconn"
	"github.com/waitroom/waitroom/inventory/client"
	"github.com/waitroom/waitroom/plugins"
	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/proxy/meter"
	"github.com/waitroom/waitroom/proxy/netlimit"
	"github.com/waitroom/waitroom/proxy/proxyproto"
	"github.com/waitroom/waitroom/proxy/upstream"
	"github.com/waitroom/waitroom/static"
)

// Listeners are listeners a caller opened already (tests, the demo); a
// nil one is opened from the configured address.
type Listeners struct {
	HTTP, HTTPS, Admin, Inventory net.Listener
}

// Waitroom is a running `waitroom serve`: the proxy, its engine, and
// (with serve.with_inventory) the seat-hold sidecar. Build it with
// NewServe, then Run it.
type Waitroom struct {
	cfg   *config.Config
	log   *slog.Logger
	start time.Time

	Engine  *admission.Engine
	store   admission.Store
	Proxy   *proxy.Proxy
	Meter   *meter.Meter
	origins []*upstream.Origin
	link    *inventoryLink
	feed    *auditFeed
	reg     *prometheus.Registry
	admin   http.Handler

	lns     Listeners
	closers []func() error
	// netm counts the listeners' accept errors and connection limits.
	netm *netlimit.Metrics

	// fingerprints holds the JA4 of TLS connections (nil without TLS or
	// bot defence).
	fingerprints *proxy.Fingerprints
	sinkList     []plugins.Sink
	// sidecar is the in-process seat-hold sidecar (serve.with_inventory).
	sidecar *Sidecar
	// admissionRedis is the admission section's Redis connection, opened
	// only by a store that uses it; the replay guard shares it.
	admissionRedis *redisconn.Conn

	// proxyProto are the PROXY protocol listeners (serve.proxy_protocol).
	proxyProto []*proxyproto.Listener
	// replay is the bot defence's replay guard, made once (see
	// defenceFor).
	replay challenge.ReplayGuard

	// ConfigFile is the file a reload reads again (see Reload); ""
	// when the configuration came from elsewhere.
	ConfigFile string
	// reload is what a reload needs and changes (see reload.go).
	reload reloadState

	// acme gets serve.tls.acme's certificates (nil without ACME).
	acme *acme.Manager
	// cert is the certificate served on serve.tls.listen, for its expiry
	// metric; probes watch the stores for waitroom_store_up.
	cert   atomic.Pointer[certInfo]
	probes []*storeProbe
}

// NewServe builds everything cfg describes (validated for RoleProxy):
// stores, keys, engine, pages, origins, proxy, and opens the listeners,
// so that a caller knows the addresses before Run. On error everything
// opened is closed again.
//
// Its errors name the setting that failed and why, on one line
// (*StartError, or config's *KeyError for the keys).
func NewServe(ctx context.Context, cfg *config.Config, log *slog.Logger, lns Listeners) (_ *Waitroom, err error) {
	// w is not the named result: "return nil, err" must not leave the
	// deferred close a nil Waitroom.
	w := &Waitroom{cfg: cfg, log: log, start: time.Now(), lns: lns}
	defer func() {
		if err != nil {
			w.close()
		}
	}()
	keys, err := cfg.Serve.Keys.Keyring()
	if err != nil {
		return nil, err
	}
	store, err := w.admissionStore(ctx)
	if err != nil {
		return nil, err
	}
	w.store = store
	// Everything is built from the file overlaid with the events made
	// through the API (eventsapi.go), not from the file with the records
	// applied after: a record that changed what may no longer change
	// live (a schedule, once the queue opened) would be refused then.
	file := cfg
	cfg, recs, origin := w.startRecords(ctx, file)
	w.cfg = cfg
	var events []admission.EventConfig
	var linked []string
	for i := range cfg.Events {
		ec, err := cfg.Events[i].AdmissionConfig(w.start)
		if err != nil {
			return nil, fmt.Errorf("events[%d] (%s): %w", i, cfg.Events[i].ID, err)
		}
		events = append(events, ec)
		if ec.InventoryEvent != "" {
			linked = append(linked, ec.InventoryEvent)
		}
	}
	if err := w.listen(); err != nil {
		return nil, err
	}
	if w.lns.Inventory != nil {
		// The sidecar's store opens now, so that a locked or unwritable
		// inventory.data_dir stops the start instead of a running proxy.
		if w.sidecar, err = NewSidecar(ctx, cfg.Inventory, log, w.lns.Inventory); err != nil {
			return nil, err
		}
		w.closers = append(w.closers, w.sidecar.Close)
	}
	if len(linked) > 0 {
		url, token := cfg.Serve.Inventory.URL, cfg.Serve.Inventory.Token
		if cfg.Serve.WithInventory {
			url, token = "http://"+w.lns.Inventory.Addr().String(), cfg.Inventory.APIToken
		}
		c := client.New(url, token)
		w.closers = append(w.closers, c.Close)
		w.link = newInventoryLink(c, linked, cfg.Serve.Inventory.Refresh.Std(), log)
	}
	w.Meter = meter.New(meter.Options{})
	opts := admission.Options{Store: store, Meter: w.Meter, Replica: w.replica(), Logger: log, ShadowKey: shadowKey(cfg),
		Lease: cfg.Admission.Lease.Std(), MinuteRetention: cfg.Admission.ReportRetention.Std()}
	if len(cfg.Sinks) > 0 {
		opts.NoShows = w.noShow
	}
	if w.link != nil {
		opts.Inventory = w.link
	}
	w.Engine, err = admission.New(opts, events...)
	if err != nil {
		return nil, err
	}
	// The defence comes before the pages: a CAPTCHA widget's sources go
	// into its event's page policy.
	def, err := w.defence(ctx)
	if err != nil {
		return nil, err
	}
	pages, err := static.New(pageConfigs(cfg, def))
	if err != nil {
		return nil, err
	}
	for i, oc := range cfg.Origins {
		o, err := newOrigin(oc, fmt.Sprintf("origins[%d]", i), cfg.Serve.Reserved.Admitted, log)
		if err != nil {
			return nil, err
		}
		w.origins = append(w.origins, o)
		w.closers = append(w.closers, func() error { o.Close(); return nil })
	}
	popts, err := w.proxyOptions(keys, pages)
	if err != nil {
		return nil, err
	}
	if w.acme != nil {
		w.reg.MustRegister(w.acme)
	}
	def.apply(cfg, &popts)
	if popts.Notify, err = w.sinks(ctx); err != nil {
		return nil, err
	}
	w.feed = w.newFeed()
	if w.probes, err = w.registerOps(); err != nil {
		return nil, err
	}
	w.Proxy, err = proxy.New(popts)
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, w.Proxy.Close)
	w.initReload(popts, events, file, recs, origin)
	if w.lns.Admin != nil {
		w.admin, err = w.Proxy.Admin(proxy.AdminOptions{Token: cfg.Admin.Token, Gatherer: w.reg, Ready: w.ready,
			Reload: w.adminReload, Origin: w.eventOrigin, Events: eventsAPI{w}})
		if err != nil {
			return nil, err
		}
	}
	return w, nil
}

// admissionStore opens the configured admission store, by the backend
// registered under admission.store, and the section's Redis connection
// that the replay guard shares.
func (w *Waitroom) admissionStore(ctx context.Context) (admission.Store, error) {
	a := &w.cfg.Admission
	f, ok := admission.Stores.Lookup(string(a.Store))
	if !ok {
		return nil, noBackend("admission.store", string(a.Store), admission.Stores.Names())
	}
	w.admissionRedis = redisconn.New(a.Redis.Settings(), w.log)
	w.closers = append(w.closers, w.admissionRedis.Close)
	s, err := f.Build(ctx, a.StoreConfig(w.admissionRedis, w.log))
	if err != nil {
		return nil, settingErr("admission", err)
	}
	w.closers = append(w.closers, s.Close)
	return s, nil
}

func (w *Waitroom) replica() string {
	if r := w.cfg.Admission.Replica; r != "" {
		return r
	}
	host, _ := os.Hostname()
	return host + ":" + strconv.Itoa(os.Getpid())
}

// Addr returns the address of the HTTP listener (or HTTPS when there is
// no HTTP one).
func (w *Waitroom) Addr() net.Addr {
	if w.lns.HTTP != nil {
		return w.lns.HTTP.Addr()
	}
	return w.lns.HTTPS.Addr()
}

// AdminAddr returns the admin listener's address (nil when disabled).
func (w *Waitroom) AdminAddr() net.Addr {
	if w.lns.Admin == nil {
		return nil
	}
	return w.lns.Admin.Addr()
}

// InventoryAddr returns the in-process sidecar's address (nil without one).
func (w *Waitroom) InventoryAddr() net.Addr {
	if w.lns.Inventory == nil {
		return nil
	}
	return w.lns.Inventory.Addr()
}

// ready is /readyz: every origin has a healthy address, and the stores
// in Redis answer (the admission store and the replay guard's
// connection; the in-process sidecar's store), within readyTimeout.
func (w *Waitroom) ready(ctx context.Context) error {
	var errs []error
	for _, o := range w.liveOrigins() {
		if !o.Healthy() {
			errs = append(errs, fmt.Errorf("origin %q has no healthy address", o.Name()))
		}
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if w.admissionRedis != nil {
		if err := w.admissionRedis.Ping(ctx); err != nil {
			errs = append(errs, fmt.Errorf("admission store: %w", err))
		}
	}
	if w.sidecar != nil {
		if err := w.sidecar.store.Ping(ctx); err != nil {
			errs = append(errs, fmt.Errorf("inventory store: %w", err))
		}
	}
	return errors.Join(errs...)
}

// readyTimeout bounds /readyz's store probes: a load balancer that asks
// every second learns that Redis went, or came back, by the next probe.
const readyTimeout = 750 * time.Millisecond

// Run serves until ctx ends, then shuts down gracefully: listeners stop
// accepting, requests in flight get serve.shutdown_grace to finish, the
// engine and the stores are closed.
func (w *Waitroom) Run(ctx context.Context) error {
	defer w.close()
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	goRun := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }

	if w.lns.Inventory != nil {
		invCtx, stopInv := context.WithCancel(context.Background())
		invDone := make(chan struct{})
		go func() {
			defer close(invDone)
			if err := w.sidecar.Run(invCtx); err != nil {
				errc <- fmt.Errorf("inventory sidecar: %w", err)
			}
		}()
		// The sidecar stops last: the proxy's origins may still call it.
		defer func() { stopInv(); <-invDone }()
	}
	w.startOrigins(runCtx, goRun)
	if w.link != nil {
		goRun(func() { w.link.run(runCtx) })
	}
	if w.feed != nil {
		goRun(func() { w.feed.run(runCtx) })
	}
	if len(w.sinkList) > 0 {
		watch := newStateWatch(w.Engine, w.publish, time.Second)
		goRun(func() { watch.run(runCtx) })
	}
	goRun(func() { w.Engine.Run(runCtx) })
	goRun(func() { w.runACME(runCtx) })
	goRun(func() { w.watchRecords(runCtx) })
	for _, p := range w.probes {
		goRun(func() { p.run(runCtx) })
	}

	s := w.cfg.Serve
	srv := w.Proxy.Server(proxy.ServerConfig{MaxHeaderBytes: s.MaxHeaderBytes, MaxBodyBytes: s.MaxBodyBytes,
		ReadTimeout: s.ReadTimeout.Std(), WriteTimeout: s.WriteTimeout.Std(), IdleTimeout: s.IdleTimeout.Std(),
		HeaderTimeout: s.HeaderTimeout.Std(), BodyTimeout: s.BodyTimeout.Std(), BodyMinRate: s.BodyMinRate})
	srv.Handler = w.acmeChallenges(srv.Handler)
	var serving sync.WaitGroup
	for _, ln := range []net.Listener{w.lns.HTTP, w.lns.HTTPS} {
		if ln == nil {
			continue
		}
		serving.Add(1)
		go func() {
			defer serving.Done()
			if err := srv.Serve(ln); err != nil {
				errc <- fmt.Errorf("serve %s: %w", ln.Addr(), err)
			}
		}()
		w.log.Info("waitroom listening", "addr", ln.Addr().String())
	}
	var adminSrv *http.Server
	if w.lns.Admin != nil {
		adminSrv = w.adminServer()
		adminSrv.RegisterOnShutdown(w.Proxy.StopConsole) // the console's event streams
		serving.Add(1)
		go func() {
			defer serving.Done()
			if err := adminSrv.Serve(w.lns.Admin); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("admin: %w", err)
			}
		}()
		w.log.Info("admin API listening", "addr", w.lns.Admin.Addr().String())
	}

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	w.log.Info("waitroom shutting down", "grace", s.ShutdownGrace.Std().String())
	sctx, cancel := context.WithTimeout(context.Background(), max(s.ShutdownGrace.Std(), time.Millisecond))
	defer cancel()
	if err := srv.ShutdownWithContext(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		runErr = errors.Join(runErr, err)
	}
	if adminSrv != nil {
		adminSrv.Shutdown(sctx)
	}
	// Shutdown closes the listeners Serve has taken; one whose Serve had
	// not taken it yet (ctx ended at once) would stay open, and Serve on
	// it for ever, so every listener is closed here too.
	for _, ln := range []net.Listener{w.lns.HTTP, w.lns.HTTPS} {
		if ln != nil {
			ln.Close()
		}
	}
	serving.Wait()
	stop()
	wg.Wait()
	// The minute in progress goes into the report too.
	fctx, fcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer fcancel()
	if err := w.Engine.FlushMinutes(fctx); err != nil {
		w.log.Warn("writing the last minute records failed", "err", err)
	}
	return runErr
}

// adminServer is the admin listener's server, with serve's header, read
// and idle timeouts and header size (its connections are bounded by
// admin.max_connections on the listener).
func (w *Waitroom) adminServer() *http.Server {
	s := w.cfg.Serve
	return &http.Server{Handler: w.admin, ErrorLog: slog.NewLogLogger(w.log.Handler(), slog.LevelWarn),
		ReadHeaderTimeout: orDefault(s.HeaderTimeout.Std(), proxy.DefaultHeaderTimeout),
		ReadTimeout:       orDefault(s.HeaderTimeout.Std()+s.ReadTimeout.Std(), proxy.DefaultHeaderTimeout+proxy.DefaultReadTimeout),
		IdleTimeout:       orDefault(s.IdleTimeout.Std(), proxy.DefaultIdleTimeout),
		MaxHeaderBytes:    max(s.MaxHeaderBytes, proxy.MinHeaderBytes)}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// close releases everything NewServe opened, last opened first.
func (w *Waitroom) close() {
	w.reload.mu.Lock()
	retired := w.reload.retired
	w.reload.retired = nil
	w.reload.mu.Unlock()
	for _, o := range retired {
		o.Close()
	}
	for i := len(w.closers) - 1; i >= 0; i-- {
		if err := w.closers[i](); err != nil {
			w.log.Warn("app: closing", "err", err)
		}
	}
	w.closers = nil
}
