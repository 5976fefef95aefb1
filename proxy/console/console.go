package console

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/proxy/ratelimit"
)

// Defaults.
const (
	// DefaultSessionTTL is how long a console session lasts.
	DefaultSessionTTL = 8 * time.Hour
	// DefaultSample is how often the console samples every event's
	// figures for its charts and pushes them to open pages.
	DefaultSample = 5 * time.Second
	// History is how far back the charts go.
	History = time.Hour
	// DefaultLoginRate and DefaultLoginBurst bound failed logins per
	// client address (per minute, and at once).
	DefaultLoginRate  = 5
	DefaultLoginBurst = 5
)

// Options configure the console.
type Options struct {
	// Token is the admin token the login form takes; required, the admin
	// API's.
	Token string
	// Engine is the admission engine whose events the console shows and
	// steers; required.
	Engine *admission.Engine
	// Gatherer is where the bot defence's counters are read
	// (waitroom_challenge_decisions_total); nil: none shown.
	Gatherer prometheus.Gatherer
	// Log receives the operator changes made here; nil: slog.Default().
	Log *slog.Logger
	// SessionTTL is a session's lifetime (DefaultSessionTTL when 0);
	// Sample the sampling interval (DefaultSample when 0).
	SessionTTL, Sample time.Duration
	// LoginRate is the failed logins a client address may make per
	// minute (DefaultLoginRate when 0), in bursts of LoginBurst
	// (DefaultLoginBurst when 0).
	LoginRate, LoginBurst int
	// Clock tells the time (time.Now when nil).
	Clock func() time.Time
}

// Console is the operator dashboard. Safe for concurrent use; Run must
// be running for its figures and charts to move.
type Console struct {
	opts     Options
	sessions *sessions
	logins   *ratelimit.Limiter
	pages    *template.Template
	assets   fs.FS
	csrf     *http.CrossOriginProtection

	mu      sync.Mutex
	hist    map[string][]point // per event, oldest first, at most History
	views   []eventView        // the last sample, in the engine's event order
	changed chan struct{}      // closed and replaced at every sample
	stopped chan struct{}      // closed by Stop
	stop    sync.Once
}

//go:embed assets
var embedded embed.FS

// New returns a console; call Run to sample, and Register to serve it.
func New(opts Options) (*Console, error) {
	if len(opts.Token) < 16 {
		return nil, errors.New("console: the admin token must have at least 16 characters")
	}
	if opts.Engine == nil {
		return nil, errors.New("console: an admission engine is required")
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	opts.SessionTTL = cmpOr(opts.SessionTTL, DefaultSessionTTL)
	opts.Sample = cmpOr(opts.Sample, DefaultSample)
	opts.LoginRate = cmpOr(opts.LoginRate, DefaultLoginRate)
	opts.LoginBurst = cmpOr(opts.LoginBurst, DefaultLoginBurst)
	lim, err := ratelimit.New(ratelimit.Config{
		PerIP:     ratelimit.Bucket{Rate: float64(opts.LoginRate) / 60, Burst: opts.LoginBurst},
		PerPrefix: ratelimit.Bucket{Rate: 4 * float64(opts.LoginRate) / 60, Burst: 4 * opts.LoginBurst},
		TableSize: 4096, Clock: opts.Clock})
	if err != nil {
		return nil, err
	}
	assets, err := fs.Sub(embedded, "assets")
	if err != nil {
		return nil, err
	}
	pages, err := template.New("").Funcs(template.FuncMap{"json": toJSON}).ParseFS(assets, "*.html")
	if err != nil {
		return nil, err
	}
	c := &Console{opts: opts, sessions: newSessions(opts.Token, opts.SessionTTL, opts.Clock), logins: lim,
		pages: pages, assets: assets, csrf: http.NewCrossOriginProtection(),
		hist: map[string][]point{}, changed: make(chan struct{}), stopped: make(chan struct{})}
	c.csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.refuse(w, http.StatusForbidden, "This request came from another site and was refused.")
	}))
	c.Sample()
	return c, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func toJSON(v any) (template.JS, error) {
	b, err := json.Marshal(v)
	return template.JS(b), err
}

// Run samples every event's figures each Sample interval until ctx ends.
func (c *Console) Run(ctx context.Context) {
	t := time.NewTicker(c.opts.Sample)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			c.Stop()
			return
		case <-c.stopped:
			return
		case <-t.C:
			c.Sample()
		}
	}
}

// Stop ends the console's open event streams (for a server shutting
// down: they would hold it up until its grace runs out) and its Run.
func (c *Console) Stop() { c.stop.Do(func() { close(c.stopped) }) }

// Sample takes one sample of every event's figures now, keeps it in the
// history and pushes it to the open pages. Run calls it; tests may too.
func (c *Console) Sample() {
	now := c.opts.Clock()
	bots := defenceCounts(c.opts.Gatherer)
	ids := c.opts.Engine.Events()
	c.mu.Lock()
	defer c.mu.Unlock()
	views := make([]eventView, 0, len(ids))
	keep := make(map[string][]point, len(ids))
	for _, id := range ids {
		h := c.hist[id]
		p, v, ok := c.sample(id, now, bots[id], h)
		if !ok {
			continue
		}
		cut := 0
		for cut < len(h) && now.Sub(h[cut].At) > History {
			cut++
		}
		keep[id] = append(h[cut:], p)
		views = append(views, v)
	}
	c.hist, c.views = keep, views
	close(c.changed)
	c.changed = make(chan struct{})
}

// snapshot returns the last sample's views and the channel closed at
// the next one.
func (c *Console) snapshot() ([]eventView, chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.views, c.changed
}

// Register adds the console's routes to mux (the admin listener's):
//
//	GET  /admin/                  the dashboard, or the login form
//	POST /admin/login             the admin token in, a session cookie out
//	POST /admin/logout
//	GET  /admin/stream            server-sent events: the history, then each sample
//	POST /admin/events/{id}/{action}  pause, resume, sold-out, on-sale, caps, caps-reset,
//	                              mode, mode-reset, notice
//	GET  /admin/assets/{name}     the page's CSS and JS
//
// Every POST needs a same-origin browser request (Sec-Fetch-Site, Origin)
// and, but for the login, the session's CSRF token.
func (c *Console) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /admin", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/admin/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /admin/{$}", c.dashboard)
	mux.Handle("POST /admin/login", c.csrf.Handler(http.HandlerFunc(c.login)))
	mux.Handle("POST /admin/logout", c.csrf.Handler(c.session(c.logout)))
	mux.Handle("GET /admin/stream", c.session(c.stream))
	mux.Handle("POST /admin/events/{id}/{action}", c.csrf.Handler(c.session(c.action)))
	mux.HandleFunc("GET /admin/assets/{name}", c.asset)
}

// clientAddr is the request's peer address (the admin listener is
// private: no forwarding headers are trusted).
func clientAddr(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// history returns every event's history as columns for the charts.
func (c *Console) history() map[string]map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]map[string]any, len(c.hist))
	for id, h := range c.hist {
		out[id] = columns(h)
	}
	return out
}

// columns lays points out as the page's charts read them.
func columns(h []point) map[string]any {
	col := func(f func(p point) float64) []float64 {
		out := make([]float64, len(h))
		for i, p := range h {
			out[i] = round1(f(p))
		}
		return out
	}
	t := make([]int64, len(h))
	for i, p := range h {
		t[i] = p.At.UnixMilli()
	}
	return map[string]any{
		"t":                t,
		"queue":            col(func(p point) float64 { return float64(p.Queue) }),
		"arrivals_per_min": col(func(p point) float64 { return p.Arrivals }),
		"admitted_per_min": col(func(p point) float64 { return float64(p.Admitted) }),
		"active":           col(func(p point) float64 { return float64(p.Active) }),
		"target":           col(func(p point) float64 { return float64(p.Target) }),
		"latency_p50_ms":   col(func(p point) float64 { return p.P50 }),
		"latency_p99_ms":   col(func(p point) float64 { return p.P99 }),
		"error_pct":        col(func(p point) float64 { return 100 * p.ErrorRate }),
		"no_show_pct":      col(func(p point) float64 { return 100 * p.NoShowRate }),
	}
}

// last returns an event's newest point as a one-point history.
func (c *Console) last(id string) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.hist[id]
	if len(h) == 0 {
		return columns(nil)
	}
	return columns(slices.Clone(h[len(h)-1:]))
}
