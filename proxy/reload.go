package proxy

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/proxy/netlimit"
)

// Reload replaces the proxy's configuration while it serves: routes,
// events (with their gates, texts and challenges, read again from the
// engine, so Apply the engine's new event set first), origins, pages,
// keys, bot defence, cookies, bypass, crawlers. opts is checked as New
// checks it; on any problem nothing changes and every problem is
// returned.
//
// What a visitor holds lives on: the caches of verified passes and
// tickets (unless a key they may have been verified with is retired),
// the metrics, the invite and suspect counters and the request
// budget are carried over (Budget, Meter, Registerer and the limiters of
// opts are ignored: the first ones stay). A request in flight finishes on
// the configuration it started with; the next one uses the new one.
// Handle and the server read the configuration in force with one atomic
// load: no lock, no allocation.
func (p *Proxy) Reload(opts Options) error {
	cur := p.gen.Load()
	opts.Budget, opts.Meter, opts.Registerer = cur.opts.Budget, cur.opts.Meter, cur.opts.Registerer
	opts.Limiter, opts.SharedLimiter, opts.SharedWrongInvites = cur.opts.Limiter, cur.opts.SharedLimiter, cur.opts.SharedWrongInvites
	next, err := build(opts, cur)
	if err != nil {
		return err
	}
	p.gen.Store(next)
	return nil
}

// start builds what lives across generations: metrics, caches, counters.
func (p *Proxy) start() error {
	opts := &p.opts
	p.body, p.sharedWarned = new(atomic.Pointer[bodyPolicy]), new(atomic.Int64)
	p.passes = newTokenCache[passEntry](opts.PassCacheSize)
	p.tickets = newTokenCache[cachedTicket](opts.PassCacheSize)
	var err error
	if p.m, err = newMetrics(opts.Registerer, opts.Engine); err != nil {
		return err
	}
	if p.audits, err = newAuditCache(opts.AuditCacheBytes, opts.Registerer); err != nil {
		return err
	}
	if p.wrongCodes, err = newInviteLimiter(opts); err != nil {
		return fmt.Errorf("proxy: wrong invites: %w", err)
	}
	if p.invites, err = newInviteCounts(opts.Registerer); err != nil {
		return err
	}
	p.budget = opts.Budget
	if reg := opts.Registerer; reg != nil && p.budget != nil {
		for c := range netlimit.NumClasses {
			g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "waitroom_in_flight",
				Help:        "Requests being handled now, by class (anonymous, admitted, api), as serve.max_in_flight counts them.",
				ConstLabels: prometheus.Labels{"class": c.String()}},
				func() float64 { return float64(p.budget.InUse(c)) })
			if err := reg.Register(g); err != nil {
				return err
			}
		}
	}
	if p.dm, err = newDefenceMetrics(opts.Registerer); err != nil {
		return err
	}
	if p.nm, err = newNoJSMetrics(opts.Registerer); err != nil {
		return err
	}
	return nil
}

// inherit takes over prev's long-lived parts (see Reload).
func (p *Proxy) inherit(prev *Proxy) error {
	p.m, p.audits, p.wrongCodes, p.invites = prev.m, prev.audits, prev.wrongCodes, prev.invites
	p.budget, p.dm, p.nm = prev.budget, prev.dm, prev.nm
	p.passes, p.tickets = prev.passes, prev.tickets
	if !prev.keys.KeptBy(p.keys) {
		// A key was retired: the tokens it signed must stop at once, so
		// what was verified with it is forgotten (the others are
		// verified again at their next request).
		p.passes = newTokenCache[passEntry](p.opts.PassCacheSize)
		p.tickets = newTokenCache[cachedTicket](p.opts.PassCacheSize)
	}
	p.base, p.stop, p.gen = prev.base, prev.stop, prev.gen
	p.body, p.sharedWarned = prev.body, prev.sharedWarned
	return nil
}

// registerOnce registers c, or returns the collector registered before
// under its name (a reloaded proxy's).
func registerOnce[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if old, ok := are.ExistingCollector.(C); ok {
			return old, nil
		}
	}
	return c, err
}
