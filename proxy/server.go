package proxy

import (
	"math"
	"net"
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
	// ReadTimeout bounds reading a request, WriteTimeout writing a
	// response (0: none, for long downloads and server-sent events),
	// IdleTimeout a keep-alive connection's wait for the next request.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
}

// Limits and defaults of ServerConfig.
const (
	MinHeaderBytes     = 16 << 10
	DefaultHeaderBytes = 32 << 10
	DefaultReadTimeout = 60 * time.Second
	DefaultIdleTimeout = 75 * time.Second
)

// Server returns a fasthttp server running the proxy with cfg's limits.
// Request bodies stream (large uploads reach the origin as they arrive);
// framing errors and oversized headers get a JSON 400 or 431.
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
	handler := p.Handle
	body := math.MaxInt
	if cfg.MaxBodyBytes > 0 {
		body = int(min(cfg.MaxBodyBytes, math.MaxInt))
		handler = bodyLimit(body, handler)
	}
	srv := &fasthttp.Server{
		Handler:                       handler,
		ErrorHandler:                  p.serverError,
		ReadBufferSize:                cfg.MaxHeaderBytes,
		WriteBufferSize:               16 << 10,
		ReadTimeout:                   cfg.ReadTimeout,
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
	p.m.badRequests.Inc()
	status, _ := httpguard.Classify(err)
	ctx.SetConnectionClose()
	switch status {
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
