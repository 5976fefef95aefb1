package proxy

// The waiting room without JavaScript: the room page's <noscript> form
// posts to {prefix}/nojs/join, which answers with a redirect (Post/
// Redirect/Get) to {prefix}/nojs/status, a page rendered per request that
// shows the visitor's place and reloads itself at the interval the engine
// suggests; once admitted it sets the pass and redirects to where the
// visitor was going.
//
// Bot defence: only events without a challenge take no-JS joins. The
// scripted join of such an event needs no proof of work either, so the
// form is never a cheaper way in; an event whose challenge asks for work
// (or a CAPTCHA, which also needs scripts) refuses the form and the page
// says that JavaScript is needed (docs/bot-defence.md).

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net/netip"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/ascii"
	"github.com/waitroom/waitroom/proxy/httpguard"
	"github.com/waitroom/waitroom/static"
)

// Limits of the no-JS endpoints.
const (
	// maxNoJSForm bounds the join form's body: an event id and a return
	// path (httpguard.MaxReturnPath) with room for their escapes.
	maxNoJSForm = 8 << 10
	// noJSScheduledRefresh is how often the page of a queue that has not
	// opened reloads.
	noJSScheduledRefresh = 30
	// noJSErrorRefresh is how soon the page retries after an error.
	noJSErrorRefresh = 5
)

var (
	pathNoJS       = []byte("/nojs/")
	pathNoJSJoin   = []byte("join")
	pathNoJSStatus = []byte("status")
	contentForm    = []byte("application/x-www-form-urlencoded")
)

// The errors of the no-JS endpoints.
var (
	errCrossSite = newAPIError("cross_site", "this form must be sent from a page of this site")
	errFormType  = newAPIError("unsupported_media_type", "send application/x-www-form-urlencoded")
	errScripts   = newAPIError("scripts_required", "this event's bot defence needs JavaScript; join from the waiting-room page with JavaScript on")
)

// noJSMetrics count the no-JS endpoints' outcomes.
type noJSMetrics struct {
	joins *prometheus.CounterVec // event, result
}

func newNoJSMetrics(reg prometheus.Registerer) (*noJSMetrics, error) {
	m := &noJSMetrics{joins: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_nojs_joins_total",
		Help: "Joins by the no-JavaScript form, by event and result (joined, rejoined, shadowed, scheduled, sold_out, closed, " +
			"refused, scripts_required, cross_site, bad_form, rate_limited)."}, []string{"event", "result"})}
	if reg != nil {
		if err := reg.Register(m.joins); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// serveNoJS serves {prefix}/nojs/…; rest is the path after "/nojs/".
func (p *Proxy) serveNoJS(ctx *fasthttp.RequestCtx, rest []byte, rq *request) {
	switch {
	case bytes.Equal(rest, pathNoJSJoin):
		if !ctx.IsPost() {
			writeError(ctx, fasthttp.StatusMethodNotAllowed, errMethod)
			return
		}
		p.noJSJoin(ctx)
	case bytes.Equal(rest, pathNoJSStatus):
		if !readOnly(ctx) {
			return
		}
		p.noJSStatus(ctx, rq)
	default:
		writeError(ctx, fasthttp.StatusNotFound, errNotFound)
	}
}

// noJSJoin serves POST {prefix}/nojs/join: the room page's form.
func (p *Proxy) noJSJoin(ctx *fasthttp.RequestCtx) {
	var rq *request // the form's answers: the language comes from the cookie or the header
	count := func(ev, result string) { p.nm.joins.WithLabelValues(ev, result).Inc() }
	if !p.sameOrigin(ctx) {
		count("", "cross_site")
		writeError(ctx, fasthttp.StatusForbidden, errCrossSite)
		return
	}
	if !isMediaType(ctx.Request.Header.ContentType(), contentForm) {
		count("", "bad_form")
		writeError(ctx, fasthttp.StatusUnsupportedMediaType, errFormType)
		return
	}
	body, err := readSmallBody(ctx, maxNoJSForm)
	if err != nil {
		if errors.Is(err, errBodyTooLarge) {
			count("", "bad_form")
		}
		return
	}
	form, err := parseNoJSForm(body)
	if err != nil {
		count("", "bad_form")
		writeErrorMessage(ctx, fasthttp.StatusBadRequest, "bad_request", requestProblem(err, "the body is not a valid join form"))
		return
	}
	ev := p.events[form.Event]
	if ev == nil {
		writeError(ctx, fasthttp.StatusNotFound, errUnknownEvent)
		return
	}
	ip, now := p.trusted.ClientIP(ctx), p.requestTime(ctx)
	if !p.noJSAllowed(ctx, rq, ev, ip, now) {
		count(ev.ID, "rate_limited")
		return
	}
	if ev.Challenge != nil {
		count(ev.ID, "scripts_required")
		p.noJSFail(ctx, rq, ev, fasthttp.StatusForbidden, errScripts, &static.NoJSState{Kind: static.NoJSScripts})
		return
	}
	ret := p.noJSReturn(ev, []byte(form.Return))
	if form.Return == "" {
		ret = p.noJSReturn(ev, refererPath(ctx.Request.Header.Referer()))
	}
	account, ok := p.noJSAccount(ctx, ev, now)
	if !ok {
		count(ev.ID, "login_required")
		return
	}
	b := p.binder(ctx, ip)
	jr := admission.JoinRequest{Binding: b.hash().String(), Account: account}
	if t, ok := p.ticket(ctx, ev, &b, now); ok {
		jr.Existing = &t.Ticket
	}
	res, err := p.engine.Arrive(p.base, ev.ID, jr)
	if err != nil {
		count(ev.ID, "refused")
		ev.counts.joins("refused").Inc()
		p.noJSEngineFailed(ctx, rq, ev, err)
		return
	}
	if res.Issue && !p.setTicket(ctx, ev, res.Ticket, &b) {
		return
	}
	count(ev.ID, string(res.Outcome))
	ev.counts.joins(string(res.Outcome)).Inc()
	if res.Outcome == admission.OutcomeJoined {
		p.notify(Notice{Kind: "joined", Event: ev.ID, Visitor: res.Ticket.Visitor.String(), Lane: res.Ticket.Lane, Score: -1})
	}
	if res.Pass != nil {
		if !p.setPass(ctx, ev, res.Pass, &b) {
			return
		}
		redirect(ctx, ret)
		return
	}
	outcome := ""
	if !res.Placed {
		outcome = string(res.Status.Kind)
	}
	redirect(ctx, p.noJSStatusURL(ev, ret, outcome))
}

// noJSStatus serves GET {prefix}/nojs/status?event=E&return=R: the
// visitor's place as a page that reloads itself, or the redirect to R
// with the pass once admitted. outcome (scheduled, sold_out, closed) is
// what a join that found no place said; it only picks the texts of a
// visitor without a ticket.
func (p *Proxy) noJSStatus(ctx *fasthttp.RequestCtx, rq *request) {
	args := rq.query()
	ev := p.events[string(args.Peek("event"))]
	if ev == nil {
		writeError(ctx, fasthttp.StatusNotFound, errUnknownEvent)
		return
	}
	ip, now := p.trusted.ClientIP(ctx), p.requestTime(ctx)
	if !p.noJSAllowed(ctx, rq, ev, ip, now) {
		return
	}
	ret := p.noJSReturn(ev, args.Peek("return"))
	b := p.binder(ctx, ip)
	t, ok := p.ticket(ctx, ev, &b, now)
	if !ok {
		ev.counts.statusNoTicket.Inc()
		p.noJSNoTicket(ctx, rq, ev, string(args.Peek("outcome")), ret)
		return
	}
	res, err := p.engine.StatusAt(p.base, ev.ID, t.Ticket, p.engineTime(now))
	if err != nil {
		p.noJSEngineFailed(ctx, rq, ev, err)
		return
	}
	if res.Renewed && !p.setTicket(ctx, ev, res.Ticket, &b) {
		return
	}
	if res.Pass != nil {
		if !p.setPass(ctx, ev, res.Pass, &b) {
			return
		}
		redirect(ctx, returnPath(ev, ret))
		return
	}
	st := &res.Status
	s := static.NoJSState{Kind: static.NoJSKind(st.Kind), Reason: st.Reason, Position: st.Position,
		ETASeconds: int64(st.ETA.Seconds), ETALow: int64(st.ETA.Low), ETAHigh: int64(st.ETA.High), Return: string(ret)}
	switch ev.PositionDisplay {
	case PositionHidden:
		s.Position = -1
	case PositionApproximate:
		if s.Position > 0 {
			s.Position, s.Approximate = approximate(s.Position), true
		}
	}
	if st.Kind != admission.StatusClosed {
		s.Refresh = refreshSeconds(st.Refresh)
	}
	p.noJSPage(ctx, rq, ev, fasthttp.StatusOK, &s)
}

// noJSNoTicket answers a status page request without a (valid) ticket.
func (p *Proxy) noJSNoTicket(ctx *fasthttp.RequestCtx, rq *request, ev *event, outcome string, ret []byte) {
	s := static.NoJSState{Kind: static.NoJSJoin, Return: string(ret)}
	status := fasthttp.StatusUnauthorized
	switch {
	case ev.Challenge != nil:
		s.Kind, status = static.NoJSScripts, fasthttp.StatusForbidden
	case outcome == string(admission.StatusScheduled) && p.clock().Before(ev.cfg.QueueOpensAt):
		s.Kind, s.OpensAt, s.Refresh, status = static.NoJSKind(outcome), ev.cfg.QueueOpensAt, noJSScheduledRefresh, fasthttp.StatusOK
	case outcome == string(admission.StatusScheduled):
		s.Kind, status = static.NoJSOpen, fasthttp.StatusOK
	case outcome == string(admission.StatusSoldOut), outcome == string(admission.StatusClosed):
		s.Kind, status = static.NoJSKind(outcome), fasthttp.StatusOK
	}
	if wantsJSON(ctx) && status != fasthttp.StatusOK {
		writeError(ctx, status, errNoTicket)
		return
	}
	p.noJSPage(ctx, rq, ev, status, &s)
}

// noJSAllowed applies the API's rate limit; when it is hit, the answer
// is a page that tries again after Retry-After.
func (p *Proxy) noJSAllowed(ctx *fasthttp.RequestCtx, rq *request, ev *event, ip netip.Addr, now time.Time) bool {
	if p.allowAPI(ctx, ip, now) {
		return true
	}
	if !wantsJSON(ctx) {
		wait, _ := strconv.Atoi(string(ctx.Response.Header.Peek("Retry-After")))
		p.noJSPage(ctx, rq, ev, fasthttp.StatusTooManyRequests, &static.NoJSState{Kind: static.NoJSSlowDown, Refresh: max(wait, 1)})
	}
	return false
}

// noJSEngineFailed answers an engine error: engineFailed's answer, as a
// page that tries again when the error is passing.
func (p *Proxy) noJSEngineFailed(ctx *fasthttp.RequestCtx, rq *request, ev *event, err error) {
	p.engineFailed(ctx, ev, err)
	if ctx.Response.StatusCode() == fasthttp.StatusServiceUnavailable && !wantsJSON(ctx) {
		p.noJSPage(ctx, rq, ev, fasthttp.StatusServiceUnavailable, &static.NoJSState{Kind: static.NoJSError, Refresh: noJSErrorRefresh})
	}
}

// noJSFail answers a refusal: the page for browsers, e for scripts.
func (p *Proxy) noJSFail(ctx *fasthttp.RequestCtx, rq *request, ev *event, status int, e *apiError, s *static.NoJSState) {
	if wantsJSON(ctx) {
		writeError(ctx, status, e)
		return
	}
	p.noJSPage(ctx, rq, ev, status, s)
}

// noJSPage writes the no-JS page of ev for state s.
func (p *Proxy) noJSPage(ctx *fasthttp.RequestCtx, rq *request, ev *event, status int, s *static.NoJSState) {
	page := p.opts.Pages.NoJS(ev.ID, p.pageLanguage(ctx, rq), s)
	if page == nil {
		writeError(ctx, fasthttp.StatusNotFound, errUnknownEvent)
		return
	}
	h := &ctx.Response.Header
	setSecurityHeaders(h)
	h.SetContentType(static.ContentTypeHTML)
	setNoStore(h)
	h.SetBytesV("Content-Security-Policy", p.csp)
	ctx.SetStatusCode(status)
	ctx.Response.SetBody(page)
}

// redirect answers 303 See Other to a same-site path (already checked).
func redirect(ctx *fasthttp.RequestCtx, path []byte) {
	setSecurityHeaders(&ctx.Response.Header)
	setNoStore(&ctx.Response.Header)
	ctx.Response.Header.SetBytesV("Location", path)
	ctx.SetStatusCode(fasthttp.StatusSeeOther)
	ctx.Response.ResetBody()
}

// noJSStatusURL is the status page's path for ev, with the return path
// and, for a join that found no place, its outcome.
func (p *Proxy) noJSStatusURL(ev *event, ret []byte, outcome string) []byte {
	u := append([]byte(nil), p.prefix...)
	u = append(u, static.NoJSStatusPath...)
	u = append(u, "?event="...)
	u = append(u, url.QueryEscape(ev.ID)...)
	u = append(u, "&return="...)
	u = append(u, url.QueryEscape(string(ret))...)
	if outcome != "" {
		u = append(u, "&outcome="...)
		u = append(u, url.QueryEscape(outcome)...)
	}
	return u
}

// noJSReturn is where an admitted no-JS visitor goes: ret when it is a
// same-site path outside waitroom's prefix, else the event's landing
// path.
func (p *Proxy) noJSReturn(ev *event, ret []byte) []byte {
	path, ok := httpguard.SameSitePath(ret)
	if !ok || ascii.HasPrefixFold(path, p.prefix) {
		return ev.landing
	}
	return path
}

// refererPath returns the path and query of a Referer URL (nil when it
// has none); sameOrigin has checked that it names this site.
func refererPath(ref []byte) []byte {
	_, rest, ok := bytes.Cut(ref, []byte("://"))
	if !ok {
		return nil
	}
	i := bytes.IndexByte(rest, '/')
	if i < 0 {
		return nil
	}
	path := rest[i:]
	if j := bytes.IndexByte(path, '#'); j >= 0 {
		path = path[:j]
	}
	return path
}

// sameOrigin reports whether a form post comes from a page of this site,
// the defence against cross-site request forgery (with SameSite cookies):
// Sec-Fetch-Site, when sent, must be same-origin; the Origin header (or,
// without one, the Referer) must name the host the request is for, as
// the Host header or a trusted proxy's X-Forwarded-Host says. A post
// with neither header, or with Origin "null" (a sandboxed or privacy-
// stripped context), is refused.
func (p *Proxy) sameOrigin(ctx *fasthttp.RequestCtx) bool {
	h := &ctx.Request.Header
	if v := h.Peek("Sec-Fetch-Site"); v != nil && !bytes.Equal(v, []byte("same-origin")) {
		return false
	}
	src := h.Peek("Origin")
	if src == nil {
		src = h.Referer()
	}
	auth, ok := urlAuthority(src)
	if !ok {
		return false
	}
	return ascii.EqualFold(auth, h.Host()) || ascii.EqualFold(auth, p.trusted.Host(ctx))
}

// urlAuthority returns the host[:port] of an http or https URL.
func urlAuthority(u []byte) ([]byte, bool) {
	var rest []byte
	var ok bool
	if rest, ok = cutPrefixFold(u, "https://"); !ok {
		if rest, ok = cutPrefixFold(u, "http://"); !ok {
			return nil, false
		}
	}
	if i := bytes.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if len(rest) == 0 || bytes.IndexByte(rest, '@') >= 0 {
		return nil, false
	}
	return rest, true
}

func cutPrefixFold(s []byte, prefix string) ([]byte, bool) {
	if !ascii.HasPrefixFold(s, prefix) {
		return nil, false
	}
	return s[len(prefix):], true
}

// isMediaType reports whether a Content-Type is want (ASCII case
// ignored), with or without parameters.
func isMediaType(ct, want []byte) bool {
	if !ascii.HasPrefixFold(ct, want) {
		return false
	}
	rest := ct[len(want):]
	return len(rest) == 0 || rest[0] == ';' || rest[0] == ' ' || rest[0] == '\t'
}

// refreshSeconds is the reload delay of the status page for the engine's
// suggested poll interval: whole seconds, at least 1, with up to a quarter
// more at random so that pages loaded together do not reload together.
func refreshSeconds(d time.Duration) int {
	s := max(1, int((d+time.Second-1)/time.Second))
	return min(s+rand.IntN(s/4+1), static.MaxNoJSRefresh)
}

// noJSForm is the body of POST {prefix}/nojs/join.
type noJSForm struct {
	Event  string
	Return string
}

// parseNoJSForm reads the join form strictly: name=value pairs joined by
// "&", each name (event, return) at most once, percent-escapes well
// formed, "+" a space, every value valid UTF-8 without control
// characters; event is required. Its errors are requestError values,
// safe to show.
func parseNoJSForm(body []byte) (noJSForm, error) {
	var f noJSForm
	if len(body) > maxNoJSForm {
		return f, requestError("the form is too large")
	}
	seen := [2]bool{}
	for len(body) > 0 {
		var pair []byte
		if i := bytes.IndexByte(body, '&'); i >= 0 {
			pair, body = body[:i], body[i+1:]
			if len(body) == 0 {
				return noJSForm{}, requestError("the form ends with &")
			}
		} else {
			pair, body = body, nil
		}
		rawName, rawValue, ok := bytes.Cut(pair, []byte("="))
		if !ok {
			return noJSForm{}, requestError("every form field needs a =")
		}
		name, ok := formUnescape(rawName)
		if !ok {
			return noJSForm{}, requestError("a form field's name is malformed")
		}
		value, ok := formUnescape(rawValue)
		if !ok {
			return noJSForm{}, requestError("the form field " + strconv.Quote(safeName(name)) + " is malformed")
		}
		var k int
		switch name {
		case "event":
			k, f.Event = 0, value
		case "return":
			k, f.Return = 1, value
			if len(value) > httpguard.MaxReturnPath {
				return noJSForm{}, requestError("the return path is too long")
			}
		default:
			return noJSForm{}, requestError("unknown form field " + strconv.Quote(safeName(name)))
		}
		if seen[k] {
			return noJSForm{}, requestError("the form field " + strconv.Quote(name) + " is given twice")
		}
		seen[k] = true
	}
	if f.Event == "" {
		return noJSForm{}, requestError(`the form field "event" is required`)
	}
	return f, nil
}

// safeName shortens a field name for an error message.
func safeName(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

// formUnescape decodes one application/x-www-form-urlencoded name or
// value: "+" is a space, %XX a byte; raw bytes must be printable ASCII
// other than ";", and the result valid UTF-8 without control characters.
func formUnescape(s []byte) (string, bool) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+':
			c = ' '
		case c == '%':
			if i+2 >= len(s) {
				return "", false
			}
			hi, ok1 := ascii.Unhex(s[i+1])
			lo, ok2 := ascii.Unhex(s[i+2])
			if !ok1 || !ok2 {
				return "", false
			}
			c = hi<<4 | lo
			i += 2
		case c <= ' ' || c >= 0x7f || c == ';':
			// Browsers escape ";", and net/url refuses it raw.
			return "", false
		}
		if c < ' ' || c == 0x7f {
			return "", false
		}
		out = append(out, c)
	}
	if !utf8.Valid(out) {
		return "", false
	}
	for _, r := range string(out) {
		if r >= 0x80 && r < 0xa0 || r == utf8.RuneError {
			return "", false
		}
	}
	return string(out), true
}
