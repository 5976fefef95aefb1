package netlimit

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Backoff of Accept after a transient error.
const (
	MinAcceptBackoff = 5 * time.Millisecond
	MaxAcceptBackoff = time.Second
	// acceptLogEvery is the least time between two log lines about
	// accept errors of one listener.
	acceptLogEvery = time.Second
)

// Limits bound a listener's connections.
type Limits struct {
	// MaxConns is the most connections open at once; 0 means no limit.
	MaxConns int
	// MaxConnsPerClient is the most connections open at once from one
	// client address (IPv4 address, IPv6 /64); 0 means no limit.
	MaxConnsPerClient int
	// Exempt, when set, names the addresses without a per-client limit
	// (trusted proxies).
	Exempt func(netip.Addr) bool
}

// Listener wraps a net.Listener: its Accept retries transient errors
// with a backoff and enforces Limits. It is safe for concurrent use.
type Listener struct {
	net.Listener
	name    string
	limits  Limits
	log     *slog.Logger
	m       *Metrics
	slots   chan struct{} // one token per open connection (nil: no limit)
	closed  chan struct{}
	once    sync.Once
	sleep   func(time.Duration, <-chan struct{}) bool
	lastLog time.Time
	dropped int // failures not logged since lastLog

	mu      sync.Mutex
	clients map[netip.Addr]int
	open    atomic.Int64
}

// Wrap returns ln wrapped. name labels its metrics and log lines ("http",
// "https", "admin", "inventory"); m may be nil (no metrics), log nil
// (slog.Default).
func Wrap(ln net.Listener, name string, limits Limits, m *Metrics, log *slog.Logger) *Listener {
	if log == nil {
		log = slog.Default()
	}
	l := &Listener{Listener: ln, name: name, limits: limits, log: log, m: m,
		closed: make(chan struct{}), clients: make(map[netip.Addr]int), sleep: sleep}
	if limits.MaxConns > 0 {
		l.slots = make(chan struct{}, limits.MaxConns)
	}
	if m != nil {
		m.open.WithLabelValues(name).Set(0)
		for _, lim := range []string{limitTotal, limitPerClient} {
			m.limited.WithLabelValues(name, lim)
		}
		m.acceptErrors.WithLabelValues(name)
	}
	return l
}

// sleep waits d or until done is closed; it reports whether d passed.
func sleep(d time.Duration, done <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

// Accept waits for a free connection slot, then for a connection. It
// returns an error only when the listener is closed or fails for good.
func (l *Listener) Accept() (net.Conn, error) {
	if l.slots != nil {
		select {
		case l.slots <- struct{}{}:
		default:
			l.count(limitTotal)
			select {
			case l.slots <- struct{}{}:
			case <-l.closed:
				return nil, net.ErrClosed
			}
		}
	}
	delay := time.Duration(0)
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			if wc := l.admit(c); wc != nil {
				return wc, nil
			}
			delay = 0
			continue
		}
		if !Transient(err) {
			l.freeSlot()
			return nil, err
		}
		if delay == 0 {
			delay = MinAcceptBackoff
		} else {
			delay = min(2*delay, MaxAcceptBackoff)
		}
		l.acceptFailed(err, delay)
		if !l.sleep(delay, l.closed) {
			l.freeSlot()
			return nil, net.ErrClosed
		}
	}
}

// admit applies the per-client limit to a new connection: it returns the
// wrapped connection, or nil after closing one over the limit.
func (l *Listener) admit(c net.Conn) net.Conn {
	wc := &conn{Conn: c, l: l}
	if ra := c.RemoteAddr(); ra != nil {
		wc.peer, wc.peerKnown = addrOf(ra), true
	}
	if max := l.limits.MaxConnsPerClient; max > 0 {
		a := clientKey(c.RemoteAddr())
		if a.IsValid() && (l.limits.Exempt == nil || !l.limits.Exempt(a)) {
			l.mu.Lock()
			n := l.clients[a]
			if n >= max {
				l.mu.Unlock()
				l.count(limitPerClient)
				c.Close()
				return nil
			}
			l.clients[a] = n + 1
			l.mu.Unlock()
			wc.client, wc.counted = a, true
		}
	}
	l.open.Add(1)
	if l.m != nil {
		l.m.open.WithLabelValues(l.name).Inc()
	}
	return wc
}

// release ends a connection's hold on its slots.
func (l *Listener) release(c *conn) {
	if c.counted {
		l.mu.Lock()
		if n := l.clients[c.client] - 1; n > 0 {
			l.clients[c.client] = n
		} else {
			delete(l.clients, c.client)
		}
		l.mu.Unlock()
	}
	l.open.Add(-1)
	if l.m != nil {
		l.m.open.WithLabelValues(l.name).Dec()
	}
	l.freeSlot()
}

func (l *Listener) freeSlot() {
	if l.slots != nil {
		<-l.slots
	}
}

func (l *Listener) count(limit string) {
	if l.m != nil {
		l.m.limited.WithLabelValues(l.name, limit).Inc()
	}
}

// acceptFailed counts a transient accept error and logs it, at most once
// a second.
func (l *Listener) acceptFailed(err error, delay time.Duration) {
	if l.m != nil {
		l.m.acceptErrors.WithLabelValues(l.name).Inc()
	}
	now := time.Now()
	l.mu.Lock()
	if now.Sub(l.lastLog) < acceptLogEvery {
		l.dropped++
		l.mu.Unlock()
		return
	}
	dropped := l.dropped
	l.lastLog, l.dropped = now, 0
	l.mu.Unlock()
	l.log.Warn("netlimit: accept failed, retrying", "listener", l.name, "err", err,
		"retry_in", delay.String(), "suppressed", dropped, "open", l.open.Load())
}

// Close closes the listener; an Accept waiting for a slot or a backoff
// returns net.ErrClosed. Open connections are not closed.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

// Open returns how many accepted connections are open.
func (l *Listener) Open() int { return int(l.open.Load()) }

// Transient reports whether an Accept error passes by itself: running
// out of descriptors, buffers or memory, a connection aborted before it
// was accepted, an interrupted call, a firewall's refusal, a timeout.
func Transient(err error) bool {
	if err == nil || errors.Is(err, net.ErrClosed) {
		return false
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.EMFILE, syscall.ENFILE, syscall.ECONNABORTED, syscall.ECONNRESET, syscall.ENOBUFS,
			syscall.ENOMEM, syscall.EPROTO, syscall.EPERM, syscall.EINTR, syscall.EAGAIN, syscall.ETIMEDOUT:
			return true
		}
		return false
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// clientKey is the address a per-client limit counts: the IPv4 address,
// or the IPv6 /64 (one subscriber's usual allocation).
func clientKey(a net.Addr) netip.Addr {
	var ap netip.AddrPort
	switch t := a.(type) {
	case *net.TCPAddr:
		ap = t.AddrPort()
	default:
		if a == nil {
			return netip.Addr{}
		}
		var err error
		if ap, err = netip.ParseAddrPort(a.String()); err != nil {
			return netip.Addr{}
		}
	}
	ip := ap.Addr().Unmap().WithZone("")
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.Addr()
	}
	return ip
}

// addrOf is the IP address of a remote net.Addr, IPv4 unmapped, as
// httpguard.PeerAddr reads it; the zero Addr when it is not an IP address.
func addrOf(a net.Addr) netip.Addr {
	switch t := a.(type) {
	case *net.TCPAddr:
		ip, ok := netip.AddrFromSlice(t.IP)
		if !ok {
			return netip.Addr{}
		}
		return ip.Unmap()
	default:
		ap, err := netip.ParseAddrPort(a.String())
		if err != nil {
			return netip.Addr{}
		}
		return ap.Addr().Unmap()
	}
}

// conn is an accepted connection; Close releases its slots once. Its
// deadlines are deferred (see deferredDeadlines).
type conn struct {
	net.Conn
	l    *Listener
	peer netip.Addr // addrOf(RemoteAddr()), read once
	// peerKnown: RemoteAddr was not nil (for a nil one, fasthttp
	// substitutes its own, so PeerAddr answers nothing).
	peerKnown bool
	client    netip.Addr
	counted   bool
	done      atomic.Bool
	dl        deferredDeadlines
}

// PeerAddr returns the address of the connection's peer, read once at
// Accept, and whether it is known: httpguard.PeerAddr asks for it on every
// request instead of converting RemoteAddr's net.Addr each time.
func (c *conn) PeerAddr() (netip.Addr, bool) { return c.peer, c.peerKnown }

func (c *conn) Read(b []byte) (int, error)  { return c.dl.readWith(c.Conn, b) }
func (c *conn) Write(b []byte) (int, error) { return c.dl.writeWith(c.Conn, b) }

func (c *conn) SetDeadline(t time.Time) error { return c.dl.setDeadline(c.Conn, t) }

func (c *conn) SetReadDeadline(t time.Time) error {
	return c.dl.read.set(t, c.Conn.SetReadDeadline)
}

func (c *conn) SetWriteDeadline(t time.Time) error {
	return c.dl.write.set(t, c.Conn.SetWriteDeadline)
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	if c.done.CompareAndSwap(false, true) {
		c.l.release(c)
	}
	return err
}

// NetConn returns the accepted connection itself.
func (c *conn) NetConn() net.Conn { return c.Conn }

// Limit labels of the connection limit metric.
const (
	limitTotal     = "total"
	limitPerClient = "per_client"
)

// Metrics are the listeners' Prometheus metrics. Register it once on a
// registry; any number of listeners share it. Safe for concurrent use.
type Metrics struct {
	acceptErrors *prometheus.CounterVec
	open         *prometheus.GaugeVec
	limited      *prometheus.CounterVec
}

// NewMetrics returns the listener metrics:
//
//	waitroom_accept_errors_total{listener}            transient accept errors, retried
//	waitroom_connections_open{listener}               accepted connections open now
//	waitroom_connection_limit_total{listener,limit}   limit hits: total (Accept waited), per_client (closed)
func NewMetrics() *Metrics {
	return &Metrics{
		acceptErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_accept_errors_total",
			Help: "Transient accept errors (out of file descriptors, aborted connections), retried after a backoff."},
			[]string{"listener"}),
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "waitroom_connections_open",
			Help: "Accepted connections open now."}, []string{"listener"}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_connection_limit_total",
			Help: "Connection limits hit: total (accepting waited for a connection to close), per_client (a connection beyond the per-client limit was closed)."},
			[]string{"listener", "limit"}),
	}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.acceptErrors.Describe(ch)
	m.open.Describe(ch)
	m.limited.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.acceptErrors.Collect(ch)
	m.open.Collect(ch)
	m.limited.Collect(ch)
}

var (
	_ net.Listener         = (*Listener)(nil)
	_ prometheus.Collector = (*Metrics)(nil)
)
