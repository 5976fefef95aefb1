package proxy

// The gate: what happens to one request, from its target to the origin or
// the waiting room. Handle is the entry point; the Proxy it runs on is
// built in proxy.go.

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/proxy/httpguard"
	"github.com/waitroom/waitroom/proxy/meter"
	"github.com/waitroom/waitroom/proxy/netlimit"
	"github.com/waitroom/waitroom/proxy/target"
	"github.com/waitroom/waitroom/proxy/upstream"
	"github.com/waitroom/waitroom/static"
)

// Handle serves one request: waitroom's own endpoints under the prefix,
// everything else through the gate to an origin.
func (p *Proxy) Handle(ctx *fasthttp.RequestCtx) {
	p.gen.Load().handle(ctx)
	finishBody(ctx)
}

// drainLimit is how much of a request body nobody read is read away so
// that the connection can serve its next request; beyond it the
// connection is closed instead.
const drainLimit = 64 << 10

var drainPool = sync.Pool{New: func() any { b := make([]byte, 4<<10); return &b }}

// finishBody makes the connection safe for its next request. Bodies
// stream (fasthttp's StreamRequestBody), and fasthttp does not skip what
// a handler left unread: the rest of the body would be parsed as the next
// request. So a body nobody read (the waiting-room page answering a POST,
// an error, an origin that answered early) is read away up to drainLimit,
// and past that the connection is closed.
func finishBody(ctx *fasthttp.RequestCtx) {
	if cl := ctx.Request.Header.ContentLength(); cl == 0 || cl == -2 || ctx.Hijacked() {
		return // no body (-2: none declared)
	}
	s := ctx.RequestBodyStream()
	if s == nil {
		return
	}
	bp := drainPool.Get().(*[]byte)
	defer drainPool.Put(bp)
	for n := 0; n <= drainLimit; {
		k, err := s.Read(*bp)
		n += k
		if err == io.EOF {
			return
		}
		if err != nil {
			break
		}
	}
	ctx.SetConnectionClose()
}

func (p *Proxy) handle(ctx *fasthttp.RequestCtx) {
	h := &ctx.Request.Header
	if err := httpguard.Check(h); err != nil {
		p.m.badRequests.Inc()
		ctx.SetConnectionClose()
		writeError(ctx, fasthttp.StatusBadRequest, errBadRequest)
		return
	}
	if h.IsConnect() {
		// Authority-form has no path to route, and waitroom tunnels nothing.
		p.m.refusedMethods.Inc()
		ctx.SetConnectionClose()
		writeError(ctx, fasthttp.StatusMethodNotAllowed, errMethod)
		return
	}
	rq := requestPool.Get().(*request)
	rq.argsParsed, rq.crawler, rq.newPass, rq.passFrom = false, false, nil, passInCookie
	defer requestPool.Put(rq)
	if !p.parseTarget(ctx, rq) {
		return
	}
	if rest, ok := p.own(rq); ok {
		if !p.enter(ctx, netlimit.API) {
			return
		}
		p.serveOwn(ctx, rest, rq)
		p.budget.Release(netlimit.API)
		return
	}
	r := p.route(rq)
	if !p.allowed(ctx, r, rq) {
		return
	}
	ip := p.trusted.ClientIP(ctx)
	if p.bypassed(ctx, ip) {
		r.counts.bypassed.Inc()
		p.forward(ctx, r, ip, nil, rq, time.Time{})
		return
	}
	if r.Action == ActionPass {
		r.counts.forwarded.Inc()
		p.forward(ctx, r, ip, nil, rq, time.Time{})
		return
	}
	ev := r.ev
	if ev.gate.Maintenance() {
		r.counts.maintenance.Inc()
		p.maintenance(ctx, ev)
		return
	}
	now := p.requestTime(ctx)
	if e, from := p.validPass(ctx, ev, ip, now); e != nil {
		rq.passFrom = from
		r.counts.forwarded.Inc()
		p.forward(ctx, r, ip, e, rq, now)
		return
	}
	if r.Action == ActionBlock {
		r.counts.blocked.Inc()
		p.blocked(ctx, ev)
		return
	}
	if p.crawlerPass(ctx, ip) {
		r.counts.crawler.Inc()
		rq.crawler = true
		p.forward(ctx, r, ip, nil, rq, time.Time{})
		return
	}
	if ev.gate.MayPass() && p.straightThrough(ctx, r, ip, rq, now) {
		return
	}
	r.counts.room.Inc()
	if !p.enter(ctx, netlimit.API) {
		return
	}
	p.room(ctx, ev, ip, rq)
	p.budget.Release(netlimit.API)
}

// requestTime is the proxy's clock for a request: with the real clock,
// the reading fasthttp took just before calling the handler (one clock
// read less per request).
func (p *Proxy) requestTime(ctx *fasthttp.RequestCtx) time.Time {
	if p.realClock {
		if t := ctx.Time(); !t.IsZero() {
			return t
		}
	}
	return p.clock()
}

// engineTime is now as the engine may take it in place of its own clock
// read (admission.Engine.StatusAt): now itself with the real clock, and
// with an injected one zero, so that the engine reads its own.
func (p *Proxy) engineTime(now time.Time) time.Time {
	if p.realClock {
		return now
	}
	return time.Time{}
}

// enter takes a slot of the in-flight budget for class c, or answers 503
// (busy) and reports false.
func (p *Proxy) enter(ctx *fasthttp.RequestCtx, c netlimit.Class) bool {
	if p.budget.Acquire(c) {
		return true
	}
	p.m.refused[c].Inc()
	p.busy(ctx)
	return false
}

// request is what handle parsed of one request: the normalised target,
// which is both routed and forwarded, and the keys routes match on.
// Requests are pooled.
type request struct {
	t target.Target
	// fold and exact are target.Key of the path with and without case
	// folding (exact only when a route is case-sensitive).
	fold, exact []byte
	// args is t.Query parsed, once query has been asked for it.
	args       fasthttp.Args
	argsParsed bool
	// crawler is set for an allowlisted crawler's request, which is
	// forwarded in the anonymous class.
	crawler bool
	// newPass is a pass issued for this very request (straight through):
	// forward sets its cookie on the origin's answer.
	newPass *issuedPass
	// passFrom is where the request's valid pass came from: forward
	// removes Authorization when it held the pass, and a pass that came
	// in a header is renewed into X-Waitroom-Pass.
	passFrom passSource
}

// issuedPass is a signed pass whose cookie is still to be set.
type issuedPass struct {
	token   string
	expires time.Time
}

// query returns the request's query arguments, parsed from the target
// the request was routed on (never from a second parse of the request
// line). Valid until the request is put back in the pool.
func (rq *request) query() *fasthttp.Args {
	if !rq.argsParsed {
		rq.args.ParseBytes(rq.t.Query)
		rq.argsParsed = true
	}
	return &rq.args
}

var requestPool = sync.Pool{New: func() any {
	return &request{fold: make([]byte, 0, 256), exact: make([]byte, 0, 256)}
}}

// parseTarget parses the request-target into rq, or answers the request
// itself (400 for anything ambiguous, OPTIONS *) and returns false.
func (p *Proxy) parseTarget(ctx *fasthttp.RequestCtx, rq *request) bool {
	h := &ctx.Request.Header
	host := h.Host()
	switch {
	case len(host) == 0 && p.defaultHost != nil:
		// HTTP/1.0 without Host (HTTP/1.1 without one never gets here).
		h.SetHostBytes(p.defaultHost)
		host = p.defaultHost
	case len(host) == 0, !target.ValidHost(host):
		p.badTarget(ctx)
		return false
	}
	if err := rq.t.Parse(h.RequestURI(), p.targetOpts); err != nil {
		p.badTarget(ctx)
		return false
	}
	switch rq.t.Form {
	case target.FormAsterisk:
		if !h.IsOptions() {
			p.badTarget(ctx)
			return false
		}
		ctx.Response.Header.Set(fasthttp.HeaderAllow, allowedMethods)
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return false
	case target.FormAbsolute:
		if !target.SameAuthority(rq.t.Authority, host, rq.t.Scheme) {
			p.badTarget(ctx)
			return false
		}
	}
	p.routeKeys(rq)
	return true
}

// routeKeys fills in the forms of rq's path that routes match on (the unfolded
// one only when a route is case-sensitive).
func (p *Proxy) routeKeys(rq *request) {
	rq.fold = target.Key(rq.fold[:0], rq.t.Path, true)
	if p.caseSensitive {
		rq.exact = target.Key(rq.exact[:0], rq.t.Path, false)
	}
}

// allowedMethods is what OPTIONS * answers.
const allowedMethods = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"

// badTarget refuses a request whose target is ambiguous or malformed.
func (p *Proxy) badTarget(ctx *fasthttp.RequestCtx) {
	p.m.badTargets.Inc()
	ctx.SetConnectionClose()
	writeError(ctx, fasthttp.StatusBadRequest, errBadTarget)
}

// allowed applies the route's own refusals: TRACE and encoded slashes,
// unless the route lets them through.
func (p *Proxy) allowed(ctx *fasthttp.RequestCtx, r *route, rq *request) bool {
	switch {
	case rq.t.EncodedSlash && !r.EncodedSlashes:
		p.badTarget(ctx)
		return false
	case ctx.Request.Header.IsTrace() && !r.AllowTrace:
		p.m.refusedMethods.Inc()
		writeError(ctx, fasthttp.StatusMethodNotAllowed, errMethod)
		return false
	}
	return true
}

// own reports whether the request is for one of waitroom's own endpoints
// (its path is under the reserved prefix, ignoring case and trailing dots,
// so that no spelling of it reaches an origin) and returns the rest of the
// path ("/api/status"); the rest is empty, which no endpoint answers to,
// when the prefix is not spelled exactly.
func (p *Proxy) own(rq *request) ([]byte, bool) {
	if !underPrefix(rq.fold, p.prefixKey) {
		return nil, false
	}
	if !underPrefix(rq.t.Path, p.prefix) {
		return nil, true
	}
	return rq.t.Path[len(p.prefix):], true
}

// underPrefix reports whether path is prefix or below it.
func underPrefix(path, prefix []byte) bool {
	return bytes.HasPrefix(path, prefix) && (len(path) == len(prefix) || path[len(prefix)] == '/')
}

// route finds the first route matching the request's path, or the route
// for unmatched paths.
func (p *Proxy) route(rq *request) *route {
	for _, r := range p.routes {
		if r.m.match(rq.fold, rq.exact) {
			return r
		}
	}
	return p.fallback
}

// bypassed applies the bypass rules.
func (p *Proxy) bypassed(ctx *fasthttp.RequestCtx, ip netip.Addr) bool {
	for _, c := range p.opts.Bypass.CIDRs {
		if c.Contains(ip) {
			p.m.bypassCIDR.Inc()
			return true
		}
	}
	if p.bypassSecret != nil {
		if v := ctx.Request.Header.PeekBytes(p.bypassHeader); v != nil && constantTimeEqual(v, p.bypassSecret) {
			p.m.bypassHeader.Inc()
			return true
		}
	}
	return false
}

// validPass returns the request's pass for ev when it is valid: cached,
// or verified now and cached, and where it came from (passToken). It
// allocates nothing on a cache hit.
func (p *Proxy) validPass(ctx *fasthttp.RequestCtx, ev *event, ip netip.Addr, now time.Time) (_ *cached[passEntry], from passSource) {
	tok, from := passToken(&ctx.Request.Header, ev.passCookie)
	if len(tok) == 0 {
		return nil, from
	}
	b := p.binder(ctx, ip)
	e := p.passes.get(tok)
	if e == nil {
		p.m.passMisses.Inc()
		pass, err := p.keys.VerifyPass(string(tok), ev.ID, b.hash().String(), now)
		if err != nil {
			if from != passInBearer { // a bearer token may be the origin's own credential
				ev.counts.invalidPasses.Inc()
			}
			return nil, from
		}
		e = p.passes.add(string(tok), passFiller(pass, b.signals(), p.engine.RenewAt(ev.ID, &pass)))
	} else {
		p.m.passHits.Inc()
	}
	ps := &e.v.pass
	if ps.Event != ev.ID || !now.Before(ps.ExpiresAt) || !b.matches(&e.v.with, ps.Binding) {
		ev.counts.invalidPasses.Inc()
		return nil, from
	}
	if p.engine.PassRevoked(ev.ID, ps) {
		ev.counts.revokedPasses.Inc()
		return nil, from
	}
	return e, from
}

// firstUse tells the engine that a request with pass e went through the
// gate, so that its visitor counts as having come (the no-show rate);
// once the engine took note, the pass's later requests only read e's
// flag.
func (p *Proxy) firstUse(ev *event, e *cached[passEntry]) {
	if p.engine.NoteUse(ev.ID, &e.v.pass) {
		e.v.used.Store(true)
	}
}

// passFiller fills a cache entry with a pass verified for the binding
// inputs with, due for renewal at renewAt (zero: never).
func passFiller(pass admission.Pass, with signals, renewAt time.Time) func(e *passEntry) {
	return func(e *passEntry) {
		e.pass, e.with = pass, with
		copy(e.visitor[:], pass.Visitor.String())
		e.seen.Identify(pass.Visitor) // counted once across replicas
		e.renewAt.Store(renewUnix(renewAt))
	}
}

// forward sends the request to the route's origin; with a pass, as that
// visitor, measured for the admission controller. now is the proxy's clock
// when the pass was checked (zero without a pass): it is read once per
// request.
func (p *Proxy) forward(ctx *fasthttp.RequestCtx, r *route, ip netip.Addr, pass *cached[passEntry], rq *request, now time.Time) {
	o := r.origin
	if o == nil {
		// auth_request deployments have no origin: nginx serves the site.
		writeError(ctx, fasthttp.StatusNotFound, errNoOrigin)
		return
	}
	proto, host, trusts := p.trusted.Forwarded(ctx)
	fw := upstream.Forward{
		Target:        rq.t.URI(),
		ClientIP:      ip,
		Proto:         proto,
		Host:          host,
		KeepForwarded: trusts,
		StripCookies:  p.stripCookies,
		StripHeaders:  p.stripHeaders,
		OwnXFF:        p.ownXFF,

		ClientIPHeaders: p.clientIPHeaders,
	}
	// On a gated route only a pass, a bypass or a crawler gets here.
	class := netlimit.Anonymous
	if pass != nil || r.Action != ActionPass && !rq.crawler {
		class, fw.Admitted = netlimit.Admitted, true
	}
	if !p.enter(ctx, class) {
		return
	}
	defer p.budget.Release(class)
	var g *bodyGuard
	if pol := p.body.Load(); pol != nil && ctx.Request.IsBodyStream() {
		g = acquireBodyGuard(ctx, pol)
		fw.Body = g
		defer releaseBodyGuard(g)
	}
	if p.realClock {
		fw.Start = now // the origin's deadlines need the real clock
	}
	if rq.passFrom == passInBearer {
		fw.StripHeaders = p.stripHeadersAuthz // the pass was ours, not the origin's
	}
	var me *meter.Event
	var tok meter.Token
	if pass != nil {
		fw.Visitor, fw.Event = pass.v.visitor[:], r.ev.id
		me = r.ev.meter
		me.SeenAt(&pass.v.seen, now)
		tok = me.StartAt(now)
		if !pass.v.used.Load() {
			p.firstUse(r.ev, pass)
		}
	}
	out := o.Forward(ctx, &fw)
	if np := rq.newPass; np != nil && !ctx.Hijacked() {
		// Forward replaced the response: the new pass's cookie goes on
		// the origin's answer (or on the error written below).
		defer p.setCookie(ctx, r.ev.passCookie, np.token, np.expires)
	}
	if me != nil {
		me.DoneAt(tok, now.Add(out.Elapsed), out.Status, out.Err != nil && !errors.Is(out.Err, upstream.ErrClient))
		if out.Complete && me.Complete(&pass.v.seen) {
			// Done: no new pass, and this one stops after the grace.
			p.engine.Complete(r.ev.ID, pass.v.pass.Visitor)
		}
	}
	if out.Err != nil {
		p.upstreamFailed(ctx, o, out.Err)
		return
	}
	// One comparison on the cached pass; minting is for the rare request
	// past it. A visitor who just completed is not renewed.
	if pass != nil && now.Unix() >= pass.v.renewAt.Load() && !out.Complete && out.Status >= 200 {
		if rn := p.renew(ctx, r.ev, pass, now, true); rn != nil && rq.passFrom != passInCookie {
			ctx.Response.Header.SetBytesK(headerPass, rn.token)
		}
	}
}

// upstreamFailed answers a request the origin could not serve.
func (p *Proxy) upstreamFailed(ctx *fasthttp.RequestCtx, o *upstream.Origin, err error) {
	switch {
	case errors.Is(err, upstream.ErrShed):
		p.m.shed.WithLabelValues(o.Name()).Inc()
		if errors.Is(err, upstream.ErrReserved) {
			p.m.reserveShed.WithLabelValues(o.Name()).Inc()
		}
		p.busy(ctx)
	case errors.Is(err, upstream.ErrBodyTimeout):
		p.m.bodyTimeouts.Inc()
		ctx.SetConnectionClose()
		writeError(ctx, fasthttp.StatusRequestTimeout, errSlowRequest)
	case errors.Is(err, upstream.ErrClient):
		ctx.SetConnectionClose()
		writeError(ctx, fasthttp.StatusBadRequest, errBadRequest)
	case errors.Is(err, upstream.ErrTimeout):
		p.m.originErrors.WithLabelValues(o.Name(), "timeout").Inc()
		p.down(ctx, fasthttp.StatusGatewayTimeout, errTimeout)
	default:
		p.m.originErrors.WithLabelValues(o.Name(), "unavailable").Inc()
		p.log.Warn("proxy: origin failed", "origin", o.Name(), "err", err)
		p.down(ctx, fasthttp.StatusBadGateway, errBadGateway)
	}
}

// down answers a request the origin did not answer (502, or 504 for a
// timeout) with Retry-After: the "site not answering" page, which retries
// by itself, for a browser (Accept names text/html), JSON for anything
// else, as an API client expects.
func (p *Proxy) down(ctx *fasthttp.RequestCtx, status int, e *apiError) {
	ctx.Response.Header.Set("Retry-After", strconv.Itoa(static.DownRetrySeconds))
	if !bytes.Contains(ctx.Request.Header.Peek("Accept"), []byte("text/html")) {
		writeError(ctx, status, e)
		return
	}
	al := p.pageLanguage(ctx, nil)
	p.writePage(ctx, status, p.csp, p.opts.Pages.Down(al), p.opts.Pages.DownGzip(al))
}

// busy answers 503 with Retry-After: the busy page, or JSON.
func (p *Proxy) busy(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("Retry-After", strconv.Itoa(static.BusyRetrySeconds))
	if wantsJSON(ctx) {
		writeError(ctx, fasthttp.StatusServiceUnavailable, errBusy)
		return
	}
	al := p.pageLanguage(ctx, nil)
	p.writePage(ctx, fasthttp.StatusServiceUnavailable, p.csp, p.opts.Pages.Busy(al), p.opts.Pages.BusyGzip(al))
}

// maintenance answers a gated request while the event is in
// maintenance: 503 with Retry-After, the event's maintenance page or JSON.
func (p *Proxy) maintenance(ctx *fasthttp.RequestCtx, ev *event) {
	ctx.Response.Header.Set("Retry-After", strconv.Itoa(static.MaintenanceRetrySeconds))
	setNoStore(&ctx.Response.Header)
	page := p.opts.Pages.Maintenance(ev.ID, p.pageLanguage(ctx, nil))
	if page == nil || wantsJSON(ctx) {
		writeError(ctx, fasthttp.StatusServiceUnavailable, errMaintenance)
		return
	}
	p.writePage(ctx, fasthttp.StatusServiceUnavailable, p.csp, page, nil)
}

// straightThrough lets a visitor without a pass go straight to the origin
// when the engine allows it (threshold mode with room, or the
// passthrough state): a pass is minted, cached, forwarded with and set on
// the origin's answer, so the visitor counts as active at once and has no
// waiting-room round trip. It reports false (the visitor goes to the
// room) otherwise, and when the client is over the API's rate limit: a
// client that keeps no cookies would take a slot with every request.
// The bot defence's challenge is skipped while the room is not queueing,
// as a hosted waiting room's is; it runs at the join once it is.
func (p *Proxy) straightThrough(ctx *fasthttp.RequestCtx, r *route, ip netip.Addr, rq *request, now time.Time) bool {
	if ok, _ := p.rateAllowed(ip, now); !ok {
		p.m.rateLimited.Inc()
		return false
	}
	ev := r.ev
	b := p.binder(ctx, ip)
	pass, err := p.engine.Enter(p.base, ev.ID, b.hash().String())
	if err != nil {
		p.log.Warn("proxy: straight-through admission failed; the visitor goes to the room", "event", ev.ID, "err", err)
		return false
	}
	if pass == nil {
		return false
	}
	tok, err := p.keys.SignPass(*pass)
	if err != nil {
		p.log.Error("proxy: signing a pass failed", "event", ev.ID, "err", err)
		return false
	}
	e := p.passes.add(tok, passFiller(*pass, b.signals(), p.engine.RenewAt(ev.ID, pass)))
	ev.counts.passesIssued.Inc()
	r.counts.passed.Inc()
	p.notify(Notice{Kind: "admitted", Event: ev.ID, Visitor: pass.Visitor.String(), Lane: pass.Lane, Score: -1})
	rq.newPass = &issuedPass{token: tok, expires: pass.ExpiresAt}
	p.forward(ctx, r, ip, e, rq, now)
	return true
}

// blocked answers a request for a pass-only path without a pass.
func (p *Proxy) blocked(ctx *fasthttp.RequestCtx, ev *event) {
	if wantsJSON(ctx) {
		writeError(ctx, fasthttp.StatusForbidden, errPassRequired)
		return
	}
	p.writePage(ctx, fasthttp.StatusForbidden, p.csp, p.opts.Pages.Blocked(ev.ID, p.pageLanguage(ctx, nil)), nil)
}

// room answers a gated request without a pass: the waiting-room page, or
// for a JSON client the status (as GET {prefix}/api/status would).
func (p *Proxy) room(ctx *fasthttp.RequestCtx, ev *event, ip netip.Addr, rq *request) {
	if wantsJSON(ctx) {
		setSecurityHeaders(&ctx.Response.Header)
		p.status(ctx, ev, ip, rq.t.URI(), p.clock())
		return
	}
	al := p.pageLanguage(ctx, rq)
	p.writePage(ctx, fasthttp.StatusOK, ev.csp, p.opts.Pages.Room(ev.ID, al), p.opts.Pages.RoomGzip(ev.ID, al))
}
