package upstream

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// coolDown is how long an address that refused a connection is passed
// over while other addresses are available.
const coolDown = time.Second

// Origin is one origin behind the proxy: a pool of addresses, each with
// its own keep-alive connections (a fasthttp.HostClient used as the pool),
// health state and load count. It is safe for concurrent use; Forward may
// run from any number of handlers at once.
type Origin struct {
	cfg     Config
	log     *slog.Logger
	members []*member
	name    string

	inflight atomic.Int64
	anon     atomic.Int64  // of inflight, requests not admitted
	anonMax  int64         // MaxInFlight less the share reserved for admitted visitors
	next     atomic.Uint32 // round-robin start of pick
	healthy  atomic.Int32  // members currently healthy

	mu     sync.Mutex
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed bool
}

// member is one address of an origin.
type member struct {
	addr string
	hc   *fasthttp.HostClient // the connection pool (dial, MaxConns, idle cleanup, buffers)

	pending   atomic.Int32 // requests in flight on this address
	healthy   atomic.Bool
	coolUntil atomic.Int64 // unix nanoseconds; passed over until then
}

// New returns the origin cfg describes, every address healthy until a
// health check says otherwise. log receives health changes and failures
// (slog.Default when nil). Call Start to run the health checks and Close
// when done.
func New(cfg Config, log *slog.Logger) (*Origin, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	o := &Origin{cfg: cfg, log: log.With("origin", cfg.Name), name: cfg.Name}
	o.anonMax = int64(cfg.MaxInFlight) - int64(math.Ceil(cfg.ReservedAdmitted*float64(cfg.MaxInFlight)))
	for _, addr := range cfg.Addrs {
		m := &member{addr: addr}
		m.hc = &fasthttp.HostClient{
			Addr:                     addr,
			DialTimeout:              o.dialer(addr),
			MaxConns:                 cfg.MaxConns,
			MaxConnWaitTimeout:       cfg.MaxConnWaitTimeout,
			MaxIdleConnDuration:      cfg.MaxIdleConnDuration,
			ReadBufferSize:           cfg.ReadBufferSize,
			WriteBufferSize:          16 << 10,
			ConnPoolStrategy:         fasthttp.LIFO,
			NoDefaultUserAgentHeader: true,
		}
		m.healthy.Store(true)
		o.members = append(o.members, m)
	}
	o.healthy.Store(int32(len(o.members)))
	return o, nil
}

// Name returns the origin's name.
func (o *Origin) Name() string { return o.name }

// Healthy reports whether any address is healthy.
func (o *Origin) Healthy() bool { return o.healthy.Load() > 0 }

// InFlight returns the requests in flight to the origin: forwarded and
// not yet done (response body relayed, WebSocket closed).
func (o *Origin) InFlight() int { return int(o.inflight.Load()) }

// MaxInFlight returns the shedding limit in force.
func (o *Origin) MaxInFlight() int { return o.cfg.MaxInFlight }

// AnonymousInFlight returns the requests in flight that were not
// admitted (Forward.Admitted false).
func (o *Origin) AnonymousInFlight() int { return int(o.anon.Load()) }

// errShedReserved is ErrShed for a request refused because the rest of the
// in-flight limit is reserved for admitted visitors.
var errShedReserved = fmt.Errorf("%w: %w", ErrShed, ErrReserved)

// enter takes an in-flight slot: an anonymous request only below
// MaxInFlight less the reserved share, any request below MaxInFlight.
func (o *Origin) enter(anon bool) error {
	if anon {
		if o.anon.Add(1) > o.anonMax {
			o.anon.Add(-1)
			return errShedReserved
		}
	}
	if o.inflight.Add(1) > int64(o.cfg.MaxInFlight) {
		o.inflight.Add(-1)
		if anon {
			o.anon.Add(-1)
		}
		return ErrShed
	}
	return nil
}

// leave gives back a slot enter took.
func (o *Origin) leave(anon bool) {
	o.inflight.Add(-1)
	if anon {
		o.anon.Add(-1)
	}
}

// Start runs the health checks (when Health.Path or Health.TCP is set)
// in the background until ctx ends or Close is called. It returns at
// once.
func (o *Origin) Start(ctx context.Context) {
	if o.cfg.Health.Path == "" && !o.cfg.Health.TCP {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.cancel != nil {
		return
	}
	ctx, o.cancel = context.WithCancel(ctx)
	for _, m := range o.members {
		o.wg.Add(1)
		go func() {
			defer o.wg.Done()
			o.checkLoop(ctx, m)
		}()
	}
}

// Close stops the health checks, waits for them, and closes the idle
// connections. Requests in flight finish on their connections.
func (o *Origin) Close() {
	o.mu.Lock()
	o.closed = true
	cancel := o.cancel
	o.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	o.wg.Wait()
	for _, m := range o.members {
		m.hc.CloseIdleConnections()
	}
}

// pick returns the healthy address with the fewest requests in flight,
// starting the scan at a rotating position so that ties spread; addresses
// cooling down after a refused connection are taken only when no other
// healthy one is left. It returns nil when no address is healthy.
func (o *Origin) pick(now int64, avoid *member) *member {
	n := len(o.members)
	start := int(o.next.Add(1))
	var best, fallback *member
	for i := range n {
		m := o.members[(start+i)%n]
		if !m.healthy.Load() {
			continue
		}
		if m == avoid || m.coolUntil.Load() > now {
			if fallback == nil || m.pending.Load() < fallback.pending.Load() {
				fallback = m
			}
			continue
		}
		if best == nil || m.pending.Load() < best.pending.Load() {
			best = m
		}
	}
	if best == nil {
		return fallback
	}
	return best
}

// dialer returns the HostClient dial function for addr: TCP (or
// cfg.Dial) within DialTimeout, then the TLS handshake within what is
// left of it.
func (o *Origin) dialer(addr string) fasthttp.DialFuncWithTimeout {
	var tlsConf *tls.Config
	if o.cfg.TLS {
		name := o.cfg.TLSServerName
		if name == "" {
			name, _, _ = net.SplitHostPort(addr)
		}
		tlsConf = &tls.Config{ServerName: name, RootCAs: o.cfg.RootCAs, MinVersion: tls.VersionTLS12}
	}
	timeout := o.cfg.DialTimeout
	readTimeout, writeTimeout := o.cfg.ReadTimeout, o.cfg.WriteTimeout
	custom := o.cfg.Dial
	return func(addr string, _ time.Duration) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var c net.Conn
		var err error
		if custom != nil {
			c, err = custom(addr)
		} else {
			var d net.Dialer
			c, err = d.DialContext(ctx, "tcp", addr)
		}
		if err != nil {
			return nil, err
		}
		if tlsConf == nil {
			return newLazyDeadlines(c, readTimeout, writeTimeout), nil
		}
		tc := tls.Client(c, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		return newLazyDeadlines(tc, readTimeout, writeTimeout), nil
	}
}
