package upstream

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/valyala/fasthttp"
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
	x.head = o.appendHead(x.head[:0], ctx, f, x, m)
	var clientErr, originErr error
	if x.noBody() {
		_, originErr = conn.Write(x.head)
	} else {
		bw := m.hc.AcquireWriter(conn)
		_, _ = bw.Write(x.head)
		clientErr, originErr = o.writeBody(bw, conn, x)
		if clientErr == nil && originErr == nil {
			originErr = bw.Flush()
		}
		m.hc.ReleaseWriter(bw)
	}
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
