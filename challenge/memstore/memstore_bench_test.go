package memstore

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkRedeem redeems fresh ids with the default options, the exact
// set full (each redeem also drops the earliest-expiring id). Past
// DefaultExpectedPerWindow ids (long runs) the filter is overfull and
// fresh ids start being refused: the "refused" metric shows how many.
func BenchmarkRedeem(b *testing.B) {
	g := New(Options{Window: 5 * time.Minute})
	defer g.Close()
	exp := time.Now().Add(5 * time.Minute)
	id := make([]byte, 16)
	var n uint64
	for range DefaultMaxExact {
		n++
		binary.BigEndian.PutUint64(id, n)
		g.Redeem(ctx, id, exp)
	}
	refused := 0
	b.ReportAllocs()
	for b.Loop() {
		n++
		binary.BigEndian.PutUint64(id, n)
		ok, err := g.Redeem(ctx, id, exp)
		if err != nil {
			b.Fatal(err)
		}
		if !ok {
			refused++
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "redeems/s")
	b.ReportMetric(float64(refused)/float64(b.N), "refused/op")
}

// BenchmarkRedeemReplay redeems an id already redeemed.
func BenchmarkRedeemReplay(b *testing.B) {
	g := New(Options{Window: 5 * time.Minute})
	defer g.Close()
	exp := time.Now().Add(5 * time.Minute)
	id := []byte("0123456789abcdef")
	g.Redeem(ctx, id, exp)
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := g.Redeem(ctx, id, exp); ok {
			b.Fatal("replay accepted")
		}
	}
}

// BenchmarkRedeemParallel: fresh ids from every P, one mutex.
func BenchmarkRedeemParallel(b *testing.B) {
	g := New(Options{Window: 5 * time.Minute})
	defer g.Close()
	exp := time.Now().Add(5 * time.Minute)
	var next, refused atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		id := make([]byte, 16)
		binary.BigEndian.PutUint64(id[8:], next.Add(1))
		var n uint64
		for pb.Next() {
			n++
			binary.BigEndian.PutUint64(id, n)
			ok, err := g.Redeem(ctx, id, exp)
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				refused.Add(1)
			}
		}
	})
	b.ReportMetric(float64(refused.Load())/float64(b.N), "refused/op")
}
