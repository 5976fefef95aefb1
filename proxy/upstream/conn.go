package upstream

import (
	"crypto/tls"
	"net"
	"time"
)

// pooledConn is a connection of a fasthttp.HostClient's pool, as
// HostClient.AcquireConn returns it. fasthttp does not export the type's
// name (*fasthttp.clientConn), only its methods, so waitroom holds it
// through this interface and gives it back with handBack.
type pooledConn interface {
	Conn() net.Conn
	LastUseTime() time.Time
}

// handBack calls f — HostClient.ReleaseConn or HostClient.CloseConn —
// with cc, recovering cc's concrete type from f's signature.
func handBack[C pooledConn](f func(C), cc pooledConn) {
	f(cc.(C))
}

// probeIdleAfter is how long a pooled connection may have been idle
// before it is used without first checking that the origin has not closed
// it.
const probeIdleAfter = time.Second

// needsProbe reports whether cc was idle in the pool long enough that the
// origin may have closed it meanwhile. A fresh connection never needs it.
func needsProbe(cc pooledConn, now time.Time) bool {
	last := cc.LastUseTime()
	return !last.IsZero() && now.Sub(last) > probeIdleAfter
}

// alive reports whether the origin has not closed an idle connection: a
// non-blocking read finds nothing to read. Anything read (a FIN, a TLS
// close_notify, stray bytes) means the connection must not be used.
func alive(c net.Conn) bool {
	if lc, ok := c.(*lazyDeadlines); ok {
		c = lc.Conn
	}
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	return peekAlive(c)
}

// maxDeadlineSlack bounds how much earlier than asked a deadline on an
// origin connection may fall (see lazyDeadlines).
const maxDeadlineSlack = time.Second

// lazyDeadlines is an origin connection whose read and write deadlines
// are re-armed only when they would move by more than slack: an eighth of
// the shorter of the origin's timeouts, at most maxDeadlineSlack. Each
// request on a keep-alive connection sets both deadlines, and re-arming
// one costs a runtime timer update; with requests milliseconds apart,
// nearly all of them are skipped, and a timeout fires at most slack early
// (after at least seven eighths of it). It is used by one request at a
// time, as the pool hands it out.
type lazyDeadlines struct {
	net.Conn
	slack       time.Duration
	read, write time.Time
}

// newLazyDeadlines wraps c for an origin with the given timeouts.
func newLazyDeadlines(c net.Conn, timeouts ...time.Duration) *lazyDeadlines {
	slack := maxDeadlineSlack
	for _, t := range timeouts {
		if t > 0 {
			slack = min(slack, t/8)
		}
	}
	return &lazyDeadlines{Conn: c, slack: slack}
}

func (c *lazyDeadlines) SetReadDeadline(t time.Time) error {
	return c.set(t, &c.read, c.Conn.SetReadDeadline)
}

func (c *lazyDeadlines) SetWriteDeadline(t time.Time) error {
	return c.set(t, &c.write, c.Conn.SetWriteDeadline)
}

func (c *lazyDeadlines) SetDeadline(t time.Time) error {
	c.read, c.write = t, t
	return c.Conn.SetDeadline(t)
}

// set moves a deadline to t unless it already stands less than slack
// before t. A zero t, which clears it, always goes through.
func (c *lazyDeadlines) set(t time.Time, cur *time.Time, apply func(time.Time) error) error {
	if !t.IsZero() && !cur.IsZero() && !cur.After(t) && t.Sub(*cur) < c.slack {
		return nil
	}
	if err := apply(t); err != nil {
		return err
	}
	*cur = t
	return nil
}
