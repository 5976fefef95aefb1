package proxyproto

import (
	"bufio"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultTimeout is how long a trusted peer has to send the whole header
// when Config.Timeout is 0.
const DefaultTimeout = 5 * time.Second

// Config configures a Listener.
type Config struct {
	// Trusted reports whether a peer is a load balancer allowed to send
	// a PROXY header (httpguard.Trusted.Contains). Nil trusts nobody:
	// every connection is refused.
	Trusted func(netip.Addr) bool
	// Timeout is how long a trusted peer has, from accept, to send the
	// whole header; DefaultTimeout when 0.
	Timeout time.Duration
}

// Listener wraps a net.Listener: it accepts connections from trusted
// peers only, reads each one's PROXY header, and hands the connection out
// with the header's source as RemoteAddr. It is safe for concurrent use.
type Listener struct {
	inner   net.Listener
	trusted func(netip.Addr) bool
	timeout time.Duration

	start sync.Once
	ready chan net.Conn
	errs  chan error
	// pull lets the accept loop retry after an error only when Accept is
	// called again, so the caller's back-off paces the retries and the
	// next error it sees is fresh.
	pull       chan struct{}
	errWaiting atomic.Bool
	done       chan struct{}
	closeOnce  sync.Once
	closeErr   error

	untrusted, malformed, timedOut, accepted atomic.Uint64
}

// NewListener wraps inner. Close the Listener, not inner.
func NewListener(inner net.Listener, c Config) *Listener {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return &Listener{inner: inner, trusted: c.Trusted, timeout: c.Timeout,
		ready: make(chan net.Conn), errs: make(chan error), pull: make(chan struct{}, 1), done: make(chan struct{})}
}

// Accept returns the next connection whose header has been read. An
// error of the listener beneath is returned as it is, once per Accept
// call; after Close it returns net.ErrClosed.
func (l *Listener) Accept() (net.Conn, error) {
	l.start.Do(func() { go l.loop() })
	if l.errWaiting.CompareAndSwap(true, false) {
		select {
		case l.pull <- struct{}{}:
		default:
		}
	}
	select {
	case c := <-l.ready:
		return c, nil
	case err := <-l.errs:
		l.errWaiting.Store(true)
		return nil, err
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// loop accepts from the listener beneath, closes untrusted peers at once
// and starts a header read for each trusted one.
func (l *Listener) loop() {
	for {
		c, err := l.inner.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				l.Close()
				return
			}
			select {
			case l.errs <- err:
			case <-l.done:
				return
			}
			select {
			case <-l.pull:
			case <-l.done:
				return
			}
			continue
		}
		if l.trusted == nil || !l.trusted(peerAddr(c.RemoteAddr())) {
			l.untrusted.Add(1)
			c.Close()
			continue
		}
		go l.handshake(c)
	}
}

// handshake reads c's header within the timeout and hands c to Accept,
// or closes it.
func (l *Listener) handshake(c net.Conn) {
	if err := c.SetReadDeadline(time.Now().Add(l.timeout)); err != nil {
		c.Close()
		return
	}
	br := bufio.NewReaderSize(c, BufferSize)
	h, err := ReadHeader(br)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			l.timedOut.Add(1)
		} else {
			l.malformed.Add(1)
		}
		c.Close()
		return
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		c.Close()
		return
	}
	pc := &Conn{Conn: c, r: br, remote: c.RemoteAddr(), header: h}
	if h.Source.IsValid() {
		src := netip.AddrPortFrom(h.Source.Addr().Unmap(), h.Source.Port())
		pc.remote = net.TCPAddrFromAddrPort(src)
	}
	if br.Buffered() == 0 {
		pc.r = nil
	}
	// Counted before the hand-over, so that whoever Accept returns c to
	// already sees it in Stats; taken back if it is never handed over.
	l.accepted.Add(1)
	select {
	case l.ready <- pc:
	case <-l.done:
		l.accepted.Add(^uint64(0))
		c.Close()
	}
}

// Close closes the listener beneath; connections still in their
// handshake are closed as they finish it.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		close(l.done)
		l.closeErr = l.inner.Close()
	})
	return l.closeErr
}

// Addr returns the address of the listener beneath.
func (l *Listener) Addr() net.Addr { return l.inner.Addr() }

// Stats counts connections since the Listener was made.
type Stats struct {
	// Accepted: headers read and connections handed out.
	Accepted uint64
	// Untrusted: closed at once, the peer not being a trusted balancer.
	Untrusted uint64
	// Malformed: closed for a missing or broken header (or a read error).
	Malformed uint64
	// TimedOut: closed for not sending the header in time.
	TimedOut uint64
}

// Stats returns the counts so far.
func (l *Listener) Stats() Stats {
	return Stats{Accepted: l.accepted.Load(), Untrusted: l.untrusted.Load(),
		Malformed: l.malformed.Load(), TimedOut: l.timedOut.Load()}
}

// Conn is a connection whose PROXY header has been read: RemoteAddr is
// the client the header named (the peer itself for LOCAL and unknown
// addresses).
type Conn struct {
	net.Conn
	r      *bufio.Reader // what was read past the header, until drained
	remote net.Addr
	header Header
}

// Read reads what followed the header, then from the connection.
func (c *Conn) Read(p []byte) (int, error) {
	if c.r != nil {
		if c.r.Buffered() > 0 {
			return c.r.Read(p)
		}
		c.r = nil
	}
	return c.Conn.Read(p)
}

// RemoteAddr returns the client's address.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// ClientTLS reports whether the balancer says the client reached it over
// TLS (httpguard.Trusted.Proto asks).
func (c *Conn) ClientTLS() bool { return c.header.TLS }

// Header returns the PROXY header the connection started with.
func (c *Conn) Header() Header { return c.header }

// NetConn returns the connection beneath.
func (c *Conn) NetConn() net.Conn { return c.Conn }

func peerAddr(a net.Addr) netip.Addr {
	if t, ok := a.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(t.IP); ok {
			return ip.Unmap()
		}
		return netip.Addr{}
	}
	if a == nil {
		return netip.Addr{}
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

var _ net.Listener = (*Listener)(nil)
