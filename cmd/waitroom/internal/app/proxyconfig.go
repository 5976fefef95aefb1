// From configuration to the proxy: its origins (with their CA files), its
// options, its route table and every event's page settings.

package app

import (
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/plugins/iplist"
	"github.com/waitroom/waitroom/proxy"
	"github.com/waitroom/waitroom/proxy/httpguard"
	"github.com/waitroom/waitroom/proxy/identity"
	"github.com/waitroom/waitroom/proxy/netlimit"
	"github.com/waitroom/waitroom/proxy/ratelimit"
	"github.com/waitroom/waitroom/proxy/ratelimit/redislimit"
	"github.com/waitroom/waitroom/proxy/target"
	"github.com/waitroom/waitroom/proxy/upstream"
	"github.com/waitroom/waitroom/static"
)

// newOrigin builds the origin oc, configured at path (origins[2]), with
// the share of its in-flight limit reserved for admitted visitors.
func newOrigin(oc config.Origin, path string, reserved float64, log *slog.Logger) (*upstream.Origin, error) {
	c := upstream.Config{Name: oc.Name, Addrs: oc.Addresses, TLS: oc.TLS, TLSServerName: oc.TLSServerName,
		Host: oc.Host, MaxConns: oc.MaxConns, MaxInFlight: oc.MaxInFlightLimit(), ReservedAdmitted: reserved,
		DialTimeout: oc.DialTimeout.Std(), ReadTimeout: oc.ReadTimeout.Std(), WriteTimeout: oc.WriteTimeout.Std(),
		MaxConnWaitTimeout: oc.MaxConnWait.Std(), MaxIdleConnDuration: oc.MaxIdleConnDuration.Std(),
		ReadBufferSize: oc.ReadBufferBytes, MaxResponseBodySize: oc.MaxResponseBodyBytes, Retries: oc.Retries,
		Health: upstream.HealthCheck{Path: oc.HealthCheck.Path, TCP: !oc.HealthCheck.Disabled,
			Interval: oc.HealthCheck.Interval.Std(),
			Timeout:  oc.HealthCheck.Timeout.Std(), UnhealthyAfter: oc.HealthCheck.UnhealthyAfter,
			HealthyAfter: oc.HealthCheck.HealthyAfter}}
	if oc.TLSCAFile != "" {
		pool, err := loadCAs(oc.TLSCAFile)
		if err != nil {
			return nil, startErr(path+".tls_ca_file", oc.TLSCAFile, err)
		}
		c.RootCAs = pool
	}
	if oc.HealthCheck.Disabled {
		c.Health.Path = ""
	}
	return upstream.New(c, log)
}

// proxyOptions maps the configuration to the proxy's options: the parts
// built once (limiters, budget, metrics registry) and, by liveOptions,
// those a reload changes.
func (w *Waitroom) proxyOptions(keys *admission.Keyring, pages *static.Pages) (proxy.Options, error) {
	s := w.cfg.Serve
	api := ratelimit.Config{
		PerIP:      ratelimit.Bucket{Rate: s.RateLimits.PerIP.Rate, Burst: s.RateLimits.PerIP.Burst},
		PerPrefix:  ratelimit.Bucket{Rate: s.RateLimits.PerPrefix.Rate, Burst: s.RateLimits.PerPrefix.Burst},
		IPv4Prefix: s.RateLimits.IPv4Prefix, IPv6Prefix: s.RateLimits.IPv6Prefix, TableSize: s.RateLimits.TableSize}
	limiter, err := ratelimit.New(api)
	if err != nil {
		return proxy.Options{}, err
	}
	wrong := ratelimit.Config{
		PerIP:      ratelimit.Bucket{Rate: s.RateLimits.WrongInvites.PerIP.Rate, Burst: s.RateLimits.WrongInvites.PerIP.Burst},
		PerPrefix:  ratelimit.Bucket{Rate: s.RateLimits.WrongInvites.PerPrefix.Rate, Burst: s.RateLimits.WrongInvites.PerPrefix.Burst},
		IPv4Prefix: s.RateLimits.IPv4Prefix, IPv6Prefix: s.RateLimits.IPv6Prefix, TableSize: s.RateLimits.TableSize}
	var shared, sharedWrong proxy.SharedLimiter
	if s.RateLimits.Shared {
		if shared, err = w.sharedLimiter("api:", api); err != nil {
			return proxy.Options{}, err
		}
		if wrong.PerIP == (ratelimit.Bucket{}) && wrong.PerPrefix == (ratelimit.Bucket{}) {
			wrong = proxy.DefaultWrongInvites
		}
		if sharedWrong, err = w.sharedLimiter("invites:", wrong); err != nil {
			return proxy.Options{}, err
		}
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
	o := proxy.Options{Engine: w.Engine, PassCacheSize: s.PassCacheSize, Limiter: limiter, WrongInvites: wrong,
		SharedLimiter: shared, SharedWrongInvites: sharedWrong,
		Meter: w.Meter, Registerer: w.reg, Logger: w.log, Budget: budget}
	if err := w.liveOptions(w.cfg, keys, pages, w.origins, &o); err != nil {
		return proxy.Options{}, err
	}
	return o, nil
}

// liveOptions sets the options a reload may change (see reload.go) from
// cfg: routes, events, keys, pages, origins, client addresses, cookies,
// binding, bypass, crawlers, identity. The bot defence is set by
// defence.apply.
func (w *Waitroom) liveOptions(cfg *config.Config, keys *admission.Keyring, pages *static.Pages,
	origins []*upstream.Origin, o *proxy.Options) error {
	s := cfg.Serve
	trusted, err := config.ParseNetworks(s.TrustedProxies)
	if err != nil {
		return err
	}
	bypass, err := config.ParseNetworks(s.Bypass.CIDRs)
	if err != nil {
		return err
	}
	o.Prefix, o.Keys, o.Pages, o.Origins = s.Prefix, keys, pages, origins
	o.Trusted = httpguard.NewTrustedHeader(trusted, s.ClientIPHeader)
	o.Bypass = proxy.Bypass{CIDRs: bypass, Header: s.Bypass.Header, Secret: s.Bypass.Secret}
	o.Cookies = proxy.Cookies{Ticket: s.Cookies.Ticket, Pass: s.Cookies.Pass, Domain: s.Cookies.Domain,
		Strict: s.Cookies.SameSite == config.SameSiteStrict, ForwardPass: s.Cookies.ForwardPass}
	// Whether cookies are Secure, and so their names, is decided here,
	// once: the proxy reads exactly one name per cookie.
	switch {
	case s.CookiesAlwaysSecure():
		o.Cookies.Secure = proxy.SecureAlways
	case s.Cookies.Secure == config.SecureNever:
		o.Cookies.Secure = proxy.SecureNever
	}
	o.Binding = proxy.Binding{}
	for _, b := range s.Binding {
		switch b {
		case config.BindUserAgent:
			o.Binding.UserAgent = true
		case config.BindIPPrefix:
			o.Binding.IPPrefix = true
		case config.BindTLSStack:
			o.Binding.TLSStack = true
		}
	}
	if o.Crawlers, err = crawlers(s.Crawlers, w.log); err != nil {
		return err
	}
	o.Routes, o.Unmatched = Routes(cfg)
	o.PathParameters, o.DefaultHost = pathParameters(s.PathParameters), s.DefaultHost
	if o.Identity, err = cfg.Identity.Verifier(); err != nil {
		return fmt.Errorf("identity: %w", err)
	}
	o.Events, o.Defence = nil, nil
	for _, e := range cfg.Events {
		pe := proxy.Event{ID: e.ID, LandingPath: e.LandingPath,
			PositionDisplay: proxy.PositionDisplay(e.PositionDisplay), Identity: identity.Mode(e.Identity)}
		if pe.Identity != identity.Off {
			pe.LoginURL = cfg.Identity.LoginURL
		}
		o.Events = append(o.Events, pe)
	}
	return nil
}

// crawlers loads the allowlisted crawlers' address ranges.
func crawlers(cs []config.Crawler, log *slog.Logger) ([]proxy.Crawler, error) {
	out := make([]proxy.Crawler, 0, len(cs))
	for i := range cs {
		c := &cs[i]
		ps, err := c.Ranges()
		if err != nil {
			return nil, startErr(fmt.Sprintf("serve.crawlers[%d].ip_ranges_file", i), c.IPRangesFile, err)
		}
		set := iplist.NewSet(ps)
		log.Info("crawler ranges loaded", "crawler", c.Name, "prefixes", len(ps), "ranges", set.Len())
		out = append(out, proxy.Crawler{Name: c.Name, UserAgents: c.UserAgents, Ranges: set})
	}
	return out, nil
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
			DefaultLanguage: string(e.Page.DefaultLanguage), TemplateDir: e.Page.TemplateDir, JoinPath: e.LandingPath,
			PublicURL: cfg.Serve.PublicURL}
		// Without JavaScript only where joining asks no proof of work: the
		// form is then no cheaper than the script (docs/bot-defence.md).
		pc.NoJSJoin = e.Challenge.Mode == config.ChallengeOff
		if p := def.eventCaptcha(e); p != nil {
			c := p.Widget().CSP
			pc.WidgetCSP = static.CSPSources{Script: c.Script, Frame: c.Frame, Style: c.Style, Connect: c.Connect}
			ws := challenge.WidgetScriptOf(p)
			pc.Widget = static.WidgetScript{API: ws.API, WaitReady: ws.WaitReady, Execute: ws.Execute}
		}
		if pc.Name == "" {
			pc.Name = e.ID
		}
		for _, l := range e.Lanes {
			pc.Invites = pc.Invites || l.InviteSecret != ""
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

// sharedLimiter opens a rate-limit budget every replica shares, in the
// admission store's Redis under its prefix and "rl:"+name (see
// serve.rate_limits.shared).
func (w *Waitroom) sharedLimiter(name string, b ratelimit.Config) (proxy.SharedLimiter, error) {
	c, err := w.admissionRedis.Client()
	if err != nil {
		return nil, settingErr("admission", err)
	}
	l, err := redislimit.New(redislimit.Options{Client: c, Prefix: w.cfg.Admission.RedisPrefix + "rl:" + name, Buckets: b})
	if err != nil {
		return nil, fmt.Errorf("serve.rate_limits: %w", err)
	}
	w.closers = append(w.closers, func() error { l.Close(); return nil })
	return l, nil
}
