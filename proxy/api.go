package proxy

import (
	"bytes"
	"errors"
	"net/netip"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/proxy/httpguard"
)

// Limits of the waiting-room API.
const (
	// maxJoinBody bounds a join request's body.
	maxJoinBody = 8 << 10
)

// serveOwn serves waitroom's endpoints; rest is the normalised path after
// the prefix. It dispatches straight to each endpoint's handler; the API
// ({prefix}/api/…) is rate limited per client address first.
func (p *Proxy) serveOwn(ctx *fasthttp.RequestCtx, rest []byte, rq *request) {
	setSecurityHeaders(&ctx.Response.Header)
	api, isAPI := bytes.CutPrefix(rest, pathAPI)
	if !isAPI {
		switch {
		case bytes.Equal(rest, pathAuth):
			p.auth(ctx, rq)
		case bytes.HasPrefix(rest, pathAuth) && rest[len(pathAuth)] == '/':
			p.authEnvoy(ctx, rq)
		case bytes.Equal(rest, pathJWKS):
			if !readOnly(ctx) {
				return
			}
			ctx.Response.Header.SetContentType("application/json")
			ctx.Response.Header.Set("Cache-Control", "public, max-age=300")
			ctx.Response.SetBodyRaw(p.jwks)
		case bytes.HasPrefix(rest, pathStatic):
			p.asset(ctx, rest[len(pathStatic):])
		case bytes.HasPrefix(rest, pathNoJS):
			p.serveNoJS(ctx, rest[len(pathNoJS):], rq)
		case bytes.HasPrefix(rest, pathDraw):
			p.drawPage(ctx, rest[len(pathDraw):], rq)
		case bytes.Equal(rest, pathSessionScript):
			p.sessionScript(ctx, rq)
		default:
			writeError(ctx, fasthttp.StatusNotFound, errNotFound)
		}
		return
	}
	ip, now := p.trusted.ClientIP(ctx), p.requestTime(ctx)
	if !p.allowAPI(ctx, ip, now) {
		return
	}
	switch {
	case bytes.Equal(api, pathStatus):
		if !readOnly(ctx) {
			return
		}
		args := rq.query()
		ev := p.events[string(args.Peek("event"))]
		if ev == nil {
			writeError(ctx, fasthttp.StatusNotFound, errUnknownEvent)
			return
		}
		p.status(ctx, ev, ip, args.Peek("return"), now)
	case bytes.Equal(api, pathChall):
		if !readOnly(ctx) {
			return
		}
		ev := p.events[string(rq.query().Peek("event"))]
		if ev == nil {
			writeError(ctx, fasthttp.StatusNotFound, errUnknownEvent)
			return
		}
		p.challengeFor(ctx, ev, ip)
	case bytes.Equal(api, pathJoin):
		if !ctx.IsPost() {
			writeError(ctx, fasthttp.StatusMethodNotAllowed, errMethod)
			return
		}
		p.join(ctx, ip)
	case bytes.Equal(api, pathSession):
		if !readOnly(ctx) {
			return
		}
		p.session(ctx, rq, now)
	case bytes.HasPrefix(api, pathDraws):
		if !readOnly(ctx) {
			return
		}
		p.draws(ctx, api[len(pathDraws):], rq)
	default:
		writeError(ctx, fasthttp.StatusNotFound, errNotFound)
	}
}

var (
	pathAPI    = []byte("/api/")
	pathAuth   = []byte("/auth")
	pathJWKS   = []byte("/jwks.json")
	pathStatic = []byte("/static/")
	pathStatus = []byte("status")
	pathJoin   = []byte("join")
	pathChall  = []byte("challenge")
	pathDraws  = []byte("draws/")
	pathDraw   = []byte("/draw/")
)

// readOnly reports whether the request is a GET or HEAD, answering 405
// when it is not.
func readOnly(ctx *fasthttp.RequestCtx) bool {
	if ctx.IsGet() || ctx.IsHead() {
		return true
	}
	writeError(ctx, fasthttp.StatusMethodNotAllowed, errMethod)
	return false
}

// allowAPI applies the API's rate limit to a request from ip at now,
// answering 429 itself when it is hit.
func (p *Proxy) allowAPI(ctx *fasthttp.RequestCtx, ip netip.Addr, now time.Time) bool {
	ok, wait := p.rateAllowed(ip, now)
	if !ok {
		p.m.rateLimited.Inc()
		retryAfter(ctx, wait)
		writeError(ctx, fasthttp.StatusTooManyRequests, errRateLimited)
	}
	return ok
}

// cachedTicket is a verified ticket as the ticket cache keeps it.
type cachedTicket struct {
	admission.Ticket
	// with are the binding inputs the ticket was verified with.
	with signals
}

// ticket returns the request's ticket for ev when it is valid (cached, or
// verified now and cached).
func (p *Proxy) ticket(ctx *fasthttp.RequestCtx, ev *event, b *binder, now time.Time) (*cachedTicket, bool) {
	t, _, ok := p.ticketFrom(ctx, ev, b, now)
	return t, ok
}

// ticketFrom is ticket, and whether the ticket came as a bearer token
// (an app's: it gets its tokens in the answer) rather than its cookie.
func (p *Proxy) ticketFrom(ctx *fasthttp.RequestCtx, ev *event, b *binder, now time.Time) (_ *cachedTicket, bearer, ok bool) {
	tok, bearer := ticketToken(&ctx.Request.Header, ev.ticketCookie)
	if len(tok) == 0 {
		return nil, false, false
	}
	e := p.tickets.get(tok)
	if e == nil {
		t, err := p.keys.VerifyTicket(string(tok), ev.ID, b.hash().String(), now)
		if err != nil {
			return nil, false, false
		}
		e = p.cacheTicket(string(tok), t, b.signals())
	}
	t := &e.v
	if t.Event != ev.ID || !now.Before(t.ExpiresAt) || !b.matches(&t.with, t.Binding) {
		return nil, false, false
	}
	return t, bearer, true
}

// cacheTicket keeps a verified or just signed ticket under its token.
// with are the binding inputs of the request it was verified or signed
// for.
func (p *Proxy) cacheTicket(tok string, t admission.Ticket, with signals) *cached[cachedTicket] {
	return p.tickets.add(tok, func(v *cachedTicket) { *v = cachedTicket{Ticket: t, with: with} })
}

// status answers a status poll: O(1) for a drawn ticket, from the ticket
// and the engine's in-memory counters. When the visitor is admitted it
// sets the pass cookie; ret is where they asked to go, now the proxy's
// clock when the request came in.
func (p *Proxy) status(ctx *fasthttp.RequestCtx, ev *event, ip netip.Addr, ret []byte, now time.Time) {
	b := p.binder(ctx, ip)
	t, bearer, ok := p.ticketFrom(ctx, ev, &b, now)
	if !ok {
		ev.counts.statusNoTicket.Inc()
		writeError(ctx, fasthttp.StatusUnauthorized, errNoTicket)
		return
	}
	res, err := p.engine.StatusAt(p.base, ev.ID, t.Ticket, p.engineTime(now))
	if err != nil {
		p.engineFailed(ctx, ev, err)
		return
	}
	if res.Renewed && !p.setTicket(ctx, ev, res.Ticket, &b) {
		return
	}
	if res.Pass != nil && !p.setPass(ctx, ev, res.Pass, &b) {
		return
	}
	p.writeStatus(ctx, ev, &res.Status, &res.Ticket, ret)
	if bearer {
		p.tokensIntoBody(ctx, ev)
	}
}

// setTicket signs a ticket into its cookie; b is the binding of the
// request it answers, which the ticket is bound to.
func (p *Proxy) setTicket(ctx *fasthttp.RequestCtx, ev *event, t admission.Ticket, b *binder) bool {
	tok, err := p.keys.SignTicket(t)
	if err != nil {
		p.log.Error("proxy: signing a ticket failed", "event", ev.ID, "err", err)
		writeError(ctx, fasthttp.StatusInternalServerError, errInternal)
		return false
	}
	p.cacheTicket(tok, t, b.signals())
	p.setCookie(ctx, ev.ticketCookie, tok, t.ExpiresAt)
	return true
}

// setPass signs a pass into its cookie and caches it, so the visitor's
// next request is a cache hit; b is the binding of the request it answers.
func (p *Proxy) setPass(ctx *fasthttp.RequestCtx, ev *event, pass *admission.Pass, b *binder) bool {
	tok, err := p.keys.SignPass(*pass)
	if err != nil {
		p.log.Error("proxy: signing a pass failed", "event", ev.ID, "err", err)
		writeError(ctx, fasthttp.StatusInternalServerError, errInternal)
		return false
	}
	p.passes.add(tok, passFiller(*pass, b.signals(), p.engine.RenewAt(ev.ID, pass)))
	ev.counts.passesIssued.Inc()
	p.notify(Notice{Kind: "admitted", Event: ev.ID, Visitor: pass.Visitor.String(), Lane: pass.Lane, Score: -1})
	p.setCookie(ctx, ev.passCookie, tok, pass.ExpiresAt)
	return true
}

// engineFailed answers an engine error on the API.
func (p *Proxy) engineFailed(ctx *fasthttp.RequestCtx, ev *event, err error) {
	switch {
	case errors.Is(err, admission.ErrUnknownEvent):
		writeError(ctx, fasthttp.StatusNotFound, errUnknownEvent)
	case errors.Is(err, admission.ErrUnknownLane):
		writeError(ctx, fasthttp.StatusBadRequest, errUnknownLane)
	case errors.Is(err, admission.ErrNotAllowed):
		writeError(ctx, fasthttp.StatusForbidden, errNotAllowed)
	case errors.Is(err, admission.ErrInviteUsed):
		writeError(ctx, fasthttp.StatusConflict, errInviteUsed)
	case errors.Is(err, admission.ErrBadCredential):
		writeError(ctx, fasthttp.StatusBadRequest, errBadCredential)
	default:
		p.log.Warn("proxy: admission engine failed", "event", ev.ID, "err", err)
		ctx.Response.Header.Set("Retry-After", "5")
		writeError(ctx, fasthttp.StatusServiceUnavailable, errUnavailable)
	}
}

// join places the visitor in an event's queue (or finds their place).
func (p *Proxy) join(ctx *fasthttp.RequestCtx, ip netip.Addr) {
	if !bytes.HasPrefix(ctx.Request.Header.ContentType(), []byte("application/json")) {
		writeError(ctx, fasthttp.StatusUnsupportedMediaType, errMediaType)
		return
	}
	body, err := readSmallBody(ctx, maxJoinBody)
	if err != nil {
		return
	}
	req, err := parseJoin(body)
	if err != nil {
		writeErrorMessage(ctx, fasthttp.StatusBadRequest, "bad_request", requestProblem(err, "the body is not a valid join request"))
		return
	}
	ev := p.events[req.Event]
	if ev == nil {
		writeError(ctx, fasthttp.StatusNotFound, errUnknownEvent)
		return
	}
	now := p.clock()
	account, ok := p.account(ctx, ev, now)
	if !ok {
		return
	}
	b := p.binder(ctx, ip)
	jr := admission.JoinRequest{Lane: req.Lane, Binding: b.hash().String(), Account: account,
		Credential: admission.Credential{Invite: req.Invite, Account: req.Account, AccountProof: req.AccountProof}}
	if jr.Credential.Invite != "" && !p.inviteAllowed(ctx, ev, ip, now) {
		ev.counts.joins("refused").Inc()
		return
	}
	t, bearer, ok := p.ticketFrom(ctx, ev, &b, now)
	if ok {
		jr.Existing = &t.Ticket
	}
	if bearer || asksForTokens(&ctx.Request.Header) {
		defer p.tokensIntoBody(ctx, ev)
	}
	if jr.Existing == nil && ev.Challenge != nil {
		shadow, once, ok := p.admitJoin(ctx, ev, ip, &req, now)
		if !ok {
			ev.counts.joins("refused").Inc()
			return
		}
		// A shadowed visitor joins like anyone, into a place the engine
		// never admits; nothing in the answer tells them.
		jr.Shadow, jr.Once = shadow, once
	}
	res, err := p.engine.Arrive(p.base, ev.ID, jr)
	if err != nil {
		ev.counts.joins("refused").Inc()
		if jr.Once != nil && p.replayRefused(ctx, ev, err) {
			return
		}
		if jr.Credential.Invite == "" || !p.inviteRefused(ctx, ev, ip, now, err) {
			p.engineFailed(ctx, ev, err)
		}
		return
	}
	if jr.Credential.Invite != "" && res.Placed {
		p.invites.add(ev.ID, res.Ticket.Lane, inviteRedeemed)
	}
	if res.Issue && !p.setTicket(ctx, ev, res.Ticket, &b) {
		return
	}
	ev.counts.joins(string(res.Outcome)).Inc()
	if res.Outcome == admission.OutcomeJoined {
		p.notify(Notice{Kind: "joined", Event: ev.ID, Visitor: res.Ticket.Visitor.String(), Lane: res.Ticket.Lane, Score: -1})
	}
	if res.Pass != nil && !p.setPass(ctx, ev, res.Pass, &b) {
		return
	}
	if !res.Placed {
		ret := []byte(nil)
		if res.Pass != nil {
			ret = []byte(req.Return) // let straight in: on to where they were going
		}
		p.writeStatus(ctx, ev, &res.Status, nil, ret)
		return
	}
	p.writeStatus(ctx, ev, &res.Status, &res.Ticket, []byte(req.Return))
}

// draws serves GET {prefix}/api/draws/{event}/{tranche}.
func (p *Proxy) draws(ctx *fasthttp.RequestCtx, rest []byte, rq *request) {
	i := bytes.IndexByte(rest, '/')
	if i <= 0 {
		writeError(ctx, fasthttp.StatusNotFound, errNotFound)
		return
	}
	ev := p.events[string(rest[:i])]
	if ev == nil {
		writeError(ctx, fasthttp.StatusNotFound, errUnknownEvent)
		return
	}
	tranche, ok := parseSmallInt(rest[i+1:])
	if !ok {
		writeErrorMessage(ctx, fasthttp.StatusBadRequest, "bad_request", "the tranche must be a number")
		return
	}
	args := rq.query()
	lane := admission.PublicLane
	if l := args.Peek("lane"); len(l) > 0 {
		lane = string(l)
	}
	offset, limit := 0, DefaultAuditPage
	if v := args.Peek("offset"); v != nil {
		if offset, ok = parseSmallInt(v); !ok {
			writeErrorMessage(ctx, fasthttp.StatusBadRequest, "bad_request", "offset must be a number")
			return
		}
	}
	if v := args.Peek("limit"); v != nil {
		if limit, ok = parseSmallInt(v); !ok || limit < 1 || limit > MaxAuditPage {
			writeError(ctx, fasthttp.StatusBadRequest, errAuditLimit)
			return
		}
	}
	// A drawn tranche's audit never changes: its pages are encoded once.
	key := auditKey{event: ev.ID, lane: lane, tranche: tranche, offset: offset, limit: limit}
	if page, ok := p.audits.get(key); ok {
		writeAudit(ctx, page, true)
		return
	}
	a, err := p.engine.Audit(p.base, ev.ID, lane, tranche, offset, limit)
	switch {
	case errors.Is(err, admission.ErrNotDrawnYet):
		writeError(ctx, fasthttp.StatusNotFound, errNoTranche)
		return
	case err != nil:
		p.engineFailed(ctx, ev, err)
		return
	}
	page := appendAudit(nil, &a, limit)
	if a.Drawn {
		p.audits.add(key, page)
	}
	writeAudit(ctx, page, a.Drawn)
}

// writeAudit writes an encoded draw-audit page, which may be shared with
// the cache and is not modified. A drawn tranche's page may be cached by
// anyone for an hour; an open one's not at all (its draw is coming).
func writeAudit(ctx *fasthttp.RequestCtx, page []byte, drawn bool) {
	ctx.Response.Header.SetContentTypeBytes(contentJSON)
	if drawn {
		ctx.Response.Header.Set("Cache-Control", "public, max-age=3600")
	} else {
		setNoStore(&ctx.Response.Header)
	}
	ctx.Response.SetBodyRaw(page)
}

// auth is the auth_request endpoint: 204 when the request (its cookies
// and the original URI that nginx, Traefik, Caddy or Envoy sends along)
// may reach the origin, 401 when it needs the queue or its URI is
// malformed or ambiguous, 403 when its path is blocked without a pass or
// its method is refused. Envoy's ext_authz counts only 200 as allowed, so
// a request in one of its shapes (X-Envoy-Original-Path, or authEnvoy's
// path) gets 200 instead of 204. The URI goes through the same parser and
// route table as a proxied request, and must already be normalised, since
// the site will read it as it is; rq is reused to parse it.
func (p *Proxy) auth(ctx *fasthttp.RequestCtx, rq *request) {
	uri, method, ok := authOriginal(&ctx.Request.Header)
	allow := fasthttp.StatusNoContent
	if ctx.Request.Header.Peek(headerEnvoyOriginalPath) != nil {
		// Envoy sends the original request's own method.
		allow = fasthttp.StatusOK
		if len(method) == 0 {
			method = ctx.Method()
		}
	}
	p.authorise(ctx, rq, uri, method, ok, allow)
}

// authEnvoy is the auth endpoint as Envoy's ext_authz HTTP service calls
// it with path_prefix set to the endpoint (/_wr/auth): the original
// request's method and its path appended to the prefix. The original
// target is the request-target's own bytes after the prefix, exactly as
// Envoy appended them, never the normalised path.
func (p *Proxy) authEnvoy(ctx *fasthttp.RequestCtx, rq *request) {
	raw := ctx.Request.Header.RequestURI()
	uri, ok := bytes.CutPrefix(raw, p.authPath)
	ok = ok && len(uri) > 0 && uri[0] == '/'
	if ok && ctx.Request.Header.Peek(headerEnvoyOriginalPath) != nil {
		// Two originals: Envoy sends one or the other.
		ok = false
	}
	if v, _, hok := authOriginal(&ctx.Request.Header); hok && len(v) > 0 {
		ok = false
	}
	p.authorise(ctx, rq, uri, ctx.Method(), ok, fasthttp.StatusOK)
}

// authorise answers for the original request uri and method (ok false:
// they were malformed or contradicted), with status allow when it may
// pass.
func (p *Proxy) authorise(ctx *fasthttp.RequestCtx, rq *request, uri, method []byte, ok bool, allow int) {
	// The site gets the original target, not the normalised one: one
	// that normalising would change is read differently by different
	// sites, so it is refused rather than judged.
	if !ok || rq.t.Parse(uri, p.targetOpts) != nil || !rq.t.Normalised() {
		p.m.badTargets.Inc()
		writeError(ctx, fasthttp.StatusUnauthorized, errBadOriginal)
		return
	}
	p.routeKeys(rq)
	if underPrefix(rq.fold, p.prefixKey) {
		// waitroom's own paths are waitroom's to serve, never the site's.
		writeError(ctx, fasthttp.StatusForbidden, errNotFound)
		return
	}
	r := p.route(rq)
	switch {
	case rq.t.EncodedSlash && !r.EncodedSlashes:
		p.m.badTargets.Inc()
		writeError(ctx, fasthttp.StatusUnauthorized, errBadOriginal)
		return
	case bytes.EqualFold(method, []byte("CONNECT")), bytes.EqualFold(method, []byte("TRACE")) && !r.AllowTrace:
		p.m.refusedMethods.Inc()
		writeError(ctx, fasthttp.StatusForbidden, errMethod)
		return
	}
	ip := p.trusted.ClientIP(ctx)
	switch {
	case p.bypassed(ctx, ip):
		r.counts.bypassed.Inc()
	case r.Action == ActionPass:
		r.counts.forwarded.Inc()
	default:
		now := p.clock()
		e, _ := p.validPass(ctx, r.ev, ip, now)
		if e == nil {
			if r.Action == ActionBlock {
				r.counts.blocked.Inc()
				writeError(ctx, fasthttp.StatusForbidden, errPassRequired)
				return
			}
			if p.crawlerPass(ctx, ip) {
				r.counts.crawler.Inc()
				break
			}
			r.counts.room.Inc()
			p.authRoom(ctx, r.ev, method)
			return
		}
		r.counts.forwarded.Inc()
		r.ev.meter.SeenAt(&e.v.seen, now)
		if !e.v.used.Load() {
			p.firstUse(r.ev, e)
		}
		ctx.Response.Header.SetBytesV("X-Waitroom-Visitor", e.v.visitor[:])
		ctx.Response.Header.SetBytesV("X-Waitroom-Event", r.ev.id)
		if now.Unix() >= e.v.renewAt.Load() {
			// The front proxy passes the cookie on (auth_request_set).
			p.renew(ctx, r.ev, e, now, false)
		}
	}
	ctx.SetStatusCode(allow)
}

// authRoom answers 401 for a request that must queue. Traefik's
// forwardAuth and Envoy's ext_authz hand that answer to the visitor as it
// is, so a page navigation (GET or HEAD asking for HTML) gets the
// waiting-room page, as the proxy would serve it at that URL; anything
// else gets the JSON error. nginx and Caddy replace the answer with
// waitroom's own for the original request, and ignore its body. Nothing
// is computed for the visitor here (no status, no pass): the page asks.
func (p *Proxy) authRoom(ctx *fasthttp.RequestCtx, ev *event, method []byte) {
	if (len(method) == 0 || bytes.Equal(method, []byte("GET")) || bytes.Equal(method, []byte("HEAD"))) && !wantsJSON(ctx) {
		al := ctx.Request.Header.Peek("Accept-Language")
		p.writePage(ctx, fasthttp.StatusUnauthorized, ev.csp, p.opts.Pages.Room(ev.ID, al), p.opts.Pages.RoomGzip(ev.ID, al))
		return
	}
	writeError(ctx, fasthttp.StatusUnauthorized, errPassRequired)
}

// The headers that carry the original request to the auth endpoint:
// nginx's auth_request (as configs/nginx-auth-request.conf sets them),
// Traefik's forwardAuth, Caddy's forward_auth and Envoy's ext_authz
// (configured to send the original :path in X-Envoy-Original-Path; its
// method is the request's own).
var (
	authURIHeaders    = [...]string{"X-Original-URI", "X-Forwarded-Uri", headerEnvoyOriginalPath}
	authMethodHeaders = [...]string{"X-Original-Method", "X-Forwarded-Method"}
)

const headerEnvoyOriginalPath = "X-Envoy-Original-Path"

// authOriginal returns the original request's target and method. Every
// header that carries them must agree: a front proxy sets the one it knows
// and passes a client's other spellings through, so a disagreement is a
// client lying about the path. A header given twice, or no URI at all, is
// refused too. The method is empty when no header names it.
func authOriginal(h *fasthttp.RequestHeader) (uri, method []byte, ok bool) {
	pick := func(names []string) ([]byte, bool) {
		var v []byte
		for _, name := range names {
			all := h.PeekAll(name)
			switch {
			case len(all) == 0:
				continue
			case len(all) > 1, v != nil && !bytes.Equal(v, all[0]):
				return nil, false
			}
			v = all[0]
		}
		return v, true
	}
	uri, ok = pick(authURIHeaders[:])
	if !ok || len(uri) == 0 {
		return nil, nil, false
	}
	method, ok = pick(authMethodHeaders[:])
	return uri, method, ok
}

// asset serves the page's static files.
func (p *Proxy) asset(ctx *fasthttp.RequestCtx, name []byte) {
	if !ctx.IsGet() && !ctx.IsHead() {
		writeError(ctx, fasthttp.StatusMethodNotAllowed, errMethod)
		return
	}
	body, ctype, ok := p.opts.Pages.Asset(name)
	if !ok {
		writeError(ctx, fasthttp.StatusNotFound, errNotFound)
		return
	}
	ctx.Response.Header.SetContentType(ctype)
	ctx.Response.Header.Set("Cache-Control", "public, max-age=31536000, immutable")
	ctx.Response.SetBodyRaw(body)
}

// returnPath is where an admitted visitor goes: ret when it is a
// same-site path, else the event's landing path.
func returnPath(ev *event, ret []byte) []byte {
	if len(ret) > 0 {
		if path, ok := httpguard.SameSitePath(ret); ok {
			return path
		}
	}
	return ev.landing
}

func parseSmallInt(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
