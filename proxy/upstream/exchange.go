package upstream

// One exchange with an origin, byte by byte: what prepare reads from the
// request before anything is sent, the head and body written to the
// origin, and the response cleaned for the client. forward.go decides
// which member gets it and what happens when it fails.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/internal/ascii"
	"github.com/waitroom/waitroom/proxy/httpguard"
)

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

// appendHead appends the request line and headers for the origin to dst.
// The head is built in one buffer and written at once: a request without
// a body goes to the origin in a single write, with no buffered writer.
func (o *Origin) appendHead(dst []byte, ctx *fasthttp.RequestCtx, f *Forward, x *exchange, m *member) []byte {
	h := &ctx.Request.Header
	dst = append(dst, h.Method()...)
	dst = append(dst, ' ')
	dst = append(dst, f.Target...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	switch {
	case o.cfg.Host != "":
		dst = append(dst, o.cfg.Host...)
	case len(h.Host()) > 0:
		dst = append(dst, h.Host()...)
	default:
		dst = append(dst, m.addr...)
	}
	dst = append(dst, "\r\n"...)

	// Kept lines go out as the client sent them, a run of adjacent ones
	// in one copy; a line that is dropped or rewritten ends the run.
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
		dst = append(dst, run...)
		run = nil
		switch {
		case !keep:
		case rewrite:
			dst = appendCookies(dst, l.name, l.value, f.StripCookies)
		default:
			dst = appendHeader(dst, l.name, l.value)
		}
	}
	dst = append(dst, run...)

	// Ours.
	if f.ClientIP.IsValid() {
		dst = append(dst, "X-Forwarded-For: "...)
		if f.KeepForwarded && !f.OwnXFF && len(x.xff) > 0 {
			dst = append(dst, x.xff...)
			dst = append(dst, ", "...)
			peer := httpguard.PeerAddr(ctx)
			if !peer.IsValid() {
				peer = f.ClientIP
			}
			dst = peer.AppendTo(dst)
		} else {
			dst = f.ClientIP.AppendTo(dst)
		}
		dst = append(dst, "\r\nX-Real-Ip: "...)
		ip := len(dst)
		dst = f.ClientIP.AppendTo(dst)
		ipEnd := len(dst)
		dst = append(dst, "\r\n"...)
		for _, name := range f.ClientIPHeaders {
			dst = appendHeader(dst, name, dst[ip:ipEnd])
		}
	}
	if f.Proto == "https" {
		dst = append(dst, "X-Forwarded-Proto: https\r\n"...)
	} else {
		dst = append(dst, "X-Forwarded-Proto: http\r\n"...)
	}
	if host := f.Host; len(host) > 0 {
		dst = appendHeader(dst, "X-Forwarded-Host", host)
	} else if host := h.Host(); len(host) > 0 {
		dst = appendHeader(dst, "X-Forwarded-Host", host)
	}
	if len(f.Visitor) > 0 {
		dst = appendHeader(dst, HeaderVisitor, f.Visitor)
	}
	if len(f.Event) > 0 {
		dst = appendHeader(dst, HeaderEvent, f.Event)
	}
	if x.upgrade {
		dst = append(dst, "Connection: Upgrade\r\n"...)
		dst = appendHeader(dst, "Upgrade", x.upg)
	}
	switch x.body.kind {
	case bodyFixed:
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(x.body.n), 10)
		dst = append(dst, "\r\n"...)
	case bodyChunked:
		dst = append(dst, "Transfer-Encoding: chunked\r\n"...)
	}
	return append(dst, "\r\n"...)
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
	// One pass over the headers finds whether there is anything to drop:
	// most responses have none of it, and each Del normalises its key and
	// scans the headers again.
	conn, drop, complete := scanResponse(rh, switching)
	if conn {
		x.tokens = x.tokens[:0]
		for _, v := range rh.PeekAll(fasthttp.HeaderConnection) {
			x.tokens = append(x.tokens, v...)
			x.tokens = append(x.tokens, ',')
		}
		rh.ResetConnectionClose()
		rh.Del(fasthttp.HeaderConnection)
		for t := x.tokens; len(t) > 0; {
			i := bytes.IndexByte(t, ',')
			tok := ascii.TrimOWS(t[:i])
			t = t[i+1:]
			if len(tok) == 0 || ascii.EqualFold(tok, "close") || ascii.EqualFold(tok, "keep-alive") || (switching && ascii.EqualFold(tok, "upgrade")) {
				continue
			}
			rh.DelBytes(tok)
		}
		// What Connection named is gone, X-Waitroom-Complete too if it
		// was named: look again.
		_, drop, complete = scanResponse(rh, switching)
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

// scanResponse reports whether the response has a Connection header,
// whether it has other headers to drop, and its X-Waitroom-Complete.
func scanResponse(rh *fasthttp.ResponseHeader, switching bool) (conn, drop, complete bool) {
	for k, v := range rh.All() {
		switch {
		case ascii.EqualFold(k, fasthttp.HeaderConnection):
			conn = true
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
	return conn, drop, complete
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
	head      []byte       // the head written to the origin
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

// maxKeptHead is the largest head buffer an exchange keeps for the next
// request.
const maxKeptHead = 64 << 10

func (x *exchange) reset() {
	clear(x.lines) // they point into the request's buffer
	if cap(x.head) > maxKeptHead {
		x.head = nil
	}
	x.head = x.head[:0]
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
		if i := bytes.IndexByte(full, '\n'); i >= 0 {
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
