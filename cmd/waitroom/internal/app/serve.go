package app

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/redisconn"
	"github.com/waitroom/waitroom/inventory/client"
	"github.com/waitroom/waitroom/plugins"
	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/proxy/httpguard"
	"github.com/waitroom/waitroom/proxy/meter"
	"github.com/waitroom/waitroom/proxy/netlimit"
	"github.com/waitroom/waitroom/proxy/proxyproto"
	"github.com/waitroom/waitroom/proxy/ratelimit"
	"github.com/waitroom/waitroom/proxy/target"
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
	opts := admission.Options{Store: store, Meter: w.Meter, Replica: w.replica(), Logger: log, ShadowKey: shadowKey(cfg)}
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
	def.apply(cfg, &popts)
	if popts.Notify, err = w.sinks(ctx); err != nil {
		return nil, err
	}
	w.feed = w.newFeed()
	w.Proxy, err = proxy.New(popts)
	if err != nil {
		return nil, err
	}
	w.closers = append(w.closers, w.Proxy.Close)
	if w.lns.Admin != nil {
		w.admin, err = w.Proxy.Admin(proxy.AdminOptions{Token: cfg.Admin.Token, Gatherer: w.reg, Ready: w.ready})
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

// listen opens every configured listener the caller did not pass.
func (w *Waitroom) listen() error {
	s := w.cfg.Serve
	open := func(ln *net.Listener, key, addr string) error {
		if *ln != nil || addr == "" {
			return nil
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return startErr(key, addr, err)
		}
		*ln = l
		return nil
	}
	var errs []error
	errs = append(errs, open(&w.lns.HTTP, "serve.listen", s.Listen), open(&w.lns.Admin, "admin.listen", w.cfg.Admin.Listen))
	w.lns.HTTP = w.proxyProtocol(w.lns.HTTP)
	if s.WithInventory {
		errs = append(errs, open(&w.lns.Inventory, "inventory.listen", w.cfg.Inventory.Listen))
	}
	w.guardListeners()
	if s.TLS.Listen != "" {
		tc, err := tlsConfig(s.TLS)
		if err != nil {
			errs = append(errs, err)
		} else if err := open(&w.lns.HTTPS, "serve.tls.listen", s.TLS.Listen); err != nil {
			errs = append(errs, err)
		} else {
			// PROXY headers are read first, so that the connection limits
			// see the client the balancer names; TLS comes last.
			w.lns.HTTPS = w.guard(w.proxyProtocol(w.lns.HTTPS), "https", w.proxyLimits())
			tc.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
				if w.fingerprints != nil {
					w.fingerprints.Observe(hello)
				}
				return nil, nil
			}
			w.lns.HTTPS = tls.NewListener(w.lns.HTTPS, tc)
		}
	}
	for _, ln := range []net.Listener{w.lns.HTTP, w.lns.HTTPS, w.lns.Admin, w.lns.Inventory} {
		if ln != nil {
			w.closers = append(w.closers, func() error { ln.Close(); return nil })
		}
	}
	return errors.Join(errs...)
}

// guardListeners wraps the plain listeners (HTTP, admin, inventory) so
// that accept errors back off instead of stopping the server, and their
// connections are bounded (see proxy/netlimit). The HTTP listener is
// wrapped above its PROXY protocol reader, so per-client limits count the
// client the balancer names.
func (w *Waitroom) guardListeners() {
	w.netm = netlimit.NewMetrics()
	w.lns.HTTP = w.guard(w.lns.HTTP, "http", w.proxyLimits())
	w.lns.Admin = w.guard(w.lns.Admin, "admin", netlimit.Limits{MaxConns: w.cfg.Admin.MaxConnections})
	w.lns.Inventory = w.guard(w.lns.Inventory, "inventory", netlimit.Limits{MaxConns: w.cfg.Serve.MaxConnections})
}

func (w *Waitroom) guard(ln net.Listener, name string, l netlimit.Limits) net.Listener {
	if ln == nil {
		return nil
	}
	return netlimit.Wrap(ln, name, l, w.netm, w.log)
}

// proxyLimits are the connection limits of the proxy's listeners; trusted
// proxies carry many clients and have no per-client limit.
func (w *Waitroom) proxyLimits() netlimit.Limits {
	s := w.cfg.Serve
	l := netlimit.Limits{MaxConns: s.MaxConnections, MaxConnsPerClient: s.MaxConnectionsPerClient}
	if trusted, err := config.ParseNetworks(s.TrustedProxies); err == nil && len(trusted) > 0 {
		l.Exempt = func(a netip.Addr) bool {
			for _, p := range trusted {
				if p.Contains(a) {
					return true
				}
			}
			return false
		}
	}
	return l
}

func tlsConfig(c config.ServeTLS) (*tls.Config, error) {
	certPEM, err := os.ReadFile(c.CertFile)
	if err != nil {
		return nil, startErr("serve.tls.cert_file", c.CertFile, err)
	}
	keyPEM, err := os.ReadFile(c.KeyFile)
	if err != nil {
		return nil, startErr("serve.tls.key_file", c.KeyFile, err)
	}
	if b, _ := pem.Decode(certPEM); b == nil || b.Type != "CERTIFICATE" {
		return nil, startErr("serve.tls.cert_file", c.CertFile, errors.New("no PEM CERTIFICATE block first"))
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The certificate parsed as PEM: what is left is the key, or the
		// pair not matching.
		return nil, startErr("serve.tls.key_file", c.KeyFile, err)
	}
	min := uint16(tls.VersionTLS12)
	if c.MinVersion == config.TLS13 {
		min = tls.VersionTLS13
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: min,
		NextProtos: []string{"http/1.1"}}, nil
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

// newOrigin builds the origin oc, configured at path (origins[2]), with
// the share of its in-flight limit reserved for admitted visitors.
func newOrigin(oc config.Origin, path string, reserved float64, log *slog.Logger) (*upstream.Origin, error) {
	c := upstream.Config{Name: oc.Name, Addrs: oc.Addresses, TLS: oc.TLS, TLSServerName: oc.TLSServerName,
		Host: oc.Host, MaxConns: oc.MaxConns, MaxInFlight: oc.MaxInFlightLimit(), ReservedAdmitted: reserved,
		DialTimeout: oc.DialTimeout.Std(), ReadTimeout: oc.ReadTimeout.Std(), WriteTimeout: oc.WriteTimeout.Std(),
		MaxConnWaitTimeout: oc.MaxConnWait.Std(), MaxIdleConnDuration: oc.MaxIdleConnDuration.Std(),
		ReadBufferSize: oc.ReadBufferBytes, MaxResponseBodySize: oc.MaxResponseBodyBytes, Retries: oc.Retries,
		Health: upstream.HealthCheck{Path: oc.HealthCheck.Path, Interval: oc.HealthCheck.Interval.Std(),
			Timeout: oc.HealthCheck.Timeout.Std(), UnhealthyAfter: oc.HealthCheck.UnhealthyAfter,
			HealthyAfter: oc.HealthCheck.HealthyAfter}}
	if oc.TLSCAFile != "" {
		pool, err := loadCAs(oc.TLSCAFile)
		if err != nil {
			return nil, startErr(path+".tls_ca_file", oc.TLSCAFile, err)
		}
		c.RootCAs = pool
	}
	return upstream.New(c, log)
}

// proxyOptions maps the configuration to the proxy's options.
func (w *Waitroom) proxyOptions(keys *admission.Keyring, pages *static.Pages) (proxy.Options, error) {
	s := w.cfg.Serve
	trusted, err := config.ParseNetworks(s.TrustedProxies)
	if err != nil {
		return proxy.Options{}, err
	}
	bypass, err := config.ParseNetworks(s.Bypass.CIDRs)
	if err != nil {
		return proxy.Options{}, err
	}
	limiter, err := ratelimit.New(ratelimit.Config{
		PerIP:      ratelimit.Bucket{Rate: s.RateLimits.PerIP.Rate, Burst: s.RateLimits.PerIP.Burst},
		PerPrefix:  ratelimit.Bucket{Rate: s.RateLimits.PerPrefix.Rate, Burst: s.RateLimits.PerPrefix.Burst},
		IPv4Prefix: s.RateLimits.IPv4Prefix, IPv6Prefix: s.RateLimits.IPv6Prefix, TableSize: s.RateLimits.TableSize})
	if err != nil {
		return proxy.Options{}, err
	}
	budget, err := netlimit.NewBudget(s.MaxInFlight, [netlimit.NumClasses]float64{
		netlimit.Admitted: s.Reserved.Admitted, netlimit.API: s.Reserved.API})
	if err != nil {
		return proxy.Options{}, fmt.Errorf("serve.reserved: %w", err)
	}
	w.reg = prometheus.NewRegistry()
	w.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), w.Meter)
	w.registerProxyProtocol(w.reg)
	if w.netm != nil {
		w.reg.MustRegister(w.netm)
	}
	o := proxy.Options{Prefix: s.Prefix, Engine: w.Engine, Keys: keys, Pages: pages, Origins: w.origins,
		Trusted: httpguard.NewTrustedHeader(trusted, s.ClientIPHeader), PassCacheSize: s.PassCacheSize, Limiter: limiter,
		Meter: w.Meter, Registerer: w.reg, Logger: w.log, Budget: budget,
		Bypass: proxy.Bypass{CIDRs: bypass, Header: s.Bypass.Header, Secret: s.Bypass.Secret},
		Cookies: proxy.Cookies{Ticket: s.Cookies.Ticket, Pass: s.Cookies.Pass, Domain: s.Cookies.Domain,
			Strict: s.Cookies.SameSite == config.SameSiteStrict, ForwardPass: s.Cookies.ForwardPass},
	}
	// Whether cookies are Secure, and so their names, is decided here,
	// once: the proxy reads exactly one name per cookie.
	switch {
	case s.CookiesAlwaysSecure():
		o.Cookies.Secure = proxy.SecureAlways
	case s.Cookies.Secure == config.SecureNever:
		o.Cookies.Secure = proxy.SecureNever
	}
	for _, b := range s.Binding {
		switch b {
		case config.BindUserAgent:
			o.Binding.UserAgent = true
		case config.BindIPPrefix:
			o.Binding.IPPrefix = true
		}
	}
	o.Routes, o.Unmatched = Routes(w.cfg)
	o.PathParameters, o.DefaultHost = pathParameters(s.PathParameters), s.DefaultHost
	for _, e := range w.cfg.Events {
		o.Events = append(o.Events, proxy.Event{ID: e.ID, LandingPath: e.LandingPath,
			PositionDisplay: proxy.PositionDisplay(e.PositionDisplay)})
	}
	return o, nil
}

// Routes maps the configuration's routes and its unmatched setting to the
// proxy's.
func Routes(cfg *config.Config) (routes []proxy.Route, unmatched proxy.Route) {
	action := func(a config.RouteAction) proxy.Action {
		switch a {
		case config.ActionQueue:
			return proxy.ActionQueue
		case config.ActionBlock:
			return proxy.ActionBlock
		}
		return proxy.ActionPass
	}
	for _, r := range cfg.Routes {
		routes = append(routes, proxy.Route{Prefix: r.Prefix, Glob: r.Glob, Event: r.Event, Origin: r.Origin,
			Action: action(r.EffectiveAction()), CaseSensitive: r.CaseSensitive,
			EncodedSlashes: r.EncodedSlashes, AllowTrace: r.AllowTrace})
	}
	u := cfg.Unmatched
	return routes, proxy.Route{Event: u.Event, Origin: u.Origin, Action: action(u.EffectiveAction())}
}

func pathParameters(p config.PathParameters) target.Semicolons {
	if p == config.PathParametersStrip {
		return target.SemicolonsStrip
	}
	return target.SemicolonsRefuse
}

// WriteRouteTable writes the route table the proxy builds from cfg (for
// waitroom check-config).
func WriteRouteTable(w io.Writer, cfg *config.Config) error {
	routes, unmatched := Routes(cfg)
	tc := proxy.TableConfig{Prefix: cfg.Serve.Prefix, Routes: routes, Unmatched: unmatched,
		PathParameters: pathParameters(cfg.Serve.PathParameters), DefaultHost: cfg.Serve.DefaultHost}
	if len(cfg.Origins) > 0 {
		tc.DefaultOrigin = cfg.Origins[0].Name
	}
	return proxy.WriteRouteTable(w, tc)
}

// pageConfigs maps every event's page settings, with the sources its
// CAPTCHA widget needs in the page's policy (def may be nil: no defence).
func pageConfigs(cfg *config.Config, def *defence) []static.PageConfig {
	var out []static.PageConfig
	for i := range cfg.Events {
		e := &cfg.Events[i]
		pc := static.PageConfig{Event: e.ID, Name: e.Name, Prefix: cfg.Serve.Prefix,
			PositionDisplay: string(e.PositionDisplay), LogoURL: e.Page.LogoURL,
			Colors:          static.Colors{Background: e.Page.Colors.Background, Text: e.Page.Colors.Text, Accent: e.Page.Colors.Accent},
			DefaultLanguage: string(e.Page.DefaultLanguage), TemplateDir: e.Page.TemplateDir, JoinPath: e.LandingPath}
		if p := def.eventCaptcha(e); p != nil {
			c := p.Widget().CSP
			pc.WidgetCSP = static.CSPSources{Script: c.Script, Frame: c.Frame, Style: c.Style, Connect: c.Connect}
			ws := challenge.WidgetScriptOf(p)
			pc.Widget = static.WidgetScript{API: ws.API, WaitReady: ws.WaitReady, Execute: ws.Execute}
		}
		if pc.Name == "" {
			pc.Name = e.ID
		}
		if len(e.Page.Texts) > 0 {
			pc.Texts = make(map[string]map[string]string, len(e.Page.Texts))
			for lang, texts := range e.Page.Texts {
				pc.Texts[string(lang)] = texts
			}
		}
		out = append(out, pc)
	}
	return out
}

// ready is /readyz: every origin has a healthy address.
func (w *Waitroom) ready(context.Context) error {
	var errs []error
	for _, o := range w.origins {
		if !o.Healthy() {
			errs = append(errs, fmt.Errorf("origin %q has no healthy address", o.Name()))
		}
	}
	return errors.Join(errs...)
}

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
	for _, o := range w.origins {
		goRun(func() { o.Start(runCtx) })
	}
	if w.link != nil {
		goRun(func() { w.link.run(runCtx) })
	}
	if w.feed != nil {
		goRun(func() { w.feed.run(runCtx) })
	}
	goRun(func() { w.Engine.Run(runCtx) })

	s := w.cfg.Serve
	srv := w.Proxy.Server(proxy.ServerConfig{MaxHeaderBytes: s.MaxHeaderBytes, MaxBodyBytes: s.MaxBodyBytes,
		ReadTimeout: s.ReadTimeout.Std(), WriteTimeout: s.WriteTimeout.Std(), IdleTimeout: s.IdleTimeout.Std(),
		HeaderTimeout: s.HeaderTimeout.Std(), BodyTimeout: s.BodyTimeout.Std(), BodyMinRate: s.BodyMinRate})
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
	serving.Wait()
	stop()
	wg.Wait()
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
	for i := len(w.closers) - 1; i >= 0; i-- {
		if err := w.closers[i](); err != nil {
			w.log.Warn("app: closing", "err", err)
		}
	}
	w.closers = nil
}

// loadCAs reads a PEM file of CA certificates.
func loadCAs(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New("no PEM certificate found")
	}
	return pool, nil
}
