package fakeclock

import (
	"sync/atomic"
	"time"
)

// Clock is a settable clock. The zero value reads the zero time; it is
// safe for concurrent use.
type Clock struct {
	ns atomic.Int64 // unix nanoseconds
}

// New returns a clock reading t.
func New(t time.Time) *Clock {
	c := &Clock{}
	c.Set(t)
	return c
}

// Now returns the clock's time, in UTC.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) { c.ns.Add(int64(d)) }
