package netlimit

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// deferredDeadlines keeps a connection's read and write deadlines exact
// while re-arming the runtime's timers as rarely as possible.
//
// A server sets a keep-alive connection's deadlines several times for
// every request (fasthttp: the idle timeout before the next request, the
// header timeout once it starts, the write timeout before the response),
// and each move re-arms a runtime timer: a lock, a timer-heap update and a
// clock read, thousands of times a second on a busy connection, nearly
// always to move a deadline further away. So a move to a later deadline
// (or to none) is only recorded: the timer armed earlier stays, and when
// it fires, the Read or Write it interrupts sees that the deadline wanted
// now lies ahead, arms that one and carries on. A move to an earlier
// deadline is armed at once. Reads and writes therefore fail with
// os.ErrDeadlineExceeded exactly when the last deadline set has passed,
// never at an earlier one that was since moved, and a busy connection
// re-arms its timer about once per timeout instead of on every request.
//
// It is safe for concurrent use, as net.Conn requires (net/http moves a
// read deadline from another goroutine to abort a background read).
type deferredDeadlines struct {
	read, write deadline
}

// deadline is one direction's deadline, as nanoseconds since epoch; 0:
// none.
type deadline struct {
	want  atomic.Int64 // the deadline last set
	armed atomic.Int64 // the deadline the connection's timer has
	mu    sync.Mutex   // serialises arming
}

// epoch is what deadlines are counted from: a reading of the monotonic
// clock, so that deadlines set from time.Now (as servers set them)
// compare on it and a step of the wall clock moves none of them.
var epoch = time.Now()

// sinceEpoch is t as a deadline value: 0 for the zero Time (none).
func sinceEpoch(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	if n := int64(t.Sub(epoch)); n != 0 {
		return n
	}
	return -1 // epoch itself: past, not "none"
}

// timeOf is the inverse of sinceEpoch.
func timeOf(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return epoch.Add(time.Duration(n))
}

// set records t; it arms it with apply only when it comes before the
// deadline armed (or none is armed).
func (d *deadline) set(t time.Time, apply func(time.Time) error) error {
	w := sinceEpoch(t)
	d.want.Store(w)
	if a := d.armed.Load(); a != 0 && (w == 0 || w >= a) {
		return nil // the armed timer fires first; expired re-arms then
	}
	return d.arm(apply)
}

// arm gives the connection the deadline wanted now.
func (d *deadline) arm(apply func(time.Time) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	w := d.want.Load()
	if err := apply(timeOf(w)); err != nil {
		return err
	}
	d.armed.Store(w)
	return nil
}

// expired is called when an operation failed on the armed deadline. It
// reports whether the operation should be tried again: the deadline
// wanted is later (or none), and it is now armed.
func (d *deadline) expired(err error, apply func(time.Time) error) bool {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return false
	}
	w := d.want.Load()
	if w != 0 && int64(time.Since(epoch)) >= w {
		return false // the deadline wanted has passed too
	}
	return d.arm(apply) == nil
}

// readWith reads from c under the deferred read deadline.
func (dd *deferredDeadlines) readWith(c net.Conn, b []byte) (int, error) {
	for {
		n, err := c.Read(b)
		if err == nil || n > 0 || !dd.read.expired(err, c.SetReadDeadline) {
			return n, err
		}
	}
}

// writeWith writes b to c under the deferred write deadline; a write the
// armed deadline cut short goes on with the rest.
func (dd *deferredDeadlines) writeWith(c net.Conn, b []byte) (int, error) {
	n, err := c.Write(b)
	for err != nil && n < len(b) && dd.write.expired(err, c.SetWriteDeadline) {
		var m int
		m, err = c.Write(b[n:])
		n += m
	}
	return n, err
}

func (dd *deferredDeadlines) setDeadline(c net.Conn, t time.Time) error {
	rerr := dd.read.set(t, c.SetReadDeadline)
	werr := dd.write.set(t, c.SetWriteDeadline)
	return errors.Join(rerr, werr)
}
