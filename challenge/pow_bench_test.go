package challenge_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/challenge"
)

// BenchmarkVerify measures one verification of a good solution; its cost
// does not depend on bits (K hashes and one HMAC). The target is 200,000
// verifies/s per core with K=16 (make bench-challenge checks it).
func BenchmarkVerify(b *testing.B) {
	for _, k := range []uint8{8, 16, 32} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			pow := newPoW(b)
			p := params()
			p.Bits, p.Puzzles = 10, k
			token, _, nonces := issue(b, pow, p)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := pow.Verify(token, nonces, p.Event, p.Binding, p.Now); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "verifies/s")
		})
	}
}

// BenchmarkVerifyForged is the cost of refusing a forged token: one HMAC.
func BenchmarkVerifyForged(b *testing.B) {
	pow := newPoW(b)
	p := params()
	p.Puzzles = 16
	token, _, nonces := issue(b, pow, p)
	forged := flipChar(token, 20)
	b.ReportAllocs()
	for b.Loop() {
		pow.Verify(forged, nonces, p.Event, p.Binding, p.Now)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "verifies/s")
}

// BenchmarkVerifyRedeem is a join's whole check: Verify, then Redeem in
// the memstore guard, each time with a fresh challenge id (the cost of
// Redeem does not depend on the token).
func BenchmarkVerifyRedeem(b *testing.B) {
	pow := newPoW(b)
	p := params()
	p.Puzzles = 16
	p.Now = time.Now()
	token, _, nonces := issue(b, pow, p)
	ctx := context.Background()
	var n uint64
	b.ReportAllocs()
	for b.Loop() {
		c, err := pow.Verify(token, nonces, p.Event, p.Binding, p.Now)
		if err != nil {
			b.Fatal(err)
		}
		n++
		binary.BigEndian.PutUint64(c.ID[8:], n)
		if err := pow.Redeem(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "joins/s")
}

func BenchmarkIssue(b *testing.B) {
	pow := newPoW(b)
	p := params()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := pow.Issue(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSolve reports the Go solver's hash rate, to compare with the
// browser's.
func BenchmarkSolve(b *testing.B) {
	seed := [16]byte{1, 2, 3}
	var hashes uint64
	for b.Loop() {
		seed[15]++
		for _, n := range challenge.Solve(seed, 12, 4) {
			hashes += n + 1
		}
	}
	b.ReportMetric(float64(hashes)/b.Elapsed().Seconds(), "hashes/s")
}
