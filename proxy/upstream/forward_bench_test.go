package upstream

import (
	"testing"
)

// BenchmarkForward forwards a small GET with cookies to a fasthttp origin
// over loopback TCP, one request at a time.
func BenchmarkForward(b *testing.B) {
	o := testOrigin(b, Config{}, smallOrigin(b))
	f := newForwardFixture(b, o)
	f.run()
	b.ReportAllocs()
	for b.Loop() {
		f.run()
	}
}

// BenchmarkForwardParallel is BenchmarkForward from GOMAXPROCS goroutines.
func BenchmarkForwardParallel(b *testing.B) {
	o := testOrigin(b, Config{}, smallOrigin(b))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		f := newForwardFixture(b, o)
		for pb.Next() {
			f.run()
		}
	})
}
