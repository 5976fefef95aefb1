package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/inventory"
)

// Defaults of Options.
const (
	DefaultMaxBodyBytes = 8 << 20
	DefaultReadTimeout  = 10 * time.Second
	DefaultWriteTimeout = 10 * time.Second
	DefaultIdleTimeout  = 60 * time.Second
)

// ShutdownGrace is how long Serve lets in-flight requests finish after its
// context ends; then their store calls are cancelled and Serve returns.
const ShutdownGrace = 10 * time.Second

// readyTimeout is how quickly the store must answer Ping for /readyz.
const readyTimeout = time.Second

// Options configure a Server; New reads them once.
type Options struct {
	// Token is the bearer token every request but /healthz, /readyz and
	// /v1/openapi.yaml must carry. It is required unless InsecureNoAuth.
	Token string
	// InsecureNoAuth serves without a token, for tests and local demos
	// only. It may not be combined with a Token.
	InsecureNoAuth bool
	// Logger receives storage failures and panics; slog.Default when nil.
	Logger *slog.Logger
	// Registry receives the API's metrics and is what /metrics shows. When
	// nil, a new registry with the Go and process collectors is used.
	Registry *prometheus.Registry
	// MaxBodyBytes bounds a request body; DefaultMaxBodyBytes when 0.
	MaxBodyBytes int
	// ReadTimeout, WriteTimeout and IdleTimeout bound a connection's
	// request read, response write and keep-alive wait; the Default…
	// values when 0.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
}

// Server is the seat-hold sidecar's HTTP API in front of an
// inventory.Store. It is safe for concurrent use: Handler may serve any
// number of requests at once, and Serve may be called on several
// listeners.
type Server struct {
	store    inventory.Store
	log      *slog.Logger
	opts     Options
	tokenSum [sha256.Size]byte
	noAuth   bool
	routes   []*route
	reg      *prometheus.Registry
	m        *metrics

	// base is the context of store calls. It is cancelled only when a
	// graceful shutdown runs out of time, never when a client goes away
	// (fasthttp's RequestCtx is not a per-request context).
	base context.Context
	stop context.CancelFunc

	ready readiness
}

// New returns a Server over store. It refuses an empty token unless
// opts.InsecureNoAuth is set.
func New(store inventory.Store, opts Options) (*Server, error) {
	if store == nil {
		return nil, errors.New("api: a store is required")
	}
	switch {
	case opts.Token == "" && !opts.InsecureNoAuth:
		return nil, errors.New("api: a token is required (or set InsecureNoAuth for local use)")
	case opts.Token != "" && opts.InsecureNoAuth:
		return nil, errors.New("api: Token and InsecureNoAuth exclude each other")
	}
	if opts.MaxBodyBytes < 0 {
		return nil, errors.New("api: MaxBodyBytes must not be negative")
	}
	if opts.MaxBodyBytes == 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DefaultReadTimeout
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	reg := opts.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	s := &Server{store: store, log: opts.Logger, opts: opts, noAuth: opts.InsecureNoAuth, routes: newRoutes(), reg: reg}
	s.tokenSum = sha256.Sum256([]byte(opts.Token))
	m, err := newMetrics(reg, s.routes)
	if err != nil {
		return nil, fmt.Errorf("api: registering metrics: %w", err)
	}
	s.m = m
	s.base, s.stop = context.WithCancel(context.Background())
	return s, nil
}

// ObserveReap counts holds the reaper expired; pass it as
// inventory.Reaper.OnReap. The event is not a label: series stay few
// however many events there are.
func (s *Server) ObserveReap(event string, n int) {
	if n > 0 {
		s.m.reaped.Add(float64(n))
	}
}

// Serve answers requests on ln until ctx ends, then shuts down gracefully:
// it stops accepting, lets requests in flight finish for up to
// ShutdownGrace, and returns. It returns nil after a shutdown. If the
// grace runs out, the store calls still running are cancelled, and so is
// every later store call of this Server: it is done.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := s.fasthttpServer()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	err := srv.ShutdownWithContext(sctx)
	if err != nil {
		// Out of time: cancel the store calls still running.
		s.stop()
		s.log.Warn("inventory api: shutdown did not finish in time", "err", err)
	}
	if serr := <-done; serr != nil && err == nil {
		err = serr
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

// ListenAndServe listens on the TCP address addr and calls Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("api: %w", err)
	}
	return s.Serve(ctx, ln)
}

func (s *Server) fasthttpServer() *fasthttp.Server {
	return &fasthttp.Server{
		Handler:                      s.Handler,
		ErrorHandler:                 s.transportError,
		ReadTimeout:                  s.opts.ReadTimeout,
		WriteTimeout:                 s.opts.WriteTimeout,
		IdleTimeout:                  s.opts.IdleTimeout,
		MaxRequestBodySize:           s.opts.MaxBodyBytes,
		NoDefaultServerHeader:        true,
		DisablePreParseMultipartForm: true,
		CloseOnShutdown:              true,
		Logger:                       fasthttpLogger{s.log},
	}
}

// transportError answers a request fasthttp could not read.
func (s *Server) transportError(ctx *fasthttp.RequestCtx, err error) {
	var e apiError
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		e = apiError{code: CodePayloadTooLarge, message: fmt.Sprintf("the request body exceeds %d bytes", s.opts.MaxBodyBytes)}
	case errors.As(err, &small):
		e = apiError{code: CodeHeadersTooLarge, message: "the request headers are too large"}
	case isTimeout(err):
		e = apiError{code: CodeRequestTimeout, message: "the request was not received in time"}
	default:
		e = invalid("the request is not valid HTTP/1.1")
	}
	writeError(ctx, e)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// fasthttpLogger sends fasthttp's own complaints to slog at debug level:
// they are about clients, not about the sidecar.
type fasthttpLogger struct{ l *slog.Logger }

func (f fasthttpLogger) Printf(format string, args ...any) {
	f.l.Debug("inventory api: " + fmt.Sprintf(format, args...))
}

// Handler answers one request. It may be used with a fasthttp.Server of
// the caller's own; nothing it is given is kept after it returns.
func (s *Server) Handler(ctx *fasthttp.RequestCtx) {
	start := time.Now()
	routeIdx, label := len(s.routes), unmatched
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("inventory api: panic", "route", label, "panic", r, "stack", string(debug.Stack()))
			writeError(ctx, apiError{code: CodeInternal, message: "internal error"})
		}
		s.m.observe(routeIdx, label, ctx.Method(), ctx.Response.StatusCode(), time.Since(start))
	}()

	var segs [maxSegments][]byte
	n := splitPath(ctx.URI().PathOriginal(), &segs)
	var r *route
	if i := match(s.routes, &segs, n); i >= 0 {
		r = s.routes[i]
		routeIdx, label = i, r.pattern
	}
	if (r == nil || !r.open) && !s.authorized(ctx) {
		writeError(ctx, apiError{code: CodeUnauthorized, message: "a valid bearer token is required"})
		return
	}
	if r == nil {
		writeError(ctx, apiError{code: CodeNotFound, message: "no such endpoint"})
		return
	}
	ep := r.endpointOf(ctx.Method())
	if ep == nil {
		writeError(ctx, apiError{code: CodeMethodNotAllowed, message: "method not allowed; see the Allow header", allow: r.allow})
		return
	}
	p, perr := r.pathParams(&segs)
	if perr != nil {
		writeError(ctx, *perr)
		return
	}
	p.route = r.pattern
	if e, ok := checkQuery(ctx, ep.query); !ok {
		writeError(ctx, e)
		return
	}
	if ep.body {
		if e, ok := s.checkBody(ctx, ep.bodyRequired); !ok {
			writeError(ctx, e)
			return
		}
	}
	ep.h(s, ctx, p)
}

// authorized checks the bearer token in constant time (of the token's
// hash, so the length does not leak either).
func (s *Server) authorized(ctx *fasthttp.RequestCtx) bool {
	if s.noAuth {
		return true
	}
	h := ctx.Request.Header.Peek("Authorization")
	const scheme = "bearer "
	if len(h) <= len(scheme) || !bytes.EqualFold(h[:len(scheme)], []byte(scheme)) {
		return false
	}
	sum := sha256.Sum256(bytes.TrimSpace(h[len(scheme):]))
	return subtle.ConstantTimeCompare(sum[:], s.tokenSum[:]) == 1
}

// checkQuery refuses query parameters the endpoint does not take, and
// repeated ones.
func checkQuery(ctx *fasthttp.RequestCtx, allowed []string) (apiError, bool) {
	args := ctx.QueryArgs()
	if args.Len() == 0 {
		return apiError{}, true
	}
	for key := range args.All() {
		known := false
		for _, a := range allowed {
			if string(key) == a {
				known = true
				break
			}
		}
		switch {
		case !known:
			return invalid("query: unknown parameter " + quoteInput(string(key))), false
		case len(args.PeekMulti(string(key))) > 1:
			return invalid("query: " + string(key) + " given more than once"), false
		}
	}
	return apiError{}, true
}

// checkBody enforces the body's size, content type and encoding.
func (s *Server) checkBody(ctx *fasthttp.RequestCtx, required bool) (apiError, bool) {
	body := ctx.PostBody()
	if len(body) > s.opts.MaxBodyBytes {
		return apiError{code: CodePayloadTooLarge, message: fmt.Sprintf("the request body exceeds %d bytes", s.opts.MaxBodyBytes)}, false
	}
	if ce := ctx.Request.Header.Peek("Content-Encoding"); len(ce) > 0 && !bytes.EqualFold(ce, []byte("identity")) {
		return apiError{code: CodeUnsupportedMediaType, message: "request bodies must not be compressed"}, false
	}
	if len(body) == 0 {
		if required {
			return invalid("body: a JSON object is required"), false
		}
		return apiError{}, true
	}
	if !isJSON(ctx.Request.Header.ContentType()) {
		return apiError{code: CodeUnsupportedMediaType, message: "the request body must be application/json"}, false
	}
	return apiError{}, true
}

// isJSON reports whether a Content-Type is application/json, parameters
// (such as charset) aside.
func isJSON(ct []byte) bool {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return bytes.EqualFold(bytes.TrimSpace(ct), []byte("application/json"))
}

// header returns a request header as a fresh string; ok is false when it
// is given more than once (which value counts would be a guess).
func header(ctx *fasthttp.RequestCtx, name string) (v string, present, ok bool) {
	all := ctx.Request.Header.PeekAll(name)
	switch len(all) {
	case 0:
		return "", false, true
	case 1:
		return string(all[0]), true, true
	}
	return "", true, false
}

// callHeaders reads Idempotency-Key and X-Waitroom-Actor.
func callHeaders(ctx *fasthttp.RequestCtx, idempotent bool) (key, actor string, e apiError, ok bool) {
	if idempotent {
		var present bool
		key, present, ok = header(ctx, "Idempotency-Key")
		if !ok {
			return "", "", invalid("Idempotency-Key: given more than once"), false
		}
		if present && !inventory.ValidIdempotencyKey(key) {
			return "", "", invalid(fmt.Sprintf("Idempotency-Key: must be 1-%d printable ASCII characters", inventory.MaxKeyLen)), false
		}
	}
	actor, _, ok = header(ctx, "X-Waitroom-Actor")
	if !ok {
		return "", "", invalid("X-Waitroom-Actor: given more than once"), false
	}
	if !inventory.ValidActor(actor) {
		return "", "", invalid(fmt.Sprintf("X-Waitroom-Actor: must be at most %d characters of UTF-8 text without control characters", inventory.MaxActorLen)), false
	}
	return key, actor, apiError{}, true
}

// fail answers a store error. Storage failures (and errors without a
// sentinel) are logged with their text and counted; the client learns
// only that the store is unavailable.
func (s *Server) fail(ctx *fasthttp.RequestCtx, route string, err error) {
	e, ok := storeError(err)
	if !ok {
		s.m.storeFailures.WithLabelValues(route).Inc()
		s.log.Error("inventory api: store failure", "route", route, "err", err)
	}
	writeError(ctx, e)
}
