package meter

import (
	"sync/atomic"
	"testing"
	"time"
)

// Run with: go test -run '^$' -bench . -benchmem -cpu 1,2 ./proxy/meter/

// BenchmarkRequest is what metering costs a proxied request: Start, Seen
// and Done, with the real clock, from every core at once.
func BenchmarkRequest(b *testing.B) {
	m := New(Options{})
	e := m.Event("ev")
	var next atomic.Int64
	presences := make([]Presence, 1024)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		p := &presences[next.Add(1)%int64(len(presences))]
		for pb.Next() {
			tok := e.Start()
			e.Seen(p)
			e.Done(tok, 200, false)
		}
	})
}

// BenchmarkRequestAt is BenchmarkRequest for a caller that passes the
// times: one clock read before the origin call, one after, and the
// request's arrival time for SeenAt.
func BenchmarkRequestAt(b *testing.B) {
	m := New(Options{})
	e := m.Event("ev")
	var next atomic.Int64
	presences := make([]Presence, 1024)
	arrived := time.Now()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		p := &presences[next.Add(1)%int64(len(presences))]
		for pb.Next() {
			e.SeenAt(p, arrived)
			tok := e.StartAt(time.Now())
			e.DoneAt(tok, time.Now(), 200, false)
		}
	})
}

// BenchmarkStartDone is Start and Done alone, in parallel.
func BenchmarkStartDone(b *testing.B) {
	e := New(Options{}).Event("ev")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e.Done(e.Start(), 200, false)
		}
	})
}

// BenchmarkSeen is Seen of an already counted visitor, in parallel.
func BenchmarkSeen(b *testing.B) {
	e := New(Options{}).Event("ev")
	var p Presence
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e.Seen(&p)
		}
	})
}

// BenchmarkMeasure is one controller tick's read of a busy event.
func BenchmarkMeasure(b *testing.B) {
	c := &fakeClock{}
	m := New(Options{Clock: c.Now})
	e := m.Event("ev")
	for s := range 6 {
		c.Set(time.Duration(s) * time.Second)
		for i := range 1000 {
			c.Add(time.Microsecond)
			e.Done(e.Start(), 200+i%5*100, false)
		}
	}
	now := c.Now()
	b.ReportAllocs()
	for b.Loop() {
		m.Measure("ev", now)
	}
}
