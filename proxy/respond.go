package proxy

import (
	"bytes"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/internal/jsonenc"
	"github.com/waitroom/waitroom/internal/jsonstrict"
	"github.com/waitroom/waitroom/static"
)

// apiError is an error a client may see: a stable code and a message for
// people. Its JSON is built once.
type apiError struct {
	code, message string
	body          []byte
}

func newAPIError(code, message string) *apiError {
	return &apiError{code: code, message: message, body: errorBody(code, message)}
}

func errorBody(code, message string) []byte {
	b := append([]byte(nil), `{"error":`...)
	b = jsonenc.String(b, code)
	b = append(b, `,"message":`...)
	b = jsonenc.String(b, message)
	return append(b, '}')
}

// The errors of the waiting-room endpoints.
var (
	errBadRequest    = newAPIError("bad_request", "the request is malformed")
	errBadTarget     = newAPIError("bad_request", "the request path is malformed or ambiguous")
	errBadOriginal   = newAPIError("bad_original_uri", "the original request's URI is missing, malformed or ambiguous")
	errNotFound      = newAPIError("not_found", "there is nothing at this path")
	errMethod        = newAPIError("method_not_allowed", "this method is not allowed here")
	errUnknownEvent  = newAPIError("unknown_event", "there is no such event")
	errUnknownLane   = newAPIError("unknown_lane", "this event has no such lane")
	errNoTicket      = newAPIError("no_ticket", "join the queue first")
	errNotAllowed    = newAPIError("not_allowed", "this code or account does not admit to this lane")
	errInviteUsed    = newAPIError("invite_used", "this invite code has already been used")
	errBadCredential = newAPIError("bad_credential", "the invite code or account proof is malformed")
	errNoTranche     = newAPIError("no_such_tranche", "this tranche has not opened yet")
	errRateLimited   = newAPIError("rate_limited", "too many requests; slow down")
	errMediaType     = newAPIError("unsupported_media_type", "send application/json")
	errTooLarge      = newAPIError("too_large", "the request body is too large")
	errUnavailable   = newAPIError("unavailable", "the waiting room is briefly unavailable; try again")
	errPassRequired  = newAPIError("pass_required", "this page needs a pass from the waiting room")
	errBusy          = newAPIError("busy", "the site is very busy right now; try again in a few seconds")
	errMaintenance   = newAPIError("maintenance", "the site is down for maintenance; nobody in the queue loses their place; try again in a minute")
	errTimeout       = newAPIError("origin_timeout", "the site took too long to answer")
	errSlowRequest   = newAPIError("request_timeout", "the request arrived too slowly")
	errBadGateway    = newAPIError("origin_unavailable", "the site cannot be reached right now")
	errNoOrigin      = newAPIError("no_origin", "no origin serves this path")
	errInternal      = newAPIError("internal", "something went wrong on our side")
	errHeaders       = newAPIError("headers_too_large", "the request headers are too large")
	errAuditLimit    = newAPIError("bad_request", "limit must be a number from 1 to "+strconv.Itoa(MaxAuditPage))
)

var contentJSON = []byte("application/json")

// ReferrerPolicy is the Referrer-Policy of every answer waitroom writes
// itself: other sites see at most its origin, never a path or query
// (which may hold a return path), and plain-HTTP requests from an HTTPS
// page carry none. Not same-origin: CAPTCHA providers check the origin
// their widget is embedded in by the Referer.
const ReferrerPolicy = "strict-origin-when-cross-origin"

var (
	headerCacheControl   = []byte(fasthttp.HeaderCacheControl)
	valueNoStore         = []byte("no-store")
	headerNoSniff        = []byte("X-Content-Type-Options")
	valueNoSniff         = []byte("nosniff")
	headerReferrerPolicy = []byte("Referrer-Policy")
	valueReferrerPolicy  = []byte(ReferrerPolicy)
)

// setSecurityHeaders marks an answer of waitroom's own (page, API answer,
// asset, error) X-Content-Type-Options: nosniff and with ReferrerPolicy.
// It does not allocate.
func setSecurityHeaders(h *fasthttp.ResponseHeader) {
	h.SetCanonical(headerNoSniff, valueNoSniff)
	h.SetCanonical(headerReferrerPolicy, valueReferrerPolicy)
}

// setNoStore marks an answer Cache-Control: no-store, through the
// header's canonical name (Set would normalise it on every call).
func setNoStore(h *fasthttp.ResponseHeader) {
	h.SetCanonical(headerCacheControl, valueNoStore)
}

func writeError(ctx *fasthttp.RequestCtx, status int, e *apiError) {
	setSecurityHeaders(&ctx.Response.Header)
	ctx.Response.Header.SetContentTypeBytes(contentJSON)
	setNoStore(&ctx.Response.Header)
	ctx.SetStatusCode(status)
	ctx.Response.SetBodyRaw(e.body)
}

// writeErrorMessage writes an error whose message is built per request.
// The message must never carry internal error text.
func writeErrorMessage(ctx *fasthttp.RequestCtx, status int, code, message string) {
	setSecurityHeaders(&ctx.Response.Header)
	ctx.Response.Header.SetContentTypeBytes(contentJSON)
	setNoStore(&ctx.Response.Header)
	ctx.SetStatusCode(status)
	ctx.SetBody(errorBody(code, message))
}

// writePage writes one of the pre-rendered pages, gzipped when the client
// takes gzip, with its Content-Security-Policy.
func (p *Proxy) writePage(ctx *fasthttp.RequestCtx, status int, csp, page, gz []byte) {
	h := &ctx.Response.Header
	setSecurityHeaders(h)
	h.SetContentType(static.ContentTypeHTML)
	setNoStore(h)
	h.SetBytesV("Content-Security-Policy", csp)
	h.Set("Vary", "Accept-Encoding")
	ctx.SetStatusCode(status)
	if gz != nil && acceptsGzip(ctx.Request.Header.Peek("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		ctx.Response.SetBodyRaw(gz)
		return
	}
	ctx.Response.SetBodyRaw(page)
}

// acceptsGzip reads Accept-Encoding for gzip not refused with q=0.
func acceptsGzip(ae []byte) bool {
	for len(ae) > 0 {
		var item []byte
		if i := bytes.IndexByte(ae, ','); i >= 0 {
			item, ae = ae[:i], ae[i+1:]
		} else {
			item, ae = ae, nil
		}
		item = bytes.TrimSpace(item)
		name, params, _ := bytes.Cut(item, []byte(";"))
		name = bytes.TrimSpace(name)
		if !bytes.EqualFold(name, []byte("gzip")) && !bytes.Equal(name, []byte("*")) {
			continue
		}
		params = bytes.TrimSpace(params)
		if q, ok := bytes.CutPrefix(params, []byte("q=")); ok {
			q = bytes.TrimSpace(q)
			if len(q) > 0 && q[0] == '0' && len(bytes.Trim(q[1:], ".0")) == 0 {
				return false // q=0, q=0.0: refused
			}
		}
		return true
	}
	return false
}

// wantsJSON tells a script (Accept: application/json) from a browser
// navigating (Accept: text/html,…).
func wantsJSON(ctx *fasthttp.RequestCtx) bool {
	a := ctx.Request.Header.Peek("Accept")
	return bytes.Contains(a, contentJSON) && !bytes.Contains(a, []byte("text/html"))
}

func constantTimeEqual(a, b []byte) bool {
	return len(a) == len(b) && subtle.ConstantTimeCompare(a, b) == 1
}

// setCookie sets one of waitroom's cookies: HttpOnly, Path=/, SameSite,
// Secure as configured, expiring with its token.
func (p *Proxy) setCookie(ctx *fasthttp.RequestCtx, name []byte, value string, expires time.Time) {
	c := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(c)
	c.SetKeyBytes(name)
	c.SetValue(value)
	c.SetPath("/")
	c.SetHTTPOnly(true)
	c.SetExpire(expires)
	if p.opts.Cookies.Domain != "" {
		c.SetDomain(p.opts.Cookies.Domain)
	}
	if p.opts.Cookies.Strict {
		c.SetSameSite(fasthttp.CookieSameSiteStrictMode)
	} else {
		c.SetSameSite(fasthttp.CookieSameSiteLaxMode)
	}
	switch p.opts.Cookies.Secure {
	case SecureAlways:
		c.SetSecure(true)
	case SecureAuto:
		c.SetSecure(p.trusted.Proto(ctx) == "https")
	}
	ctx.Response.Header.SetCookie(c)
}

// writeStatus writes the status JSON. t is the visitor's ticket (nil when
// they have none); ret is where they asked to go once admitted. The
// caller has set the security headers (serveOwn does for every endpoint
// under the prefix): setting them twice costs a status poll two header
// scans. The JSON is built straight in the response's own body buffer
// (SwapBody hands it over and takes it back), so it is not copied once
// more on its way out.
func (p *Proxy) writeStatus(ctx *fasthttp.RequestCtx, ev *event, st *admission.Status, t *admission.Ticket, ret []byte) {
	ctx.Response.Header.SetContentTypeBytes(contentJSON)
	setNoStore(&ctx.Response.Header)
	ctx.SetStatusCode(fasthttp.StatusOK)
	b := ctx.Response.SwapBody(nil)
	ctx.Response.SwapBody(p.appendStatus(b[:0], ev, st, t, ret))
}

// appendStatus appends the status JSON: the contract of
// GET {prefix}/api/status.
func (p *Proxy) appendStatus(b []byte, ev *event, st *admission.Status, t *admission.Ticket, ret []byte) []byte {
	b = append(b, `{"event":`...)
	b = jsonenc.String(b, ev.ID)
	b = append(b, `,"status":"`...)
	b = append(b, st.Kind...)
	b = append(b, `","position":`...)
	switch {
	case st.Position < 0 || ev.PositionDisplay == PositionHidden:
		b = append(b, "null"...)
	case ev.PositionDisplay == PositionApproximate:
		b = strconv.AppendInt(b, approximate(st.Position), 10)
	default:
		b = strconv.AppendInt(b, st.Position, 10)
	}
	b = append(b, `,"position_display":"`...)
	b = append(b, ev.PositionDisplay...)
	b = append(b, `","eta_seconds":`...)
	b = strconv.AppendInt(b, int64(st.ETA.Seconds), 10)
	b = append(b, `,"eta_low":`...)
	b = strconv.AppendInt(b, int64(st.ETA.Low), 10)
	b = append(b, `,"eta_high":`...)
	b = strconv.AppendInt(b, int64(st.ETA.High), 10)
	b = append(b, `,"refresh_seconds":`...)
	b = appendSeconds(b, st.Refresh)
	b = append(b, `,"opens_at":`...)
	b = append(b, ev.opensAt...)
	b = append(b, `,"on_sale_at":`...)
	b = append(b, ev.onSaleAt...)
	if !st.DrawAt.IsZero() {
		b = append(b, `,"draw_at":`...)
		b = appendTime(b, st.DrawAt)
	}
	b = append(b, `,"redirect":`...)
	if st.Kind == admission.StatusAdmitted {
		b = append(b, '"')
		b = appendJSONPath(b, returnPath(ev, ret))
		b = append(b, '"')
	} else {
		b = append(b, `null`...)
	}
	if t != nil {
		b = append(b, `,"lane":`...)
		b = jsonenc.String(b, t.Lane)
		b = append(b, `,"tranche":`...)
		b = strconv.AppendInt(b, int64(t.Tranche), 10)
		b = append(b, `,"audit":`...)
		b = p.appendDrawPath(b, "/api/draws/", ev, t)
		b = p.appendDrawFields(b, ev, t)
	}
	if st.Reason != "" {
		b = append(b, `,"reason":`...)
		b = jsonenc.String(b, st.Reason)
	}
	b = append(b, `,"notice":`...)
	b = append(b, ev.noticeFragment()...)
	return append(b, '}')
}

// appendDrawFields appends the status fields for the draw page: its path,
// how long a tranche after the on-sale lasts, and the visitor's own id,
// which only its owner sees (the answer needs their ticket) and which
// lets their browser find their entry in the published draw.
func (p *Proxy) appendDrawFields(b []byte, ev *event, t *admission.Ticket) []byte {
	b = append(b, `,"draw_page":`...)
	b = p.appendDrawPath(b, "/draw/", ev, t)
	b = append(b, `,"tranche_seconds":`...)
	b = append(b, ev.trancheSeconds...)
	b = append(b, `,"visitor":"`...)
	b = hex.AppendEncode(b, t.Visitor[:])
	return append(b, '"')
}

// appendDrawPath appends, as a JSON string, the path of t's draw under
// the prefix and kind: "/_wr/api/draws/show/3?lane=presale".
func (p *Proxy) appendDrawPath(b []byte, kind string, ev *event, t *admission.Ticket) []byte {
	b = append(b, '"')
	b = appendJSONPath(b, p.prefix)
	b = append(b, kind...)
	b = append(b, ev.ID...)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(t.Tranche), 10)
	if t.Lane != admission.PublicLane {
		b = append(b, "?lane="...)
		b = append(b, t.Lane...)
	}
	return append(b, '"')
}

// appendSeconds appends d in seconds as a JSON number, as
// strconv.AppendFloat(b, d.Seconds(), 'f', -1, 64) writes it; whole
// seconds, what status answers nearly always carry, take the integer path.
func appendSeconds(b []byte, d time.Duration) []byte {
	if d%time.Second == 0 {
		return strconv.AppendInt(b, int64(d/time.Second), 10)
	}
	return strconv.AppendFloat(b, d.Seconds(), 'f', -1, 64)
}

// appendTime appends t as a JSON string in RFC 3339, UTC, to the second.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, time.RFC3339)
	return append(b, '"')
}

// appendJSONPath appends a same-site path inside a JSON string. Such a
// path holds no control characters; quotes and backslashes are escaped,
// and <, > and & as encoding/json does.
func appendJSONPath(b, path []byte) []byte {
	for _, c := range path {
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '<', '>', '&':
			b = append(b, `\u00`...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return b
}

// approximate rounds a position so it informs without inviting games:
// exact up to 10, then to 10s, 50s, 100s, and two significant digits
// beyond 10,000 ("about 48,000 ahead of you").
func approximate(n int64) int64 {
	var step int64
	switch {
	case n <= 10:
		return n
	case n < 100:
		step = 10
	case n < 1000:
		step = 50
	case n < 10000:
		step = 100
	default:
		step = 1
		for m := n; m >= 100; m /= 10 {
			step *= 10
		}
	}
	return (n + step/2) / step * step
}

// appendAudit appends a draw audit's JSON.
func appendAudit(b []byte, a *admission.DrawAudit, limit int) []byte {
	b = append(b, `{"event":`...)
	b = jsonenc.String(b, a.Event)
	b = append(b, `,"lane":`...)
	b = jsonenc.String(b, a.Lane)
	b = append(b, `,"tranche":`...)
	b = strconv.AppendInt(b, int64(a.Tranche), 10)
	b = append(b, `,"commitment":"`...)
	b = hex.AppendEncode(b, a.Commitment[:])
	b = append(b, `","drawn":`...)
	b = strconv.AppendBool(b, a.Drawn)
	b = appendAuditTimes(b, a)
	if a.Drawn {
		b = append(b, `,"seed":"`...)
		b = hex.AppendEncode(b, a.Seed)
		b = append(b, `","first":`...)
		b = strconv.AppendUint(b, a.First, 10)
		b = append(b, `,"count":`...)
		b = strconv.AppendUint(b, a.Count, 10)
		b = append(b, `,"offset":`...)
		b = strconv.AppendInt(b, int64(a.Offset), 10)
		b = append(b, `,"limit":`...)
		b = strconv.AppendInt(b, int64(limit), 10)
		b = append(b, `,"hashes":[`...)
		for i, h := range a.Hashes {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = hex.AppendEncode(b, h[:])
			b = append(b, '"')
		}
		b = append(b, `],"next":`...)
		// next is the offset of the following page, null after the last.
		if next := uint64(max(a.Offset, 0) + len(a.Hashes)); len(a.Hashes) > 0 && next < a.Count {
			b = strconv.AppendUint(b, next, 10)
		} else {
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}

// appendAuditTimes appends when a tranche opened (null for the
// pre-queue), closes, since when its commitment is published, and when
// it was drawn (null until then).
func appendAuditTimes(b []byte, a *admission.DrawAudit) []byte {
	for _, f := range []struct {
		name string
		t    time.Time
	}{{`,"opens_at":`, a.Opens}, {`,"closes_at":`, a.Closes}, {`,"committed_from":`, a.CommittedFrom}, {`,"drawn_at":`, a.DrawnAt}} {
		b = append(b, f.name...)
		if f.t.IsZero() {
			b = append(b, "null"...)
		} else {
			b = appendTime(b, f.t)
		}
	}
	return b
}

// joinRequest is the body of POST {prefix}/api/join: its fields, as the
// page (static/web/room.js) and scripts send them.
type joinRequest struct {
	Event        string
	Return       string
	Lane         string
	Invite       string
	Account      string
	AccountProof string
	PoW          *powSolution
	Captcha      string
	// Client is the page's report of the browser it runs in, for the
	// client signal; nil when the body has none.
	Client *challenge.ClientReport
}

// requestError is a problem with a request whose text this package wrote
// for the client; an error of Go or a library is never one.
type requestError string

func (e requestError) Error() string { return string(e) }

// requestProblem returns the message for err to show the client: its text
// when err is a requestError, else fallback (and the real reason is the
// caller's to log).
func requestProblem(err error, fallback string) string {
	var re requestError
	if errors.As(err, &re) {
		return string(re)
	}
	return fallback
}

// parseJoin reads a join body with the strict decoder: one JSON object of
// known fields, each once, nothing after it; null is read as absent. Its
// errors are requestError values, safe to show (they name the problem,
// not our internals).
func parseJoin(body []byte) (joinRequest, error) {
	var r joinRequest
	err := jsonstrict.Decode(body, func(d *jsonstrict.Reader, name []byte) (err error) {
		if d.Null() {
			return nil
		}
		switch string(name) {
		case "event":
			r.Event, err = d.String("event")
		case "return":
			r.Return, err = d.String("return")
		case "lane":
			r.Lane, err = d.String("lane")
		case "invite":
			r.Invite, err = d.String("invite")
		case "account":
			r.Account, err = d.String("account")
		case "account_proof":
			r.AccountProof, err = d.String("account_proof")
		case "captcha":
			r.Captcha, err = d.String("captcha")
		case "pow":
			r.PoW = &powSolution{}
			err = d.Object("pow", r.PoW.field)
		case "client":
			r.Client = &challenge.ClientReport{}
			err = d.Object("client", clientField(r.Client))
		default:
			err = jsonstrict.UnknownField("", name)
		}
		return err
	})
	if err != nil {
		return joinRequest{}, joinProblem(err)
	}
	if r.Event == "" {
		return joinRequest{}, requestError(`"event" is required`)
	}
	return r, nil
}

// Bounds of the join body's "client" numbers.
const (
	maxSolveMillis = 24 * 60 * 60 * 1000
	maxHashes      = 1 << 53
)

// clientField reads the fields of the join body's "client" into c: the
// page's report of the browser (static/web/room.js), strictly (unknown
// fields and wrong types refused) and bounded (challenge.MaxClientNames
// names of at most challenge.MaxClientNameLength printable bytes).
func clientField(c *challenge.ClientReport) func(d *jsonstrict.Reader, name []byte) error {
	return func(d *jsonstrict.Reader, name []byte) (err error) {
		if d.Null() {
			return nil
		}
		switch string(name) {
		case "webdriver":
			var b bool
			b, err = d.Bool("client.webdriver")
			c.Webdriver = &b
		case "automation":
			c.Automation, err = clientNames(d, "client.automation")
		case "missing":
			c.Missing, err = clientNames(d, "client.missing")
		case "solve_ms":
			c.SolveMillis, err = d.Uint("client.solve_ms", maxSolveMillis)
		case "hashes":
			c.Hashes, err = d.Uint("client.hashes", maxHashes)
		default:
			err = jsonstrict.UnknownField("client", name)
		}
		return err
	}
}

// clientNames reads a bounded list of names.
func clientNames(d *jsonstrict.Reader, path string) ([]string, error) {
	out := []string{}
	err := d.Array(path, func(d *jsonstrict.Reader, i int) error {
		if i >= challenge.MaxClientNames {
			return requestError(fmt.Sprintf("%s has more than %d names", path, challenge.MaxClientNames))
		}
		s, err := d.String(path)
		if err != nil {
			return err
		}
		for j := 0; j < len(s); j++ {
			if s[j] < 0x20 || s[j] > 0x7e {
				return requestError(path + " names must be printable ASCII")
			}
		}
		if s == "" || len(s) > challenge.MaxClientNameLength {
			return requestError(fmt.Sprintf("%s names must be 1 to %d bytes", path, challenge.MaxClientNameLength))
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

// joinProblem turns a decoding error into words for the client: the
// strict decoder's own (they name the field, never the decoder's
// internals), or a fixed sentence for anything else.
func joinProblem(err error) error {
	var je *jsonstrict.Error
	if errors.As(err, &je) {
		return requestError(je.Error())
	}
	var re requestError
	if errors.As(err, &re) {
		return re
	}
	return requestError("the body is not a valid join request")
}

var errBodyTooLarge = errors.New("proxy: request body too large")

// readSmallBody reads a small request body with readBody, or answers
// why it cannot: 413 beyond limit, else 400 with the connection closed
// (the stream broke, so the next request's start is unknown). The error
// tells the caller which.
func readSmallBody(ctx *fasthttp.RequestCtx, limit int) ([]byte, error) {
	body, err := readBody(ctx, limit)
	switch {
	case errors.Is(err, errBodyTooLarge):
		writeError(ctx, fasthttp.StatusRequestEntityTooLarge, errTooLarge)
	case err != nil:
		ctx.SetConnectionClose()
		writeError(ctx, fasthttp.StatusBadRequest, errBadRequest)
	}
	return body, err
}

// readBody reads a small request body (streamed or not) up to limit.
func readBody(ctx *fasthttp.RequestCtx, limit int) ([]byte, error) {
	if cl := ctx.Request.Header.ContentLength(); cl > limit {
		return nil, errBodyTooLarge
	}
	s := ctx.RequestBodyStream()
	if s == nil {
		b := ctx.PostBody()
		if len(b) > limit {
			return nil, errBodyTooLarge
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(s, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, errBodyTooLarge
	}
	return b, nil
}
