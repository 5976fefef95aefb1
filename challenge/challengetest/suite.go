package challengetest

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/challenge"
)

// Run runs the conformance suite against the guards newGuard returns, one
// per test. Each must remember nothing yet (a fresh guard, or a fresh key
// prefix over a shared backend) and be closed by newGuard's cleanup when
// the test ends; the suite closes some guards itself, so Close must be
// harmless the second time.
func Run(t *testing.T, newGuard func(t *testing.T) challenge.ReplayGuard) {
	tests := []struct {
		name string
		fn   func(t *testing.T, g challenge.ReplayGuard)
	}{
		{"RedeemOnce", testRedeemOnce},
		{"DistinctIDs", testDistinctIDs},
		{"SameIDConcurrently", testSameIDConcurrently},
		{"DistinctIDsConcurrently", testDistinctIDsConcurrently},
		{"Linearizable", testLinearizable},
		{"Expired", testExpired},
		{"CancelledContext", testCancelledContext},
		{"Close", testClose},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newGuard(t)) })
	}
}

var ctx = context.Background()

// later is an expiry well after any test's end.
func later() time.Time { return time.Now().Add(10 * time.Minute) }

// NewID returns a random 16-byte id, like a challenge's.
func NewID() []byte {
	b := make([]byte, 16)
	crand.Read(b)
	return b
}

func redeem(t *testing.T, g challenge.ReplayGuard, id []byte, expires time.Time, want bool) {
	t.Helper()
	ok, err := g.Redeem(ctx, id, expires)
	if err != nil {
		t.Fatalf("Redeem(%x): %v", id, err)
	}
	if ok != want {
		t.Fatalf("Redeem(%x) = %v, want %v", id, ok, want)
	}
}

// testRedeemOnce: the first redeem of an id succeeds, every later one
// fails, whatever expiry it names.
func testRedeemOnce(t *testing.T, g challenge.ReplayGuard) {
	id := NewID()
	exp := later()
	redeem(t, g, id, exp, true)
	redeem(t, g, id, exp, false)
	redeem(t, g, id, exp.Add(time.Minute), false)
	redeem(t, g, id, exp.Add(-time.Minute), false)
	// The guard keeps no reference to the caller's slice.
	copied := bytes.Clone(id)
	id[0] ^= 0xff
	redeem(t, g, copied, exp, false)
	redeem(t, g, id, exp, true)
}

// testDistinctIDs: ids that differ anywhere, in length or content, are
// independent, including ones that differ only by trailing zeros and long
// ones that differ only at their ends.
func testDistinctIDs(t *testing.T, g challenge.ReplayGuard) {
	r := NewID()
	long := bytes.Repeat(r, 4)
	ids := [][]byte{
		{}, {0}, {0, 0}, []byte("a"), []byte("a\x00"), []byte("ab"),
		r, flipLast(r), append(bytes.Clone(r), 0),
		long[:32], flipLast(long[:32]), long[:33], flipLast(long[:33]),
		long, flipLast(long), bytes.Repeat(r, 64), flipFirst(bytes.Repeat(r, 64)),
	}
	exp := later()
	for _, id := range ids {
		redeem(t, g, id, exp, true)
	}
	for _, id := range ids {
		redeem(t, g, id, exp, false)
	}
}

func flipLast(b []byte) []byte {
	c := bytes.Clone(b)
	c[len(c)-1] ^= 1
	return c
}

func flipFirst(b []byte) []byte {
	c := bytes.Clone(b)
	c[0] ^= 1
	return c
}

// testSameIDConcurrently: of 64 goroutines redeeming one id at once,
// exactly one succeeds.
func testSameIDConcurrently(t *testing.T, g challenge.ReplayGuard) {
	const goroutines = 64
	for round := range 20 {
		id := NewID()
		exp := later()
		var (
			won, errs atomic.Int32
			start     = make(chan struct{})
			wg        sync.WaitGroup
		)
		for range goroutines {
			wg.Go(func() {
				<-start
				ok, err := g.Redeem(ctx, bytes.Clone(id), exp)
				if err != nil {
					errs.Add(1)
				}
				if ok {
					won.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if errs.Load() != 0 || won.Load() != 1 {
			t.Fatalf("round %d: %d of %d concurrent redeems of one id succeeded, %d failed; want exactly 1 and no error",
				round, won.Load(), goroutines, errs.Load())
		}
	}
}

// testDistinctIDsConcurrently: goroutines redeeming their own ids all
// succeed, once.
func testDistinctIDsConcurrently(t *testing.T, g challenge.ReplayGuard) {
	const goroutines, each = 32, 50
	ids := make([][][]byte, goroutines)
	for i := range ids {
		for range each {
			ids[i] = append(ids[i], NewID())
		}
	}
	exp := later()
	for _, want := range []bool{true, false} {
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		for i := range goroutines {
			wg.Go(func() {
				for _, id := range ids[i] {
					ok, err := g.Redeem(ctx, id, exp)
					if err != nil || ok != want {
						errs <- fmt.Errorf("Redeem(%x) = %v, %v; want %v", id, ok, err, want)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}

// testExpired: an id redeemed with an expiry already past is not marked
// (redeeming it again succeeds again), but an id marked until later stays
// used whatever expiry a later redeem names.
func testExpired(t *testing.T, g challenge.ReplayGuard) {
	past := time.Now().Add(-time.Minute)
	id := NewID()
	redeem(t, g, id, past, true)
	redeem(t, g, id, past, true)
	redeem(t, g, id, later(), true)
	redeem(t, g, id, past, false)
	redeem(t, g, id, time.Time{}, false)
	// The zero time and times before 1970 are in the past too.
	for _, exp := range []time.Time{{}, time.Unix(-1, 0), time.Unix(0, 0)} {
		fresh := NewID()
		redeem(t, g, fresh, exp, true)
		redeem(t, g, fresh, exp, true)
	}
}

// testCancelledContext: a guard may refuse to work under a cancelled
// context (one that waits on a network must) or ignore it (one that never
// waits). If it answers, the answer is binding; if it fails, it reports
// the id as not redeemed.
func testCancelledContext(t *testing.T, g challenge.ReplayGuard) {
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	id := NewID()
	exp := later()
	ok, err := g.Redeem(cctx, id, exp)
	switch {
	case err != nil && ok:
		t.Fatalf("Redeem with a cancelled context = true, %v: a failed redeem must not report success", err)
	case err != nil:
		// Whether the mark was made is unknown: redeeming again may go
		// either way, but only once more.
		again, err2 := g.Redeem(ctx, id, exp)
		if err2 != nil {
			t.Fatal(err2)
		}
		redeem(t, g, id, exp, false)
		t.Logf("refused under a cancelled context (%v); redeeming again then gave %v", err, again)
	case !ok:
		t.Fatal("Redeem of a fresh id with a cancelled context = false, nil")
	default:
		redeem(t, g, id, exp, false)
	}
	// A deadline already past behaves the same.
	dctx, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel2()
	if ok, err := g.Redeem(dctx, NewID(), exp); err != nil && ok {
		t.Fatalf("Redeem past its deadline = true, %v", err)
	}
}

// testClose: after Close, Redeem fails rather than answering; closing
// again is harmless.
func testClose(t *testing.T, g challenge.ReplayGuard) {
	id := NewID()
	redeem(t, g, id, later(), true)
	if err := g.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, i := range [][]byte{id, NewID()} {
		if ok, err := g.Redeem(ctx, i, later()); err == nil || ok {
			t.Fatalf("Redeem after Close = %v, %v; want an error", ok, err)
		}
	}
	if err := g.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
