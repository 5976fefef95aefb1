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
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	return peekAlive(c)
}
