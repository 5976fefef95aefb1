package proxy

import (
	"bytes"
	"errors"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/internal/jsonenc"
	"github.com/waitroom/waitroom/proxy/identity"
)

// One place per account: a join of an event whose Identity is optional
// or required reads who the origin says is logged in (Options.Identity)
// and hands the account to the engine, which gives an account one place.

// The identity errors of a join. Both are 401: the visitor must log in
// (again) at the origin; the JSON carries the event's login_url too.
var (
	errLoginRequired    = newAPIError("login_required", "log in to join this queue")
	errIdentityInvalid  = newAPIError("identity_invalid", "your login has expired or is not valid here; log in again to join this queue")
	errIdentityDown     = newAPIError("identity_unavailable", "your login cannot be checked right now; try again")
	bearerPrefix        = []byte("bearer ")
	identityMissing     = "missing"
	identityInvalid     = "invalid"
	identityVerified    = "verified"
	identityUnavailable = "unavailable"
)

// account reads and verifies the visitor's identity for a join of ev. It
// returns the account ("" joins anonymously) and whether the join may go
// on; when it may not, the answer is written. An identity that is
// missing or does not verify refuses a join only when the event requires
// one; an optional event then takes the join as anonymous.
func (p *Proxy) account(ctx *fasthttp.RequestCtx, ev *event, now time.Time) (string, bool) {
	v := p.opts.Identity
	if ev.Identity == identity.Off || v == nil {
		return "", true
	}
	raw := identityValue(ctx, v)
	if len(raw) == 0 {
		ev.counts.identity(identityMissing).Inc()
		if ev.Identity == identity.Required {
			p.identityRefused(ctx, ev, errLoginRequired)
			return "", false
		}
		return "", true
	}
	a, err := v.Verify(p.base, string(raw), now)
	switch {
	case err == nil:
		ev.counts.identity(identityVerified).Inc()
		return a, true
	case errors.Is(err, identity.ErrUnavailable):
		ev.counts.identity(identityUnavailable).Inc()
		p.log.Warn("proxy: the identity could not be checked", "event", ev.ID, "err", err)
		if ev.Identity == identity.Required {
			ctx.Response.Header.Set("Retry-After", "5")
			writeError(ctx, fasthttp.StatusServiceUnavailable, errIdentityDown)
			return "", false
		}
		return "", true
	default:
		ev.counts.identity(identityInvalid).Inc()
		if ev.Identity == identity.Required {
			p.identityRefused(ctx, ev, errIdentityInvalid)
			return "", false
		}
		return "", true
	}
}

// identityValue is the identity the request carries: the configured
// cookie, or header (less a "Bearer " prefix).
func identityValue(ctx *fasthttp.RequestCtx, v *identity.Verifier) []byte {
	if name := v.Cookie(); name != "" {
		return ctx.Request.Header.Cookie(name)
	}
	h := bytes.TrimSpace(ctx.Request.Header.Peek(v.Header()))
	if len(h) > len(bearerPrefix) && bytes.EqualFold(h[:len(bearerPrefix)], bearerPrefix) {
		h = bytes.TrimSpace(h[len(bearerPrefix):])
	}
	return h
}

// identityRefused answers a join refused for want of a valid identity:
// 401 with e, and the event's login URL as login_url when it has one.
func (p *Proxy) identityRefused(ctx *fasthttp.RequestCtx, ev *event, e *apiError) {
	ev.counts.joins("login_required").Inc()
	if ev.LoginURL == "" {
		writeError(ctx, fasthttp.StatusUnauthorized, e)
		return
	}
	b := append([]byte(nil), e.body[:len(e.body)-1]...)
	b = append(b, `,"login_url":`...)
	b = jsonenc.String(b, ev.LoginURL)
	b = append(b, '}')
	writeError(ctx, fasthttp.StatusUnauthorized, &apiError{code: e.code, message: e.message, body: b})
}

// noJSAccount is account for the no-JS join form: a browser refused for
// want of an identity is sent to the event's login URL, when it has one.
func (p *Proxy) noJSAccount(ctx *fasthttp.RequestCtx, ev *event, now time.Time) (string, bool) {
	a, ok := p.account(ctx, ev, now)
	if !ok && ev.LoginURL != "" && ctx.Response.StatusCode() == fasthttp.StatusUnauthorized && !wantsJSON(ctx) {
		ctx.Response.ResetBody()
		redirect(ctx, []byte(ev.LoginURL))
	}
	return a, ok
}
