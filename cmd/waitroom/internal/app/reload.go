// Reloading the configuration file while serving (SIGHUP, POST
// /admin/v1/reload): what changes live, what needs a restart.

package app

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/proxy/upstream"
	"github.com/waitroom/waitroom/static"
)

// ErrNoConfigFile is Reload's error when the configuration did not come
// from a file (serve --origin).
var ErrNoConfigFile = errors.New("app: there is no configuration file to reload (serve was started without -c)")

// ReloadResult says what a reload did.
type ReloadResult struct {
	// Result is "applied" (the file is in force, except NeedsRestart) or
	// "refused" (nothing changed; see Problems).
	Result string `json:"result"`
	// Events added, changed (queue settings, texts, page, challenge) and
	// removed, by id.
	Events admission.Applied `json:"events"`
	// Origins added, changed (rebuilt) and removed, by name.
	Origins admission.Applied `json:"origins"`
	// Changed lists the other settings that changed and are in force:
	// "routes", "unmatched", "serve.keys", "bot_defence", ...
	Changed []string `json:"changed"`
	// NeedsRestart lists the settings that changed in the file but keep
	// their running value until a restart (see restartOnly).
	NeedsRestart []string `json:"needs_restart"`
	// Problems are why a reload was refused, each naming its setting.
	Problems []string `json:"problems,omitempty"`
}

// ReloadError is a refused reload: the file has problems, or the new
// settings could not be built. The running configuration stays.
type ReloadError struct {
	Problems []string
	err      error // the cause when it is not the file's problems
}

// Unwrap returns the cause (ErrNoConfigFile, admission.ErrLiveChange),
// if any.
func (e *ReloadError) Unwrap() error { return e.err }

func (e *ReloadError) Error() string {
	return "app: configuration refused: " + strings.Join(e.Problems, "; ")
}

// reloadState is what reloads share.
type reloadState struct {
	mu sync.Mutex // serialises reloads, and guards what follows
	// opts are the proxy's options in force; events the engine's event
	// set in force.
	opts   proxy.Options
	events []admission.EventConfig
	// runCtx and goRun start an added origin's health checks once Run
	// runs (nil before: Run starts w.origins).
	runCtx context.Context
	goRun  func(func())
	// retired are origins replaced or removed by a reload, closed at
	// shutdown (requests in flight may still use them).
	retired []*upstream.Origin
	// origins are the origins in force, for /readyz.
	origins []*upstream.Origin

	// file is the configuration file's (or start's) configuration in
	// force, recs the event records overlaid on it (eventsapi.go), and
	// origin each event's origin (file or api), read without mu.
	file   *config.Config
	recs   []admission.EventRecord
	origin atomic.Pointer[map[string]string]
	// refused are records that could not be applied, not tried again
	// until they change.
	refused []admission.EventRecord

	total *prometheus.CounterVec
	last  prometheus.Gauge
}

// restartField is a setting that cannot change while serving: a
// listener, a store, a limit built into the server.
type restartField struct {
	key  string
	same func(a, b *config.Config) bool
	keep func(dst, src *config.Config)
}

func field[T any](key string, get func(*config.Config) *T) restartField {
	return restartField{key: key,
		same: func(a, b *config.Config) bool { return reflect.DeepEqual(*get(a), *get(b)) },
		keep: func(dst, src *config.Config) { *get(dst) = *get(src) }}
}

// restartOnly are the settings a reload reports as needing a restart and
// leaves at their running value (docs/operations.md lists them).
var restartOnly = []restartField{
	field("log", func(c *config.Config) *config.Log { return &c.Log }),
	field("admin", func(c *config.Config) *config.Admin { return &c.Admin }),
	field("admission", func(c *config.Config) *config.Admission { return &c.Admission }),
	field("inventory", func(c *config.Config) *config.Inventory { return &c.Inventory }),
	field("sinks", func(c *config.Config) *[]config.Sink { return &c.Sinks }),
	field("serve.listen", func(c *config.Config) *string { return &c.Serve.Listen }),
	field("serve.tls", func(c *config.Config) *config.ServeTLS { return &c.Serve.TLS }),
	field("serve.proxy_protocol", func(c *config.Config) *bool { return &c.Serve.ProxyProtocol }),
	field("serve.proxy_protocol_timeout", func(c *config.Config) *config.Duration { return &c.Serve.ProxyProtocolTimeout }),
	field("serve.max_header_bytes", func(c *config.Config) *int { return &c.Serve.MaxHeaderBytes }),
	field("serve.max_body_bytes", func(c *config.Config) *int64 { return &c.Serve.MaxBodyBytes }),
	field("serve.read_timeout", func(c *config.Config) *config.Duration { return &c.Serve.ReadTimeout }),
	field("serve.header_timeout", func(c *config.Config) *config.Duration { return &c.Serve.HeaderTimeout }),
	field("serve.body_timeout", func(c *config.Config) *config.Duration { return &c.Serve.BodyTimeout }),
	field("serve.body_min_rate", func(c *config.Config) *int64 { return &c.Serve.BodyMinRate }),
	field("serve.write_timeout", func(c *config.Config) *config.Duration { return &c.Serve.WriteTimeout }),
	field("serve.idle_timeout", func(c *config.Config) *config.Duration { return &c.Serve.IdleTimeout }),
	field("serve.shutdown_grace", func(c *config.Config) *config.Duration { return &c.Serve.ShutdownGrace }),
	field("serve.max_connections", func(c *config.Config) *int { return &c.Serve.MaxConnections }),
	field("serve.max_connections_per_client", func(c *config.Config) *int { return &c.Serve.MaxConnectionsPerClient }),
	field("serve.max_in_flight", func(c *config.Config) *int { return &c.Serve.MaxInFlight }),
	field("serve.reserved", func(c *config.Config) *config.ReservedShares { return &c.Serve.Reserved }),
	field("serve.with_inventory", func(c *config.Config) *bool { return &c.Serve.WithInventory }),
	field("serve.inventory", func(c *config.Config) *config.InventoryClient { return &c.Serve.Inventory }),
	field("serve.pass_cache_size", func(c *config.Config) *int { return &c.Serve.PassCacheSize }),
	field("serve.rate_limits", func(c *config.Config) *config.RateLimits { return &c.Serve.RateLimits }),
	field("bot_defence.secret", func(c *config.Config) *string { return &c.BotDefence.Secret }),
}

// liveFields are the other settings, reported under Changed when they
// change (routes, events and origins have their own reports).
var liveFields = []restartField{
	field("routes", func(c *config.Config) *[]config.Route { return &c.Routes }),
	field("unmatched", func(c *config.Config) *config.Unmatched { return &c.Unmatched }),
	field("bot_defence", func(c *config.Config) *config.BotDefence { return &c.BotDefence }),
	field("identity", func(c *config.Config) *config.Identity { return &c.Identity }),
	field("serve.keys", func(c *config.Config) *config.Keys { return &c.Serve.Keys }),
	field("serve.cookies", func(c *config.Config) *config.Cookies { return &c.Serve.Cookies }),
	field("serve.binding", func(c *config.Config) *[]config.BindingSignal { return &c.Serve.Binding }),
	field("serve.bypass", func(c *config.Config) *config.Bypass { return &c.Serve.Bypass }),
	field("serve.crawlers", func(c *config.Config) *[]config.Crawler { return &c.Serve.Crawlers }),
	field("serve.trusted_proxies", func(c *config.Config) *[]string { return &c.Serve.TrustedProxies }),
	field("serve.client_ip_header", func(c *config.Config) *string { return &c.Serve.ClientIPHeader }),
	field("serve.prefix", func(c *config.Config) *string { return &c.Serve.Prefix }),
	field("serve.path_parameters", func(c *config.Config) *config.PathParameters { return &c.Serve.PathParameters }),
	field("serve.default_host", func(c *config.Config) *string { return &c.Serve.DefaultHost }),
	field("serve.public_url", func(c *config.Config) *string { return &c.Serve.PublicURL }),
}

// initReload records what NewServe built, for reloads, and registers the
// reload metrics.
func (w *Waitroom) initReload(opts proxy.Options, events []admission.EventConfig, file *config.Config,
	recs []admission.EventRecord, origin map[string]string) {
	r := &w.reload
	r.opts, r.events, r.origins, r.file, r.recs = opts, events, w.origins, file, recs
	r.origin.Store(&origin)
	r.total = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_config_reloads_total",
		Help: "Configuration reloads (SIGHUP, POST /admin/v1/reload), by result: applied or refused."}, []string{"result"})
	r.last = prometheus.NewGauge(prometheus.GaugeOpts{Name: "waitroom_config_last_reload_timestamp_seconds",
		Help: "When the configuration was last reloaded and applied (Unix seconds; 0: never since the start)."})
	r.total.WithLabelValues("applied")
	r.total.WithLabelValues("refused")
	w.reg.MustRegister(r.total, r.last)
}

// startOrigins starts the health checks of the origins in force under
// ctx, and of those a later reload adds.
func (w *Waitroom) startOrigins(ctx context.Context, goRun func(func())) {
	r := &w.reload
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runCtx, r.goRun = ctx, goRun
	for _, o := range w.origins {
		goRun(func() { o.Start(ctx) })
	}
}

// liveOrigins are the origins in force.
func (w *Waitroom) liveOrigins() []*upstream.Origin {
	w.reload.mu.Lock()
	defer w.reload.mu.Unlock()
	return w.reload.origins
}

// Reload reads ConfigFile again and applies it while serving: events
// (added, changed, removed; each kept event keeps its queue, tickets,
// passes and controller), routes, origins, keys, pages and texts, bot
// defence, identity, cookies, bypass, crawlers. Settings in restartOnly
// keep their running value and are listed under NeedsRestart. A file
// with problems is refused whole: the result lists every problem, the
// error is a *ReloadError, and the running configuration stays.
func (w *Waitroom) Reload(ctx context.Context) (ReloadResult, error) {
	r := &w.reload
	r.mu.Lock()
	defer r.mu.Unlock()
	res, err := w.reloadLocked(ctx)
	if err != nil {
		var re *ReloadError
		if !errors.As(err, &re) {
			re = &ReloadError{Problems: []string{OneLine(err)}}
			err = re
		}
		res = ReloadResult{Result: "refused", Problems: re.Problems}
		r.total.WithLabelValues("refused").Inc()
		w.log.Warn("configuration reload refused; the running configuration stays", "file", w.ConfigFile,
			"problems", strings.Join(re.Problems, "; "))
		return res, err
	}
	r.total.WithLabelValues("applied").Inc()
	r.last.Set(float64(time.Now().UnixNano()) / 1e9)
	w.log.Info("configuration reloaded", "file", w.ConfigFile, "events_added", res.Events.Added,
		"events_changed", res.Events.Changed, "events_removed", res.Events.Removed, "origins_added", res.Origins.Added,
		"origins_changed", res.Origins.Changed, "origins_removed", res.Origins.Removed, "changed", res.Changed,
		"needs_restart", res.NeedsRestart)
	return res, nil
}

func (w *Waitroom) reloadLocked(ctx context.Context) (ReloadResult, error) {
	r := &w.reload
	if w.ConfigFile == "" {
		return ReloadResult{}, &ReloadError{Problems: []string{ErrNoConfigFile.Error()}, err: ErrNoConfigFile}
	}
	cfg, err := config.Check(w.ConfigFile, config.RoleProxy)
	if err != nil {
		var problems []string
		for _, p := range config.Problems(err) {
			problems = append(problems, p.Error())
		}
		if len(problems) == 0 {
			problems = []string{OneLine(err)}
		}
		return ReloadResult{}, &ReloadError{Problems: problems}
	}
	recs, err := w.store.EventRecords(ctx)
	if err != nil {
		// The store is down: the records as last read stay in force.
		w.log.Warn("reload: the event records could not be read; those last read stay", "err", err)
		recs = r.recs
	}
	return w.applyLocked(ctx, cfg, recs, "")
}

// validate overlays recs on file and checks the result; id is the event
// being made or changed through the API ("" for none), whose problems
// are named as its request names them.
func validate(file *config.Config, recs []admission.EventRecord, id string) (*config.Config, map[string]string, error) {
	eff, origin, err := overlay(file, recs)
	if err != nil {
		return nil, nil, &ReloadError{Problems: strings.Split(err.Error(), "\n")}
	}
	if ps := checkEffective(eff, id, len(file.Routes)); ps != nil {
		return nil, nil, &ReloadError{Problems: ps}
	}
	return eff, origin, nil
}

// applyLocked puts file (checked) overlaid with recs in force: the path
// of every reload, from the file or from the event records. It changes
// nothing when it returns an error (a *ReloadError).
func (w *Waitroom) applyLocked(ctx context.Context, file *config.Config, recs []admission.EventRecord, id string) (ReloadResult, error) {
	r := &w.reload
	old := w.cfg
	res := ReloadResult{Result: "applied", Changed: []string{}, NeedsRestart: []string{}}
	for _, f := range restartOnly {
		if !f.same(old, file) {
			res.NeedsRestart = append(res.NeedsRestart, f.key)
			f.keep(file, old)
		}
	}
	cfg, origin, err := validate(file, recs, id)
	if err != nil {
		return ReloadResult{}, err
	}
	var problems []string
	fail := func(key string, err error) {
		if err != nil {
			problems = append(problems, key+": "+OneLine(err))
		}
	}
	if old.ChallengesOn() != cfg.ChallengesOn() {
		problems = append(problems, "bot_defence: turning every event's challenge on or off needs a restart (the engine's shadow queue is set up at the start)")
	}
	for _, f := range liveFields {
		if !f.same(old, cfg) {
			res.Changed = append(res.Changed, f.key)
		}
	}
	keys, err := cfg.Serve.Keys.Keyring()
	fail("serve.keys", err)
	var events []admission.EventConfig
	for i := range cfg.Events {
		ec, err := cfg.Events[i].AdmissionConfig(w.start)
		fail(fmt.Sprintf("events[%d] (%s)", i, cfg.Events[i].ID), err)
		events = append(events, ec)
		if ec.InventoryEvent != "" && (w.link == nil || !slices.Contains(w.link.events, ec.InventoryEvent)) {
			res.NeedsRestart = append(res.NeedsRestart, fmt.Sprintf("events[%d].inventory_event", i))
		}
	}
	def, err := w.defenceFor(ctx, cfg)
	fail("bot_defence", err)
	var pages *static.Pages
	if err == nil {
		pages, err = static.New(pageConfigs(cfg, def))
		fail("events (pages)", err)
	}
	origins, fresh, oc, err := w.nextOrigins(old, cfg)
	fail("origins", err)
	res.Origins = filled(oc)
	closeFresh := func() {
		for _, o := range fresh {
			o.Close()
		}
	}
	opts := r.opts
	if len(problems) == 0 {
		fail("serve", w.liveOptions(cfg, keys, pages, origins, &opts))
		def.apply(cfg, &opts)
	}
	if len(problems) > 0 {
		closeFresh()
		return ReloadResult{}, &ReloadError{Problems: problems}
	}

	applied, err := w.Engine.Apply(events)
	if err != nil {
		closeFresh()
		return ReloadResult{}, &ReloadError{Problems: strings.Split(err.Error(), "\n"), err: err}
	}
	if err := w.Proxy.Reload(opts); err != nil {
		// Put the engine's event set back as it was.
		if _, rerr := w.Engine.Apply(r.events); rerr != nil {
			w.log.Error("app: restoring the event set after a refused reload", "err", rerr)
		}
		closeFresh()
		return ReloadResult{}, &ReloadError{Problems: strings.Split(err.Error(), "\n")}
	}
	res.Events = eventChanges(old, cfg, applied)

	// In force: remember it, start the new origins, retire the old ones.
	for _, o := range w.origins {
		if !slices.Contains(origins, o) {
			r.retired = append(r.retired, o)
		}
	}
	if r.goRun != nil {
		for _, o := range fresh {
			r.goRun(func() { o.Start(r.runCtx) })
		}
	}
	w.cfg, w.origins, r.origins, r.opts, r.events = cfg, origins, origins, opts, events
	r.file, r.recs = file, recs
	r.origin.Store(&origin)
	return res, nil
}

// nextOrigins builds the origins of cfg: those unchanged since old are
// kept, the others built (fresh, to start, or to close if the reload is
// refused).
func (w *Waitroom) nextOrigins(old, cfg *config.Config) (origins, fresh []*upstream.Origin, ch admission.Applied, err error) {
	was := map[string]int{}
	for i, oc := range old.Origins {
		was[oc.Name] = i
	}
	now := map[string]bool{}
	for i, oc := range cfg.Origins {
		now[oc.Name] = true
		if j, ok := was[oc.Name]; ok && reflect.DeepEqual(old.Origins[j], oc) && j < len(w.origins) {
			origins = append(origins, w.origins[j])
			continue
		}
		o, err := newOrigin(oc, fmt.Sprintf("origins[%d]", i), cfg.Serve.Reserved.Admitted, w.log)
		if err != nil {
			for _, f := range fresh {
				f.Close()
			}
			return nil, nil, ch, err
		}
		origins, fresh = append(origins, o), append(fresh, o)
		if _, ok := was[oc.Name]; ok {
			ch.Changed = append(ch.Changed, oc.Name)
		} else {
			ch.Added = append(ch.Added, oc.Name)
		}
	}
	for _, oc := range old.Origins {
		if !now[oc.Name] {
			ch.Removed = append(ch.Removed, oc.Name)
		}
	}
	return origins, fresh, ch, nil
}

// eventChanges is the engine's report, with the events whose other
// settings (page, texts, challenge, landing path) changed added to
// Changed.
func eventChanges(old, cfg *config.Config, a admission.Applied) admission.Applied {
	was := map[string]*config.Event{}
	for i := range old.Events {
		was[old.Events[i].ID] = &old.Events[i]
	}
	for i := range cfg.Events {
		e := &cfg.Events[i]
		if o := was[e.ID]; o != nil && !reflect.DeepEqual(o, e) && !slices.Contains(a.Changed, e.ID) {
			a.Changed = append(a.Changed, e.ID)
		}
	}
	slices.Sort(a.Changed)
	return filled(a)
}

// filled is a with empty lists in place of nil ones (JSON [] not null).
func filled(a admission.Applied) admission.Applied {
	for _, l := range []*[]string{&a.Added, &a.Changed, &a.Removed} {
		if *l == nil {
			*l = []string{}
		}
	}
	return a
}

// adminReload is POST /admin/v1/reload's reload.
func (w *Waitroom) adminReload(ctx context.Context) (any, []string, error) {
	res, err := w.Reload(ctx)
	var re *ReloadError
	if errors.As(err, &re) && !errors.Is(err, ErrNoConfigFile) {
		return res, re.Problems, nil
	}
	return res, nil, err
}
