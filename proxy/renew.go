package proxy

// Session renewal at the gate: a pass that is due (less than half a
// session left, see admission.Engine.RenewAt) is replaced on the response
// to the visitor's next request that reaches the origin. The cached entry
// holds the Unix second it is due at, so the pass-through path compares
// one integer; signing happens once per pass, and every other request
// that still carries the old pass while the new cookie is on its way gets
// the same new pass.

import (
	"bytes"
	"math"
	"time"

	"github.com/valyala/fasthttp"
)

// neverRenew is renewAt of a pass that is not renewed.
const neverRenew = math.MaxInt64

// renewal is the pass that replaced a cached one.
type renewal struct {
	token   string
	expires time.Time
}

// renewUnix is a renewal time as passEntry.renewAt keeps it.
func renewUnix(at time.Time) int64 {
	if at.IsZero() {
		return neverRenew
	}
	return at.Unix()
}

// renew sets the visitor's renewed pass cookie on the response, minting
// the pass unless a request before this one did. onOrigin says the
// response is the origin's: its Cache-Control must keep shared caches
// from storing the cookie (private or no-store; "private" is added when
// the origin set none), else the renewal waits for the next request. A
// pass that may not be renewed (revoked, done, at the end of its
// session) is marked so and left as it is. It returns the renewal it set
// on the response, nil when it set none.
func (p *Proxy) renew(ctx *fasthttp.RequestCtx, ev *event, e *cached[passEntry], now time.Time, onOrigin bool) *renewal {
	if onOrigin && !privateResponse(&ctx.Response.Header) {
		return nil
	}
	if r := e.v.renewed.Load(); r != nil {
		p.setCookie(ctx, ev.passCookie, r.token, r.expires)
		return r
	}
	np, ok := p.engine.RenewPass(ev.ID, &e.v.pass, now)
	if !ok {
		e.v.renewAt.Store(neverRenew)
		return nil
	}
	tok, err := p.keys.SignPass(np)
	if err != nil {
		p.log.Error("proxy: signing a renewed pass failed", "event", ev.ID, "err", err)
		e.v.renewAt.Store(neverRenew)
		return nil
	}
	ne := p.passes.add(tok, passFiller(np, e.v.with, p.engine.RenewAt(ev.ID, &np)))
	r := &renewal{token: tok, expires: np.ExpiresAt}
	if e.v.renewed.CompareAndSwap(nil, r) {
		// The visitor keeps their one place in the active count.
		e.v.seen.HandOver(&ne.v.seen)
		ne.v.used.Store(e.v.used.Load()) // and their use is noted already
		ev.counts.passesRenewed.Inc()
	} else {
		r = e.v.renewed.Load() // a concurrent request renewed it first
	}
	p.setCookie(ctx, ev.passCookie, r.token, r.expires)
	return r
}

var (
	ccPrivate = []byte("private")
	ccNoStore = []byte("no-store")
)

// privateResponse reports whether a response may carry a cookie: shared
// caches will not store it (Cache-Control private or no-store). A response
// without Cache-Control is made private.
func privateResponse(h *fasthttp.ResponseHeader) bool {
	lines := h.PeekAll(fasthttp.HeaderCacheControl)
	if len(lines) == 0 {
		h.Set(fasthttp.HeaderCacheControl, "private")
		return true
	}
	for _, l := range lines {
		l = bytes.ToLower(l)
		if bytes.Contains(l, ccPrivate) || bytes.Contains(l, ccNoStore) {
			return true
		}
	}
	return false
}
