// Package netlimit keeps waitroom's listeners alive and bounded: a
// net.Listener wrapper whose Accept never fails on a transient error and
// which caps the connections open at once, in total and per client
// address; and a Budget, a count of requests in flight split in classes
// that each keep a reserved share of it.
//
// # Accept errors
//
// A listener whose Accept fails with EMFILE or ENFILE (out of file
// descriptors), ECONNABORTED, ECONNRESET, ENOBUFS, ENOMEM, EPROTO, EPERM,
// EINTR, EAGAIN or a timeout is not dead: the condition passes when
// connections close. Listener.Accept sleeps and tries again instead of
// returning such an error (which makes net/http and fasthttp servers stop
// serving): 5 ms, doubling up to 1 s, back to 5 ms after a success. Each
// failure is counted in Metrics; the log gets at most one line a second
// per listener. Accept returns only when the listener is closed
// (net.ErrClosed) or fails in a way that is not transient.
//
// # Connection limits
//
// Limits.MaxConns bounds the connections a listener has open at once.
// When they are all taken, Accept waits for one to close before it
// accepts again: new clients wait in the kernel's backlog (as with nginx's
// worker_connections or HAProxy's maxconn) rather than being accepted and
// dropped. Limits.MaxConnsPerClient bounds the connections from one client
// address (an IPv4 address, an IPv6 /64); a connection beyond it is
// closed at once, without a response (the listener may sit below TLS,
// where a plain-text answer would be garbage). Addresses for which
// Limits.Exempt answers true (trusted load balancers, whose connections
// carry many clients) have no per-client limit. Every limit hit is
// counted.
//
// A connection counts from Accept until its Close; the wrapper's Close is
// idempotent and releases the slot once.
//
// # Deadlines
//
// An accepted connection's deadlines are exact but deferred: moving a
// read or write deadline later (or clearing it) only records it, and the
// timer armed before stays; when that one fires, the interrupted Read or
// Write arms the deadline wanted now and goes on. A deadline moved
// earlier is armed at once. A read or write therefore fails with
// os.ErrDeadlineExceeded when, and only when, the last deadline set has
// passed, while a keep-alive connection — whose server moves its
// deadlines several times per request, nearly always later — re-arms a
// runtime timer about once per timeout instead of on every move.
//
// # Budgets
//
// A Budget bounds requests in flight (Max) and splits them in classes.
// Each class has a reserved share: at any time the class can take a slot
// as long as it uses less than its reserve, whatever the others do. A
// class may borrow beyond its reserve only what no other class's unused
// reserve needs. So with Max 100, a reserve of 20 for admitted visitors
// and 20 for the waiting-room API, anonymous traffic never holds more
// than 60 slots, and a burst of admitted visitors can use up to 80 when
// the API is idle.
//
// It is not a rate limiter (package ratelimit is), and it does not
// decide who is admitted: the proxy names the class of each request.
package netlimit
