package proxy

// The session endpoint and script: GET {prefix}/api/session tells an
// admitted visitor's page how long their pass has left, and
// {prefix}/session.js is the banner an origin includes on its pages to warn
// them a minute before the end (static/web/session.js).

import (
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/jsonenc"
	"github.com/waitroom/waitroom/static"
)

var (
	pathSession       = []byte("session")
	pathSessionScript = []byte("/session.js")
	errNoPass         = newAPIError("no_pass", "there is no valid pass for this event in this browser")
)

// eventOf returns the event a session request names with ?event=, or the
// only event when it names none.
func (p *Proxy) eventOf(rq *request) *event {
	args := rq.query()
	if id := args.Peek("event"); id != nil {
		return p.events[string(id)]
	}
	if len(p.events) == 1 {
		for _, ev := range p.events {
			return ev
		}
	}
	return nil
}

// session answers GET {prefix}/api/session: the state of the request's
// pass for the event. It reads the pass as the gate does (cached, verified,
// bound, not revoked) and renews nothing: asking is not activity at the
// origin.
func (p *Proxy) session(ctx *fasthttp.RequestCtx, rq *request, now time.Time) {
	ev := p.eventOf(rq)
	if ev == nil {
		writeError(ctx, fasthttp.StatusNotFound, errUnknownEvent)
		return
	}
	e, _ := p.validPass(ctx, ev, p.trusted.ClientIP(ctx), now)
	if e == nil {
		writeError(ctx, fasthttp.StatusUnauthorized, errNoPass)
		return
	}
	pass := &e.v.pass
	left := max(0, int64(pass.ExpiresAt.Sub(now)/time.Second))
	b := make([]byte, 0, 256)
	b = append(b, `{"event":`...)
	b = jsonenc.String(b, ev.ID)
	b = append(b, `,"active":true,"expires_at":`...)
	b = appendTime(b, pass.ExpiresAt)
	b = append(b, `,"expires_in":`...)
	b = strconv.AppendInt(b, left, 10)
	b = append(b, `,"renews":`...)
	b = strconv.AppendBool(b, p.engine.Renewable(ev.ID, pass, now))
	b = append(b, `,"session_ends_at":`...)
	b = appendTime(b, p.engine.SessionEnd(ev.ID, pass))
	bar, barred := p.engine.Barred(ev.ID, pass.Visitor)
	b = append(b, `,"done":`...)
	b = strconv.AppendBool(b, barred && bar.Reason == admission.BarCompleted)
	b = append(b, '}')
	ctx.Response.Header.SetContentTypeBytes(contentJSON)
	setNoStore(&ctx.Response.Header)
	ctx.SetBody(b)
}

// sessionScript serves {prefix}/session.js?event=E: the banner script in
// the visitor's language.
func (p *Proxy) sessionScript(ctx *fasthttp.RequestCtx, rq *request) {
	if !readOnly(ctx) {
		return
	}
	ev := p.eventOf(rq)
	var js []byte
	if ev != nil {
		js = p.opts.Pages.SessionScript(ev.ID, ctx.Request.Header.Peek("Accept-Language"))
	}
	if js == nil {
		writeError(ctx, fasthttp.StatusNotFound, errUnknownEvent)
		return
	}
	ctx.Response.Header.SetContentType(static.ContentTypeJS)
	ctx.Response.Header.Set("Cache-Control", "public, max-age=300")
	ctx.Response.Header.Set("Vary", "Accept-Language")
	ctx.Response.SetBodyRaw(js)
}
