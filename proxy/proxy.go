package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/proxy/console"
	"github.com/waitroom/waitroom/proxy/httpguard"
	"github.com/waitroom/waitroom/proxy/identity"
	"github.com/waitroom/waitroom/proxy/meter"
	"github.com/waitroom/waitroom/proxy/netlimit"
	"github.com/waitroom/waitroom/proxy/ratelimit"
	"github.com/waitroom/waitroom/proxy/target"
	"github.com/waitroom/waitroom/proxy/upstream"
)

// Proxy is waitroom's front server: it routes every request, lets
// visitors with a valid pass through to the origin, holds the others in
// the waiting room, and serves the waiting-room API under its prefix. A
// Proxy is safe for concurrent use; Handle is a fasthttp.RequestHandler.
type Proxy struct {
	opts  Options
	log   *slog.Logger
	clock func() time.Time
	// realClock is true when clock is time.Now, whose readings the
	// origins' deadlines can use.
	realClock bool
	engine    *admission.Engine
	keys      *admission.Keyring
	trusted   *httpguard.Trusted

	prefix []byte
	// authPath is the auth endpoint's path (prefix + "/auth"), which
	// Envoy's ext_authz puts in front of the original path.
	authPath []byte
	// prefixKey is prefix as target.Key folds it.
	prefixKey []byte
	routes    []*route
	// fallback is where a path no route matches goes (Options.Unmatched).
	fallback *route
	// targetOpts parse every request-target; caseSensitive says whether
	// a route needs the unfolded key.
	targetOpts    target.Options
	caseSensitive bool
	// defaultHost stands in for a missing Host header (HTTP/1.0); nil
	// refuses such requests.
	defaultHost []byte
	events      map[string]*event
	origins     map[string]*upstream.Origin

	passes  *tokenCache[passEntry]
	tickets *tokenCache[cachedTicket]

	// wrongCodes is the wrong-invite budget; invites count code joins.
	wrongCodes *ratelimit.Limiter
	// sharedWarned is when a shared budget's failure was last logged
	// (Unix ns).
	sharedWarned *atomic.Int64
	invites      *inviteCounts

	// strip are the cookies and headers removed before forwarding.
	stripCookies [][]byte
	stripHeaders [][]byte
	// stripHeadersAuthz is stripHeaders and Authorization, for a request
	// whose pass came as a bearer token.
	stripHeadersAuthz [][]byte
	bypassHeader      []byte
	bypassSecret      []byte
	// crawlers are Options.Crawlers compiled.
	crawlers []crawler
	// clientIPHeaders is the single-address client header the trusted
	// set reads (CF-Connecting-IP, ...), set to the client address for
	// the origin; ownXFF says X-Forwarded-For was not where the client
	// address came from.
	clientIPHeaders [][]byte
	ownXFF          bool

	jwks []byte
	csp  []byte
	m    *metrics
	dm   *defenceMetrics
	nm   *noJSMetrics
	// suspects remembers addresses' scores (nil without a bot defence).
	suspects *suspects

	// audits keeps encoded pages of drawn tranches' audits.
	audits *auditCache
	// budget bounds the requests handled at once (nil: no limit).
	budget *netlimit.Budget
	// body is the streamed-body policy the front server set (nil before
	// Server, or without one), one pointer shared by every generation:
	// Server may run after a reload.
	body *atomic.Pointer[bodyPolicy]

	// gen is the generation in force, one pointer shared by every
	// generation: Handle serves each request on the generation current
	// when it came in (see Reload).
	gen *atomic.Pointer[Proxy]

	// base is the context of engine calls: fasthttp's RequestCtx is not
	// a per-request context, so store calls get this one, cancelled by
	// Close.
	base context.Context
	stop context.CancelFunc
	// console is the admin listener's dashboard (set by Admin).
	console *console.Console
}

// route is a compiled Route.
type route struct {
	Route
	m      matcher
	ev     *event
	origin *upstream.Origin
	// passed counts requests forwarded without a pass check (action pass).
	counts *routeCounts
}

// event is the proxy's state of one event.
type event struct {
	Event
	cfg          admission.EventConfig
	ticketCookie []byte
	passCookie   []byte
	id           []byte
	landing      []byte
	meter        *meter.Event
	counts       *eventCounts
	// gate is the engine's gate of the event: maintenance, and whether
	// a visitor without a pass may go straight through.
	gate *admission.Gate
	// widget is the CAPTCHA widget's JSON for the page (nil without one).
	widget []byte
	// csp is the room page's Content-Security-Policy (it allows the
	// CAPTCHA widget's sources).
	csp []byte
	// opensAt and onSaleAt are cfg's times as the status JSON writes
	// them, formatted once, and trancheSeconds its tranche length.
	opensAt, onSaleAt, trancheSeconds []byte
	// notice is the operator's notice as the status JSON writes it
	// (see noticeFragment).
	notice atomic.Pointer[noticeJSON]
}

// passEntry is a verified pass as the cache keeps it.
type passEntry struct {
	pass    admission.Pass
	visitor [32]byte // the visitor id in hex, for X-Waitroom-Visitor
	seen    meter.Presence
	// with are the binding inputs the pass was verified with.
	with signals
	// renewAt is when the pass is due for renewal, in Unix seconds
	// (neverRenew: not renewable); renewed is the pass that replaced it,
	// once one did (see renew.go).
	renewAt atomic.Int64
	renewed atomic.Pointer[renewal]
	// used is set once the engine took note of the pass's first use at
	// the gate (see firstUse): later requests skip the call.
	used atomic.Bool
}

// New checks opts and builds a Proxy. Close releases it.
func New(opts Options) (*Proxy, error) {
	return build(opts, nil)
}

// build builds a Proxy from opts: a new one when prev is nil, else the
// next generation of prev's (see Reload), which shares prev's metrics,
// caches, counters and request budget.
func build(opts Options, prev *Proxy) (*Proxy, error) {
	if opts.Engine == nil || opts.Keys == nil || opts.Pages == nil {
		return nil, errors.New("proxy: an engine, a keyring and pages are required")
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if !strings.HasPrefix(opts.Prefix, "/") || strings.HasSuffix(opts.Prefix, "/") {
		return nil, fmt.Errorf("proxy: prefix %q must start with / and not end with /", opts.Prefix)
	}
	if opts.PassCacheSize <= 0 {
		opts.PassCacheSize = DefaultPassCacheSize
	}
	if opts.Cookies.Ticket == "" {
		opts.Cookies.Ticket = DefaultTicketCookie
	}
	if opts.Cookies.Pass == "" {
		opts.Cookies.Pass = DefaultPassCookie
	}
	if opts.Bypass.Header == "" {
		opts.Bypass.Header = DefaultBypassHeader
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	realClock := opts.Clock == nil
	if realClock {
		opts.Clock = time.Now
	}
	if opts.Trusted == nil {
		opts.Trusted = httpguard.NewTrusted(nil)
	}
	if opts.Meter == nil {
		opts.Meter = meter.New(meter.Options{Clock: opts.Clock})
	}
	p := &Proxy{
		opts: opts, log: opts.Logger, clock: opts.Clock, realClock: realClock, engine: opts.Engine, keys: opts.Keys,
		trusted: opts.Trusted, prefix: []byte(opts.Prefix), authPath: []byte(opts.Prefix + "/auth"),
		events: make(map[string]*event), origins: make(map[string]*upstream.Origin),
	}
	if opts.SharedLimiter != nil && opts.Limiter == nil {
		return nil, errors.New("proxy: a SharedLimiter needs a Limiter in front of it")
	}
	if prev != nil {
		if err := p.inherit(prev); err != nil {
			return nil, err
		}
	} else if err := p.start(); err != nil {
		return nil, err
	}
	m := p.m
	var err error
	if opts.Binding.TLSStack && opts.Defence == nil {
		return nil, errors.New("proxy: binding to the TLS stack needs the bot defence, which knows the client's JA4")
	}
	if d := opts.Defence; d != nil {
		if d.PoW == nil || d.Scorer == nil || !opts.Engine.CanShadow() {
			return nil, errors.New("proxy: the bot defence needs a PoW, a scorer and an engine with a shadow key")
		}
		if prev != nil && prev.suspects != nil {
			p.suspects = prev.suspects // what the defence learnt of addresses
		} else {
			p.suspects = newSuspects(DefaultSuspects, d.SuspectMemory)
		}
		if d.TTL <= 0 {
			d.TTL = DefaultChallengeTTL
		}
		if d.ScoreTimeout <= 0 {
			d.ScoreTimeout = DefaultScoreTimeout
		}
	}
	var errs []error
	for _, e := range opts.Events {
		cfg, err := opts.Engine.Config(e.ID)
		if err != nil {
			errs = append(errs, fmt.Errorf("proxy: event %q: %w", e.ID, err))
			continue
		}
		if _, dup := p.events[e.ID]; dup {
			errs = append(errs, fmt.Errorf("proxy: event %q listed twice", e.ID))
			continue
		}
		switch e.PositionDisplay {
		case "":
			e.PositionDisplay = PositionApproximate
		case PositionExact, PositionApproximate, PositionHidden:
		default:
			errs = append(errs, fmt.Errorf("proxy: event %q: position display %q", e.ID, e.PositionDisplay))
		}
		if e.LandingPath == "" {
			e.LandingPath = "/"
		}
		if e.Challenge != nil && opts.Defence == nil {
			errs = append(errs, fmt.Errorf("proxy: event %q has a challenge but there is no bot defence", e.ID))
		}
		switch e.Identity {
		case "":
			e.Identity = identity.Off
		case identity.Off:
		case identity.Optional, identity.Required:
			if opts.Identity == nil {
				errs = append(errs, fmt.Errorf("proxy: event %q reads the identity but there is no identity verifier", e.ID))
			}
		default:
			errs = append(errs, fmt.Errorf("proxy: event %q: identity %q", e.ID, e.Identity))
		}
		if _, ok := httpguard.SameSitePath([]byte(e.LandingPath)); !ok {
			errs = append(errs, fmt.Errorf("proxy: event %q: landing path %q is not a same-site path", e.ID, e.LandingPath))
		}
		ev := &event{Event: e, cfg: cfg, id: []byte(e.ID), landing: []byte(e.LandingPath),
			ticketCookie: []byte(opts.Cookies.Name(opts.Cookies.Ticket, e.ID)),
			passCookie:   []byte(opts.Cookies.Name(opts.Cookies.Pass, e.ID)),
			meter:        opts.Meter.Event(e.ID), counts: m.event(e.ID), gate: opts.Engine.Gate(e.ID)}
		ev.csp = []byte(opts.Pages.RoomCSP(e.ID))
		ev.opensAt, ev.onSaleAt = appendTime(nil, cfg.QueueOpensAt), appendTime(nil, cfg.OnSaleAt)
		ev.trancheSeconds = appendSeconds(nil, cfg.Tranche)
		if e.Challenge != nil && e.Challenge.Captcha != nil {
			if ev.widget, err = json.Marshal(e.Challenge.Captcha.Widget()); err != nil {
				errs = append(errs, fmt.Errorf("proxy: event %q: the CAPTCHA widget: %w", e.ID, err))
			}
		}
		p.events[e.ID] = ev
		p.stripCookies = append(p.stripCookies, ev.ticketCookie)
		if !opts.Cookies.ForwardPass {
			p.stripCookies = append(p.stripCookies, ev.passCookie)
		}
	}
	for _, id := range opts.Engine.Events() {
		if p.events[id] == nil {
			errs = append(errs, fmt.Errorf("proxy: the engine's event %q has no proxy settings", id))
		}
	}
	for _, o := range opts.Origins {
		if _, dup := p.origins[o.Name()]; dup {
			errs = append(errs, fmt.Errorf("proxy: origin %q listed twice", o.Name()))
		}
		p.origins[o.Name()] = o
	}
	p.prefixKey = target.Key(nil, p.prefix, true)
	p.targetOpts.Semicolons = opts.PathParameters
	for i, r := range opts.Routes {
		cr, err := p.compile(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("proxy: routes[%d]: %w", i, err))
			continue
		}
		p.routes = append(p.routes, cr)
		p.caseSensitive = p.caseSensitive || r.CaseSensitive
		p.targetOpts.EncodedSlashes = p.targetOpts.EncodedSlashes || r.EncodedSlashes
	}
	if p.crawlers, err = compileCrawlers(opts.Crawlers, opts.Registerer); err != nil {
		errs = append(errs, err)
	}
	if p.fallback, err = p.compileUnmatched(opts.Unmatched); err != nil {
		errs = append(errs, fmt.Errorf("proxy: unmatched: %w", err))
	}
	if opts.DefaultHost != "" {
		if !target.ValidHost([]byte(opts.DefaultHost)) {
			errs = append(errs, fmt.Errorf("proxy: default host %q is not a host[:port]", opts.DefaultHost))
		}
		p.defaultHost = []byte(opts.DefaultHost)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	switch h := opts.Trusted.Header(); h {
	case httpguard.HeaderXForwardedFor:
	case httpguard.HeaderForwarded, httpguard.HeaderXRealIP:
		// upstream never forwards a client's copy of these.
		p.ownXFF = true
	default:
		p.ownXFF = true
		p.clientIPHeaders = [][]byte{[]byte(h)}
	}
	if opts.Bypass.Secret != "" {
		p.bypassHeader, p.bypassSecret = []byte(opts.Bypass.Header), []byte(opts.Bypass.Secret)
		p.stripHeaders = append(p.stripHeaders, p.bypassHeader)
	}
	p.stripHeadersAuthz = append(slices.Clip(p.stripHeaders), headerAuthz)
	jwks, err := opts.Keys.JWKS()
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	p.jwks = jwks
	p.csp = []byte(opts.Pages.CSP())
	if prev == nil {
		p.base, p.stop = context.WithCancel(context.Background())
		p.gen = new(atomic.Pointer[Proxy])
		p.gen.Store(p)
	}
	return p, nil
}

func (p *Proxy) compile(r Route) (*route, error) {
	m, err := compileRoute(r)
	if err != nil {
		return nil, err
	}
	if m.prefix != nil && bytes.HasPrefix(target.Key(nil, append(m.prefix, '/'), true), append(p.prefixKey, '/')) {
		return nil, fmt.Errorf("prefix %q is inside the reserved prefix %q", r.Prefix, p.prefix)
	}
	return p.bind(r, m)
}

// compileUnmatched compiles the route of paths no route matches.
func (p *Proxy) compileUnmatched(r Route) (*route, error) {
	if r.Prefix != "" || r.Glob != "" {
		return nil, errors.New("the route for unmatched paths has no prefix or glob")
	}
	return p.bind(r, matcher{})
}

// bind checks a route's action, event and origin and builds it.
func (p *Proxy) bind(r Route, m matcher) (*route, error) {
	cr := &route{Route: r, m: m, counts: p.m.route(r.Action)}
	switch r.Action {
	case ActionPass:
		if r.Event != "" {
			return nil, fmt.Errorf("a pass route has no event (%q)", r.Event)
		}
	case ActionQueue, ActionBlock:
		cr.ev = p.events[r.Event]
		if cr.ev == nil {
			return nil, fmt.Errorf("unknown event %q", r.Event)
		}
	default:
		return nil, fmt.Errorf("unknown action %d", r.Action)
	}
	switch {
	case r.Origin != "":
		cr.origin = p.origins[r.Origin]
		if cr.origin == nil {
			return nil, fmt.Errorf("unknown origin %q", r.Origin)
		}
	case len(p.opts.Origins) > 0:
		cr.origin = p.opts.Origins[0]
	}
	return cr, nil
}

// Close stops the engine calls in flight. It does not close the origins
// or the engine, which the caller owns.
func (p *Proxy) Close() error {
	p.stop()
	return nil
}
