package upstream

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/internal/ascii"
	"github.com/waitroom/waitroom/proxy/httpguard"
)

// Headers waitroom sets for the origin, or reads from it. A client can
// never send the first two: every request header starting with
// "X-Waitroom-" is removed before waitroom sets its own.
const (
	HeaderVisitor  = "X-Waitroom-Visitor"
	HeaderEvent    = "X-Waitroom-Event"
	HeaderComplete = "X-Waitroom-Complete"
)

// Errors of Outcome.Err; test with errors.Is (they may wrap the cause,
// for logs only: never show it to a client).
var (
	// ErrShed: the origin is at its in-flight limit, or every connection
	// to the chosen address is busy. Answer 503 with Retry-After.
	ErrShed = errors.New("upstream: origin at its in-flight limit")
	// ErrUnavailable: no healthy address, or none accepted a connection.
	// Answer 502.
	ErrUnavailable = errors.New("upstream: origin unavailable")
	// ErrUpstream: the origin closed the connection without answering,
	// or answered with something that is not HTTP/1.1. Answer 502.
	ErrUpstream = errors.New("upstream: bad response from origin")
	// ErrTimeout: the origin did not take the request or answer within
	// WriteTimeout / ReadTimeout. Answer 504.
	ErrTimeout = errors.New("upstream: origin timed out")
	// ErrClient: the client's request cannot be forwarded (its streamed
	// body broke, such as an invalid chunk, or its target or headers are
	// malformed). Answer 400 and close the connection.
	ErrClient = errors.New("upstream: client request cannot be forwarded")
	// ErrBodyTimeout: the client's streamed body stalled: its connection's
	// read deadline passed (the front server's body timeout or minimum
	// rate). Answer 408 and close the connection.
	ErrBodyTimeout = errors.New("upstream: request body too slow")
	// ErrReserved wraps ErrShed when a request without Forward.Admitted is
	// refused because the rest of the origin's in-flight limit is
	// reserved for admitted visitors (Config.ReservedAdmitted).
	ErrReserved = errors.New("upstream: in-flight capacity reserved for admitted visitors")
	// ErrTooLarge: the request body is longer than
	// Config.MaxRequestBodySize (declared, or found while streaming a
	// chunked body). Answer 413 and close the connection.
	ErrTooLarge = errors.New("upstream: request body too large")
)

// Classify maps an Outcome error to the status and error code to answer
// with: ErrShed 503 "overloaded", ErrClient 400 "bad_request",
// ErrBodyTimeout 408 "request_timeout", ErrTooLarge
// 413 "payload_too_large", ErrTimeout
// 504 "origin_timeout", ErrUnavailable 502 "origin_unavailable", anything
// else 502 "bad_gateway".
func Classify(err error) (status int, code string) {
	switch {
	case errors.Is(err, ErrShed):
		return fasthttp.StatusServiceUnavailable, "overloaded"
	case errors.Is(err, ErrClient):
		return fasthttp.StatusBadRequest, "bad_request"
	case errors.Is(err, ErrBodyTimeout):
		return fasthttp.StatusRequestTimeout, "request_timeout"
	case errors.Is(err, ErrTooLarge):
		return fasthttp.StatusRequestEntityTooLarge, "payload_too_large"
	case errors.Is(err, ErrTimeout):
		return fasthttp.StatusGatewayTimeout, "origin_timeout"
	case errors.Is(err, ErrUnavailable):
		return fasthttp.StatusBadGateway, "origin_unavailable"
	}
	return fasthttp.StatusBadGateway, "bad_gateway"
}

// Forward is what the proxy core knows about a request beyond the request
// itself. Forward keeps no reference to it after returning.
type Forward struct {
	// Start is when the request arrived, as time.Now read it, so that
	// Forward need not read the clock again; zero: Forward reads it.
	Start time.Time
	// Target is the request-target the origin receives, in origin-form:
	// the caller's normalised path and query (proxy/target), the very
	// path it routed on. Forward never reads the request's own
	// request-target. Empty refuses the request (ErrClient).
	Target []byte
	// ClientIP is the client's address (httpguard.Trusted.ClientIP).
	ClientIP netip.Addr
	// Proto is the scheme the client used, "http" or "https"
	// (httpguard.Trusted.Proto).
	Proto string
	// Host is the host the client asked for (httpguard.Trusted.Host),
	// sent as X-Forwarded-Host; the request's Host header when empty.
	Host []byte
	// KeepForwarded is true when the peer is a trusted proxy
	// (httpguard.Trusted.Trusts): its X-Forwarded-For is kept and the
	// peer's address appended, and its other X-Forwarded-* headers
	// (Port, Prefix, ...) are kept. When false, X-Forwarded-For is set to
	// ClientIP and the other X-Forwarded-* headers are removed.
	KeepForwarded bool
	// OwnXFF sets X-Forwarded-For to ClientIP alone even from a trusted
	// peer: when the client address was read from another header
	// (Forwarded, X-Real-IP, ...), the X-Forwarded-For the peer passed on
	// is not what vouched for it, and may be the client's own.
	OwnXFF bool
	// ClientIPHeaders are more request header names (matched ignoring
	// case) that carry the client address, such as the CF-Connecting-IP
	// the client address was read from: the request's copies are never
	// forwarded, and each is sent set to ClientIP, so an origin reading it
	// sees the address waitroom decided on.
	ClientIPHeaders [][]byte
	// Visitor and Event, when not empty, are sent as X-Waitroom-Visitor
	// and X-Waitroom-Event.
	Visitor, Event []byte
	// StripCookies are cookie names (matched ignoring case) removed from
	// the Cookie header: waitroom's ticket and pass cookies, unless
	// configured to forward them.
	StripCookies [][]byte
	// StripHeaders are more request header names (matched ignoring case)
	// not to forward, such as the bypass secret header.
	StripHeaders [][]byte
	// Admitted is true for a request with a valid pass (or a bypass): it
	// may use the share of MaxInFlight reserved for admitted visitors.
	Admitted bool
	// Body, when set, is read instead of the request's streamed body: a
	// reader that enforces the front server's minimum body rate. Its
	// timeout errors are ErrBodyTimeout.
	Body io.Reader
}

// Outcome is what became of a forwarded request.
type Outcome struct {
	// Status is the status sent to the client (the origin's), 0 when
	// nothing was sent.
	Status int
	// Elapsed is the time until the origin's response headers (or until
	// the failure).
	Elapsed time.Duration
	// Err is nil, or one of ErrShed, ErrTimeout, ErrUnavailable,
	// ErrUpstream, ErrClient, ErrBodyTimeout and ErrTooLarge (possibly wrapping the
	// cause). When it is
	// not nil, Forward has set no status, header or body: the caller
	// answers (see Classify). It has set Connection: close when the
	// request had a body, since the body may be left unread.
	Err error
	// Complete is true when the origin answered with
	// "X-Waitroom-Complete: 1" (which is removed from the response).
	Complete bool
}

// Forward sends the request in ctx to the origin and sets up ctx.Response
// with the origin's answer: its status and headers (hop-by-hop ones
// removed), and its body — read whole when small, else streamed to the
// client after the handler returns. A WebSocket upgrade is passed through
// by hijacking the connection. See the package documentation for every
// header rule.
//
// Forward replaces ctx.Response: headers the caller wants to add (a
// refreshed cookie) are added after Forward returns with a nil Err. The
// request's headers are taken as received (RawHeaders) and filtered;
// changes the caller made to ctx.Request.Header are not seen, so use f.
// It allocates nothing in steady state.
func (o *Origin) Forward(ctx *fasthttp.RequestCtx, f *Forward) Outcome {
	start := f.Start
	if start.IsZero() {
		start = time.Now()
	}
	var out Outcome
	x := exchangePool.Get().(*exchange)
	x.anon = !f.Admitted
	if err := x.prepare(ctx, f, o.cfg.MaxRequestBodySize); err != nil {
		out.Err = err
	} else if err := x.awaitBody(); err != nil {
		// A body that never starts holds no origin connection and no
		// in-flight slot.
		out.Err = err
	} else if o.healthy.Load() == 0 {
		out.Err = ErrUnavailable
	} else if err := o.enter(x.anon); err != nil {
		out.Err = err
	} else {
		var handed bool
		out, handed = o.forward(ctx, f, x, start)
		if !handed {
			o.leave(x.anon)
		}
	}
	if out.Err != nil {
		out.Status, out.Complete = 0, false
		if out.Elapsed == 0 {
			out.Elapsed = time.Since(start)
		}
		if !x.noBody() {
			ctx.SetConnectionClose()
		}
	}
	x.reset()
	exchangePool.Put(x)
	return out
}

// forward runs the attempts. handed reports that a streamed body or a
// WebSocket now owns the in-flight count (and the connection).
func (o *Origin) forward(ctx *fasthttp.RequestCtx, f *Forward, x *exchange, start time.Time) (out Outcome, handed bool) {
	var avoid *member
	var lastErr error
	dialFailures, sendFailures := 0, 0
	now := start
	for ; ; now = time.Now() {
		m := o.pick(now.UnixNano(), avoid)
		if m == nil {
			if lastErr != nil {
				return Outcome{Err: fmt.Errorf("%w: %w", ErrUnavailable, lastErr)}, false
			}
			return Outcome{Err: ErrUnavailable}, false
		}
		m.pending.Add(1)
		r := o.attempt(ctx, f, x, m, start, now)
		switch r.state {
		case attemptDone:
			return r.out, r.handed
		case attemptNoConn:
			m.coolUntil.Store(time.Now().Add(coolDown).UnixNano())
			o.log.Debug("upstream: connect failed", "addr", m.addr, "err", r.err)
			dialFailures++
			lastErr = r.err
			if dialFailures >= len(o.members)+o.cfg.Retries {
				return Outcome{Err: fmt.Errorf("%w: %w", ErrUnavailable, r.err)}, false
			}
		case attemptNoAnswer:
			o.log.Debug("upstream: no answer", "addr", m.addr, "err", r.err)
			sendFailures++
			lastErr = r.err
			if !x.retriable || sendFailures > o.cfg.Retries {
				return Outcome{Err: fmt.Errorf("%w: %w", ErrUpstream, r.err)}, false
			}
		}
		avoid = m
	}
}

type attemptState uint8

const (
	attemptDone     attemptState = iota // out is final
	attemptNoConn                       // no connection: nothing reached the origin
	attemptNoAnswer                     // sent, and the connection failed before any response byte
)

type attemptResult struct {
	state  attemptState
	out    Outcome
	handed bool
	err    error
}

// attempt sends the request on one connection to m and reads the answer;
// now is when it starts. It owns m.pending's increment: it is undone here
// unless handed.
func (o *Origin) attempt(ctx *fasthttp.RequestCtx, f *Forward, x *exchange, m *member, start, now time.Time) (r attemptResult) {
	cc, err := o.acquire(m, now)
	if err != nil {
		m.pending.Add(-1)
		if errors.Is(err, fasthttp.ErrNoFreeConns) || errors.Is(err, fasthttp.ErrTimeout) {
			return attemptResult{out: Outcome{Err: fmt.Errorf("%w: %w", ErrShed, err)}}
		}
		return attemptResult{state: attemptNoConn, err: err}
	}
	conn := cc.Conn()
	fail := func(state attemptState, out Outcome, err error) attemptResult {
		handBack(m.hc.CloseConn, cc)
		m.pending.Add(-1)
		return attemptResult{state: state, out: out, err: err}
	}

	// The request.
	if err := conn.SetWriteDeadline(now.Add(o.cfg.WriteTimeout)); err != nil {
		return fail(attemptNoAnswer, Outcome{}, err)
	}
	bw := m.hc.AcquireWriter(conn)
	o.writeHead(bw, ctx, f, x, m)
	clientErr, originErr := o.writeBody(bw, conn, x)
	if clientErr == nil && originErr == nil {
		originErr = bw.Flush()
	}
	m.hc.ReleaseWriter(bw)
	switch {
	case errors.Is(clientErr, ErrTooLarge):
		return fail(attemptDone, Outcome{Err: clientErr}, nil)
	case clientErr != nil && isTimeout(clientErr):
		return fail(attemptDone, Outcome{Err: fmt.Errorf("%w: %w", ErrBodyTimeout, clientErr)}, nil)
	case clientErr != nil:
		return fail(attemptDone, Outcome{Err: fmt.Errorf("%w: %w", ErrClient, clientErr)}, nil)
	case originErr != nil && isTimeout(originErr):
		return fail(attemptDone, Outcome{Err: fmt.Errorf("%w: %w", ErrTimeout, originErr)}, nil)
	case originErr != nil:
		return fail(attemptNoAnswer, Outcome{}, originErr)
	}

	// The response headers, past any interim (1xx but 101) responses.
	// Without a body the head went out at once: the clock needs no second
	// read.
	sent := now
	if !x.noBody() {
		sent = time.Now()
	}
	if err := conn.SetReadDeadline(sent.Add(o.cfg.ReadTimeout)); err != nil {
		return fail(attemptNoAnswer, Outcome{}, err)
	}
	br := m.hc.AcquireReader(conn)
	rh := &ctx.Response.Header
	interim := false
	for {
		err := rh.Read(br)
		if err != nil {
			m.hc.ReleaseReader(br)
			clearResponse(ctx)
			out := Outcome{Elapsed: time.Since(start)}
			switch {
			case err == io.EOF && !interim:
				// fasthttp's io.EOF: not one response byte arrived.
				return fail(attemptNoAnswer, out, err)
			case isTimeout(err):
				out.Err = fmt.Errorf("%w: %w", ErrTimeout, err)
			default:
				out.Err = fmt.Errorf("%w: %w", ErrUpstream, err)
			}
			return fail(attemptDone, out, nil)
		}
		if s := rh.StatusCode(); s < 100 || s >= 200 || s == fasthttp.StatusSwitchingProtocols {
			break
		}
		interim = true
	}
	out := Outcome{Status: rh.StatusCode(), Elapsed: time.Since(start)}
	length := rh.ContentLength() // -1 chunked, -2 until the connection closes
	reuse := !rh.ConnectionClose()
	switching := out.Status == fasthttp.StatusSwitchingProtocols
	out.Complete = cleanResponse(rh, x, switching)

	if switching {
		if !x.upgrade {
			m.hc.ReleaseReader(br)
			clearResponse(ctx)
			out.Err = fmt.Errorf("%w: 101 to a request without upgrade", ErrUpstream)
			return fail(attemptDone, out, nil)
		}
		o.switchProtocols(ctx, m, cc, br, x.anon)
		return attemptResult{out: out, handed: true}
	}

	if ctx.IsHead() || out.Status < 200 || out.Status == fasthttp.StatusNoContent || out.Status == fasthttp.StatusNotModified {
		o.release(m, cc, br, reuse)
		return attemptResult{out: out}
	}
	if max := o.cfg.MaxResponseBodySize; max > 0 && int64(length) > max {
		m.hc.ReleaseReader(br)
		clearResponse(ctx)
		out.Err = fmt.Errorf("%w: response body of %d bytes exceeds %d", ErrUpstream, length, max)
		return fail(attemptDone, out, nil)
	}
	if length >= 0 && length <= o.cfg.BufferBodySize {
		if err := o.readBody(ctx, conn, br, length); err != nil {
			m.hc.ReleaseReader(br)
			clearResponse(ctx)
			if isTimeout(err) {
				out.Err = fmt.Errorf("%w: %w", ErrTimeout, err)
			} else {
				out.Err = fmt.Errorf("%w: %w", ErrUpstream, err)
			}
			return fail(attemptDone, out, nil)
		}
		o.release(m, cc, br, reuse)
		return attemptResult{out: out}
	}
	b := acquireBody(o, m, cc, br, length, reuse)
	b.anon = x.anon
	if length < 0 {
		length = -1 // the client gets it chunked
	}
	ctx.Response.SetBodyStream(b, length)
	ctx.Response.ImmediateHeaderFlush = true
	return attemptResult{out: out, handed: true}
}

// acquire takes a connection to m from its pool. A connection idle for
// more than probeIdleAfter is probed first, so that one the origin has
// closed in the meantime is not used: that would cost a retry, or fail a
// request that cannot be retried.
func (o *Origin) acquire(m *member, now time.Time) (pooledConn, error) {
	for range 8 {
		cc, err := m.hc.AcquireConn(0, false)
		if err != nil {
			return nil, err
		}
		if !needsProbe(cc, now) || alive(cc.Conn()) {
			return cc, nil
		}
		m.hc.CloseConn(cc)
	}
	cc, err := m.hc.AcquireConn(0, false)
	if err != nil {
		return nil, err
	}
	return cc, nil
}

// release returns the connection to the pool when the exchange left it
// clean, else closes it; and ends m's pending count.
func (o *Origin) release(m *member, cc pooledConn, br *bufio.Reader, reuse bool) {
	reuse = reuse && br.Buffered() == 0
	m.hc.ReleaseReader(br)
	if reuse {
		handBack(m.hc.ReleaseConn, cc)
	} else {
		handBack(m.hc.CloseConn, cc)
	}
	m.pending.Add(-1)
}

// keeps decides a request header line's fate: dropped (keep false),
// rewritten (the Cookie header when cookies are stripped), or passed on.
func (f *Forward) keeps(l *headerLine, x *exchange) (keep, rewrite bool) {
	switch l.rule {
	case ruleDrop, ruleConnection, ruleXFF, ruleUpgrade:
		return false, false
	case ruleForwarded:
		if !f.KeepForwarded {
			return false, false
		}
	case ruleCookie:
		if len(f.StripCookies) > 0 {
			return true, true
		}
	}
	if (len(x.conn) > 0 && listHas(x.conn, l.name)) || isStripped(l.name, f.StripHeaders) || isStripped(l.name, f.ClientIPHeaders) {
		return false, false
	}
	return true, false
}

// writeHead writes the request line and headers for the origin.
func (o *Origin) writeHead(bw *bufio.Writer, ctx *fasthttp.RequestCtx, f *Forward, x *exchange, m *member) {
	h := &ctx.Request.Header
	bw.Write(h.Method())
	bw.WriteByte(' ')
	bw.Write(f.Target)
	bw.WriteString(" HTTP/1.1\r\n")

	switch {
	case o.cfg.Host != "":
		bw.WriteString("Host: ")
		bw.WriteString(o.cfg.Host)
		bw.WriteString("\r\n")
	case len(h.Host()) > 0:
		writeHeader(bw, "Host", h.Host())
	default:
		bw.WriteString("Host: ")
		bw.WriteString(m.addr)
		bw.WriteString("\r\n")
	}

	// Kept lines go out as the client sent them, a run of adjacent ones
	// in one write; a line that is dropped or rewritten ends the run.
	// Lines are adjacent in raw, so a run grows by reslicing.
	var run []byte
	for i := range x.lines {
		l := &x.lines[i]
		keep, rewrite := f.keeps(l, x)
		if keep && !rewrite && l.verbatim {
			if len(run) == 0 {
				run = l.line
			} else {
				run = run[:len(run)+len(l.line)]
			}
			continue
		}
		bw.Write(run)
		run = nil
		switch {
		case !keep:
		case rewrite:
			writeCookies(bw, l.name, l.value, f.StripCookies)
		default:
			bw.Write(l.name)
			bw.WriteString(": ")
			bw.Write(l.value)
			bw.WriteString("\r\n")
		}
	}
	bw.Write(run)

	// Ours.
	if f.ClientIP.IsValid() {
		bw.WriteString("X-Forwarded-For: ")
		if f.KeepForwarded && !f.OwnXFF && len(x.xff) > 0 {
			bw.Write(x.xff)
			bw.WriteString(", ")
			peer := httpguard.PeerAddr(ctx)
			if !peer.IsValid() {
				peer = f.ClientIP
			}
			bw.Write(peer.AppendTo(x.num[:0]))
		} else {
			bw.Write(f.ClientIP.AppendTo(x.num[:0]))
		}
		bw.WriteString("\r\nX-Real-Ip: ")
		bw.Write(f.ClientIP.AppendTo(x.num[:0]))
		bw.WriteString("\r\n")
		for _, name := range f.ClientIPHeaders {
			bw.Write(name)
			bw.WriteString(": ")
			bw.Write(f.ClientIP.AppendTo(x.num[:0]))
			bw.WriteString("\r\n")
		}
	}
	bw.WriteString("X-Forwarded-Proto: ")
	if f.Proto == "https" {
		bw.WriteString("https\r\n")
	} else {
		bw.WriteString("http\r\n")
	}
	if host := f.Host; len(host) > 0 {
		writeHeader(bw, "X-Forwarded-Host", host)
	} else if host := h.Host(); len(host) > 0 {
		writeHeader(bw, "X-Forwarded-Host", host)
	}
	if len(f.Visitor) > 0 {
		writeHeader(bw, HeaderVisitor, f.Visitor)
	}
	if len(f.Event) > 0 {
		writeHeader(bw, HeaderEvent, f.Event)
	}
	if x.upgrade {
		bw.WriteString("Connection: Upgrade\r\n")
		writeHeader(bw, "Upgrade", x.upg)
	}
	switch x.body.kind {
	case bodyFixed:
		writeContentLength(bw, x.body.n, x.num[:0])
	case bodyChunked:
		bw.WriteString("Transfer-Encoding: chunked\r\n")
	}
	bw.WriteString("\r\n")
}

// writeBody copies the request body to the origin. A read error is the
// client's (its stream broke), a write error the origin's.
func (o *Origin) writeBody(bw *bufio.Writer, conn interface{ SetWriteDeadline(time.Time) error }, x *exchange) (clientErr, originErr error) {
	b := &x.body
	switch {
	case b.kind == bodyNone || (b.kind == bodyFixed && b.n == 0):
		return nil, nil
	case b.stream == nil:
		_, err := bw.Write(b.inline)
		return nil, err
	}
	left := b.n
	var sent int64
	for {
		p := x.buf
		if b.kind == bodyFixed {
			if left == 0 {
				return nil, nil
			}
			p = p[:min(left, len(p))]
		}
		var n int
		var err error
		if x.pre {
			// The first bytes awaitBody read, in x.buf already.
			n, err, x.pre = x.preN, x.preErr, false
		} else {
			n, err = b.stream.Read(p)
		}
		if sent += int64(n); o.cfg.MaxRequestBodySize > 0 && sent > o.cfg.MaxRequestBodySize {
			return ErrTooLarge, nil
		}
		if n > 0 {
			if werr := conn.SetWriteDeadline(time.Now().Add(o.cfg.WriteTimeout)); werr != nil {
				return nil, werr
			}
			if b.kind == bodyChunked {
				bw.Write(strconv.AppendInt(x.num[:0], int64(n), 16))
				bw.WriteString("\r\n")
			}
			if _, werr := bw.Write(p[:n]); werr != nil {
				return nil, werr
			}
			if b.kind == bodyChunked {
				if _, werr := bw.WriteString("\r\n"); werr != nil {
					return nil, werr
				}
			} else {
				left -= n
			}
		}
		switch {
		case err == io.EOF && b.kind == bodyChunked:
			_, werr := bw.WriteString("0\r\n\r\n")
			return nil, werr
		case err == io.EOF && left == 0:
			return nil, nil
		case err == io.EOF:
			return io.ErrUnexpectedEOF, nil
		case err != nil:
			return err, nil
		}
	}
}

// readBody reads a body of n bytes into ctx.Response.
func (o *Origin) readBody(ctx *fasthttp.RequestCtx, conn interface{ SetReadDeadline(time.Time) error }, br *bufio.Reader, n int) error {
	for n > 0 {
		if br.Buffered() == 0 {
			if err := conn.SetReadDeadline(time.Now().Add(o.cfg.ReadTimeout)); err != nil {
				return err
			}
		}
		p, err := br.Peek(min(n, br.Size()))
		if len(p) > 0 {
			ctx.Response.AppendBody(p)
			_, _ = br.Discard(len(p))
			n -= len(p)
		}
		if err != nil && n > 0 {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// cleanResponse removes the hop-by-hop headers of the origin's response
// and reads X-Waitroom-Complete. On a 101, Upgrade stays.
func cleanResponse(rh *fasthttp.ResponseHeader, x *exchange, switching bool) (complete bool) {
	rh.SetProtocol(http11)
	x.tokens = x.tokens[:0]
	for _, v := range rh.PeekAll(fasthttp.HeaderConnection) {
		x.tokens = append(x.tokens, v...)
		x.tokens = append(x.tokens, ',')
	}
	rh.ResetConnectionClose()
	rh.Del(fasthttp.HeaderConnection)
	for t := x.tokens; len(t) > 0; {
		i := indexByte(t, ',')
		tok := ascii.TrimOWS(t[:i])
		t = t[i+1:]
		if len(tok) == 0 || ascii.EqualFold(tok, "close") || ascii.EqualFold(tok, "keep-alive") || (switching && ascii.EqualFold(tok, "upgrade")) {
			continue
		}
		rh.DelBytes(tok)
	}
	// One pass over the headers finds whether there is anything to drop:
	// most responses have none of them, and each Del normalises its key
	// and scans the headers again.
	drop := false
	for k, v := range rh.All() {
		switch {
		case ascii.EqualFold(k, HeaderComplete):
			v = ascii.TrimOWS(v)
			complete, drop = len(v) == 1 && v[0] == '1', true
		case !switching && ascii.EqualFold(k, fasthttp.HeaderUpgrade):
			drop = true
		default:
			for _, d := range responseDrop {
				if ascii.EqualFold(k, d) {
					drop = true
					break
				}
			}
		}
	}
	if !drop {
		return complete
	}
	for _, k := range responseDrop {
		rh.Del(k)
	}
	if !switching {
		rh.Del(fasthttp.HeaderUpgrade)
	}
	return complete
}

var http11 = []byte("HTTP/1.1")

// clearResponse undoes what reading the origin's response put in
// ctx.Response, keeping the server's settings of the header (default
// Content-Type and Date, normalizing), which Reset would lose. It runs on
// failures only, and may allocate.
func clearResponse(ctx *fasthttp.RequestCtx) {
	ctx.Response.ResetBody()
	ctx.Response.ImmediateHeaderFlush = false
	_ = ctx.Response.Header.Read(bufio.NewReader(strings.NewReader("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")))
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// exchange is the per-request scratch of Forward, pooled.
type exchange struct {
	raw       []byte       // the request's raw header block
	conn      []byte       // the request's Connection values, comma-joined
	xff       []byte       // the request's X-Forwarded-For values, comma-joined
	upg       []byte       // the request's Upgrade value
	tokens    []byte       // the response's Connection values
	lines     []headerLine // each line of raw, in order
	num       [64]byte
	buf       []byte // request body copy buffer
	body      reqBody
	upgrade   bool // a WebSocket upgrade
	retriable bool // may be sent again after a connection failure
	anon      bool // not admitted: no use of the reserved in-flight share
	pre       bool // buf[:preN] holds the body's first bytes, read by awaitBody
	preN      int
	preErr    error
}

// headerLine is one line of the request's raw header block.
type headerLine struct {
	line        []byte // the whole line as received, its line end included
	name, value []byte // the value without surrounding whitespace
	rule        rule
	// verbatim: the line ends in CRLF and can be passed on as it is.
	verbatim bool
}

type bodyKind uint8

const (
	bodyNone    bodyKind = iota // no body, no framing header
	bodyFixed                   // Content-Length: n
	bodyChunked                 // Transfer-Encoding: chunked
)

type reqBody struct {
	kind   bodyKind
	n      int
	stream io.Reader // streamed body (the server's StreamRequestBody)
	inline []byte    // or the body fasthttp already read
}

var exchangePool = sync.Pool{New: func() any {
	return &exchange{buf: make([]byte, 32<<10)}
}}

func (x *exchange) reset() {
	clear(x.lines) // they point into the request's buffer
	x.raw, x.conn, x.xff, x.upg, x.tokens, x.lines = nil, x.conn[:0], x.xff[:0], x.upg[:0], x.tokens[:0], x.lines[:0]
	x.body = reqBody{}
	x.upgrade, x.retriable, x.anon, x.pre, x.preN, x.preErr = false, false, false, false, 0, nil
}

// awaitBody reads the first bytes of a streamed request body (into
// x.buf, for writeBody to send first), so that a client that sends a head
// and then stalls is cut off by its read deadline before the request takes
// an in-flight slot or an origin connection.
func (x *exchange) awaitBody() error {
	b := &x.body
	if b.stream == nil || b.kind == bodyNone || (b.kind == bodyFixed && b.n == 0) {
		return nil
	}
	p := x.buf
	if b.kind == bodyFixed {
		p = p[:min(b.n, len(p))]
	}
	for range 100 {
		n, err := b.stream.Read(p)
		if n == 0 && err == nil {
			continue
		}
		switch {
		case n == 0 && isTimeout(err):
			return fmt.Errorf("%w: %w", ErrBodyTimeout, err)
		case n == 0 && err == io.EOF && b.kind == bodyFixed:
			return fmt.Errorf("%w: %w", ErrClient, io.ErrUnexpectedEOF)
		case n == 0 && err != nil && err != io.EOF:
			return fmt.Errorf("%w: %w", ErrClient, err)
		}
		x.pre, x.preN, x.preErr = true, n, err
		return nil
	}
	return fmt.Errorf("%w: the body stream returns nothing", ErrClient)
}

// prepare reads what Forward needs from the request before any byte goes
// to the origin, and refuses a request that cannot be forwarded.
func (x *exchange) prepare(ctx *fasthttp.RequestCtx, f *Forward, maxBody int64) error {
	h := &ctx.Request.Header
	x.raw, x.lines = h.RawHeaders(), x.lines[:0]
	if len(x.raw) == 0 {
		// Not parsed from the wire: use fasthttp's own serialization, less
		// its request line.
		full := h.Header()
		if i := indexByte(full, '\n'); i >= 0 {
			x.raw = full[i+1:]
		}
	}
	if !validTarget(f.Target) {
		return fmt.Errorf("%w: request target", ErrClient)
	}
	it := rawHeader{b: x.raw}
	for {
		rest := it.b
		name, value, ok, bad := it.next()
		if bad {
			return fmt.Errorf("%w: malformed header line", ErrClient)
		}
		if !ok {
			break
		}
		r := requestRule(name)
		line := rest[:len(rest)-len(it.b)]
		x.lines = append(x.lines, headerLine{line: line, name: name, value: value, rule: r,
			verbatim: len(line) >= 2 && line[len(line)-2] == '\r' && line[len(line)-1] == '\n'})
		switch r {
		case ruleConnection:
			x.conn = append(append(x.conn, value...), ',')
		case ruleXFF:
			if len(x.xff) > 0 {
				x.xff = append(x.xff, ", "...)
			}
			x.xff = append(x.xff, value...)
		case ruleUpgrade:
			x.upg = append(x.upg[:0], value...)
		}
	}

	cl := h.ContentLength()
	switch {
	case ctx.Request.IsBodyStream():
		x.body.stream = f.Body
		if f.Body == nil {
			x.body.stream = ctx.RequestBodyStream()
		}
		switch {
		case cl >= 0:
			x.body.kind, x.body.n = bodyFixed, cl
		case cl == -1:
			x.body.kind = bodyChunked
		}
	default:
		x.body.inline = ctx.Request.Body()
		if len(x.body.inline) > 0 || cl >= 0 {
			x.body.kind, x.body.n = bodyFixed, len(x.body.inline)
		}
	}
	if maxBody > 0 && x.body.kind == bodyFixed && int64(x.body.n) > maxBody {
		return ErrTooLarge
	}
	noBody := x.noBody()
	x.upgrade = h.IsGet() && listHas(x.conn, "upgrade") && listHas(x.upg, "websocket")
	if x.upgrade && !noBody {
		return fmt.Errorf("%w: upgrade request with a body", ErrClient)
	}
	x.retriable = noBody && idempotent(h.Method())
	return nil
}

// noBody reports whether the request has no body (or an empty one).
func (x *exchange) noBody() bool {
	return x.body.kind == bodyNone || (x.body.kind == bodyFixed && x.body.n == 0)
}

// validTarget reports whether uri is an origin-form target that can be
// written on a request line as it is: a last line of defence, since the
// caller's normaliser refuses far more.
func validTarget(uri []byte) bool {
	if len(uri) == 0 || uri[0] != '/' {
		return false
	}
	for _, c := range uri {
		if c <= ' ' || c >= 0x7f || c == '#' {
			return false
		}
	}
	return true
}
