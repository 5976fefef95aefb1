package proxy

import (
	"io"
	"math"
	"net"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/proxy/httpguard"
)

// ServerConfig sizes the front server's limits.
type ServerConfig struct {
	// MaxHeaderBytes bounds a request's headers (431 beyond); at least
	// MinHeaderBytes, so that real cookies fit.
	MaxHeaderBytes int
	// MaxBodyBytes bounds a request body (413 beyond); 0: no limit. Bodies
	// stream to the origin either way.
	MaxBodyBytes int64
	// ReadTimeout bounds reading a request's body after its head,
	// WriteTimeout writing a response (0: none, for long downloads and
	// server-sent events), IdleTimeout a keep-alive connection's wait for
	// the next request.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// HeaderTimeout bounds receiving a request's head: from the
	// connection's opening for the first request, from the first byte for
	// later ones (slowloris). Beyond it: 408, connection closed.
	HeaderTimeout time.Duration
	// BodyTimeout bounds the wait for a body's first bytes after the head
	// and is the grace before BodyMinRate applies.
	BodyTimeout time.Duration
	// BodyMinRate is the slowest a body may arrive, in bytes a second: t
	// after the head, BodyMinRate × (t − BodyTimeout) bytes must be in, or
	// the body is cut off (408, connection closed). 0: no minimum rate.
	BodyMinRate int64
}

// Limits and defaults of ServerConfig.
const (
	MinHeaderBytes     = 16 << 10
	DefaultHeaderBytes = 32 << 10
	DefaultReadTimeout = 60 * time.Second
	DefaultIdleTimeout = 75 * time.Second
	// DefaultHeaderTimeout and DefaultBodyTimeout apply when
	// ServerConfig leaves them 0.
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 20 * time.Second
)

// Server returns a fasthttp server running the proxy with cfg's limits.
// Request bodies stream (large uploads reach the origin as they arrive);
// framing errors and oversized headers get a JSON 400 or 431, a head or
// body that arrives too slowly 408. Call it once: the body policy it sets
// applies to every request the proxy forwards.
//
// The timeouts ride on the connection's read deadline: fasthttp sets
// Server.ReadTimeout (HeaderTimeout here) when a request starts;
// HeaderReceived moves it to BodyTimeout once a head with a body is in;
// while a body streams to the origin, a bodyGuard moves it on as bytes
// arrive (BodyMinRate), never past ReadTimeout after the head.
func (p *Proxy) Server(cfg ServerConfig) *fasthttp.Server {
	if cfg.MaxHeaderBytes < MinHeaderBytes {
		cfg.MaxHeaderBytes = DefaultHeaderBytes
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = DefaultHeaderTimeout
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	cfg.BodyTimeout = min(cfg.BodyTimeout, cfg.ReadTimeout)
	p.body.Store(&bodyPolicy{grace: cfg.BodyTimeout, rate: max(cfg.BodyMinRate, 0), limit: cfg.ReadTimeout})
	bodyTimeout := fasthttp.RequestConfig{ReadTimeout: cfg.BodyTimeout}
	handler := p.Handle
	body := math.MaxInt
	if cfg.MaxBodyBytes > 0 {
		body = int(min(cfg.MaxBodyBytes, math.MaxInt))
		handler = bodyLimit(body, handler)
	}
	srv := &fasthttp.Server{
		Handler:         handler,
		ErrorHandler:    p.serverError,
		ReadBufferSize:  cfg.MaxHeaderBytes,
		WriteBufferSize: 16 << 10,
		ReadTimeout:     cfg.HeaderTimeout,
		HeaderReceived: func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
			if cl := h.ContentLength(); cl != 0 && cl != -2 {
				return bodyTimeout
			}
			return fasthttp.RequestConfig{}
		},
		WriteTimeout:                  cfg.WriteTimeout,
		IdleTimeout:                   cfg.IdleTimeout,
		MaxRequestBodySize:            body,
		StreamRequestBody:             true,
		DisablePreParseMultipartForm:  true,
		NoDefaultServerHeader:         true,
		NoDefaultDate:                 false,
		DisableHeaderNamesNormalizing: false,
		CloseOnShutdown:               true,
		SecureErrorLogMessage:         true,
		Logger:                        quietLogger{},
	}
	if d := p.opts.Defence; d != nil && d.Fingerprints != nil {
		srv.ConnState = func(c net.Conn, s fasthttp.ConnState) {
			if s == fasthttp.StateClosed {
				d.Fingerprints.Forget(c)
			}
		}
	}
	return srv
}

// bodyLimit refuses a request whose declared body is beyond limit before
// anything is forwarded. (A chunked body beyond it is cut off by the
// server's stream limit and the request fails.)
func bodyLimit(limit int, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if ctx.Request.Header.ContentLength() > limit {
			ctx.SetConnectionClose()
			writeError(ctx, fasthttp.StatusRequestEntityTooLarge, errTooLarge)
			return
		}
		next(ctx)
	}
}

// serverError answers a request fasthttp could not parse.
func (p *Proxy) serverError(ctx *fasthttp.RequestCtx, err error) {
	status, _ := httpguard.Classify(err)
	if status == fasthttp.StatusRequestTimeout {
		p.m.headTimeouts.Inc()
	} else {
		p.m.badRequests.Inc()
	}
	ctx.SetConnectionClose()
	switch status {
	case fasthttp.StatusRequestTimeout:
		writeError(ctx, status, errSlowRequest)
	case fasthttp.StatusRequestHeaderFieldsTooLarge:
		writeError(ctx, status, errHeaders)
	case fasthttp.StatusRequestEntityTooLarge:
		writeError(ctx, status, errTooLarge)
	default:
		writeError(ctx, fasthttp.StatusBadRequest, errBadRequest)
	}
}

// quietLogger drops fasthttp's own log lines: every one of them is a
// client's broken request, which the metrics count.
type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// bodyPolicy is how fast a streamed request body must arrive.
type bodyPolicy struct {
	grace time.Duration // until the first bytes; then the rate applies
	rate  int64         // bytes a second; 0: none
	limit time.Duration // the whole body, however fast
}

// bodyGuard reads a streamed request body for the origin and moves the
// client connection's read deadline as bytes arrive: start + grace +
// received/rate, never past start + limit. A body below the rate meets
// the deadline, and the read fails with a timeout (ErrBodyTimeout).
type bodyGuard struct {
	r        io.Reader
	conn     net.Conn
	pol      *bodyPolicy
	start    time.Time
	received int64
}

var guardPool = sync.Pool{New: func() any { return new(bodyGuard) }}

func acquireBodyGuard(ctx *fasthttp.RequestCtx, pol *bodyPolicy) *bodyGuard {
	g := guardPool.Get().(*bodyGuard)
	*g = bodyGuard{r: ctx.RequestBodyStream(), conn: ctx.Conn(), pol: pol, start: time.Now()}
	return g
}

func releaseBodyGuard(g *bodyGuard) {
	*g = bodyGuard{}
	guardPool.Put(g)
}

// Read implements io.Reader.
func (g *bodyGuard) Read(b []byte) (int, error) {
	n, err := g.r.Read(b)
	g.received += int64(n)
	if n > 0 && g.conn != nil {
		_ = g.conn.SetReadDeadline(g.deadline())
	}
	return n, err
}

// deadline is when the next bytes must have arrived.
func (g *bodyGuard) deadline() time.Time {
	end := g.start.Add(g.pol.limit)
	if g.pol.rate <= 0 {
		return end
	}
	earned := time.Duration(float64(g.received) / float64(g.pol.rate) * float64(time.Second))
	if d := g.start.Add(g.pol.grace + earned); d.Before(end) {
		return d
	}
	return end
}
