// Cases on serving counters and claimed numbers: Advance only moves
// forward, Serving lists every lane, claims are read back by range.

package admissiontest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/waitroom/waitroom/admission"
)

func serving(t *testing.T, s admission.Store, ev string) map[string]uint64 {
	t.Helper()
	m, err := s.Serving(ctx, ev)
	check(t, err)
	return m
}

func advance(t *testing.T, s admission.Store, ev, lane string, to, want uint64) {
	t.Helper()
	got, err := s.Advance(ctx, ev, lane, to)
	check(t, err)
	if got != want {
		t.Fatalf("Advance(%s, %d) = %d, want %d", lane, to, got, want)
	}
}

func claimed(t *testing.T, s admission.Store, ev, lane string, from, to uint64) []bool {
	t.Helper()
	got, err := s.Claimed(ctx, ev, lane, from, to)
	check(t, err)
	return got
}

// bits renders claims as "1" and "0", for short messages.
func bits(b []bool) string {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = '0'
		if c {
			out[i] = '1'
		}
	}
	return string(out)
}

// testAdvance: the serving counter only goes up; Advance answers its
// value.
func testAdvance(t *testing.T, s admission.Store) {
	ev := NewEventID()
	advance(t, s, ev, public, 0, 0)
	advance(t, s, ev, public, 5, 5)
	advance(t, s, ev, public, 3, 5)
	advance(t, s, ev, public, 5, 5)
	advance(t, s, ev, public, 6, 6)
	advance(t, s, ev, public, 1<<62+1, 1<<62+1) // exact beyond float64 precision
	advance(t, s, ev, public, 1<<62, 1<<62+1)
	advance(t, s, ev, "presale", 2, 2)
	advance(t, s, NewEventID(), public, 1, 1)
	if m := serving(t, s, ev); !reflect.DeepEqual(m, map[string]uint64{public: 1<<62 + 1, "presale": 2}) {
		t.Fatalf("Serving = %v", m)
	}
}

// testAdvanceConcurrent: concurrent advances end at the largest.
func testAdvanceConcurrent(t *testing.T, s admission.Store) {
	ev := NewEventID()
	const n, each = 20, 10
	tos := rand.Perm(n * each)
	var wg sync.WaitGroup
	errs := make(chan error, n*each)
	for g := range n {
		wg.Go(func() {
			for _, to := range tos[g*each : (g+1)*each] {
				got, err := s.Advance(ctx, ev, public, uint64(to+1))
				if err == nil && got < uint64(to+1) {
					err = fmt.Errorf("Advance(%d) = %d", to+1, got)
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if m := serving(t, s, ev); m[public] != n*each {
		t.Fatalf("serving after concurrent advances = %d, want %d", m[public], n*each)
	}
}

// testServing: every lane's counter, and nothing for lanes never
// advanced.
func testServing(t *testing.T, s admission.Store) {
	ev := NewEventID()
	if m := serving(t, s, ev); len(m) != 0 {
		t.Fatalf("Serving of a new event = %v", m)
	}
	advance(t, s, ev, "a", 3, 3)
	advance(t, s, ev, "b", 7, 7)
	advance(t, s, ev, "c", 0, 0)
	m := serving(t, s, ev)
	if m["a"] != 3 || m["b"] != 7 || m["c"] != 0 || m[public] != 0 {
		t.Fatalf("Serving = %v", m)
	}
	for lane, n := range m {
		if lane != "a" && lane != "b" && n != 0 {
			t.Fatalf("Serving has lane %q = %d", lane, n)
		}
	}
	m["a"] = 100 // the caller's copy
	if m := serving(t, s, ev); m["a"] != 3 {
		t.Fatalf("Serving after changing a returned map = %v", m)
	}
}

// testClaims: Claim marks a number, Claimed reports ranges, per lane and
// event; claiming twice is harmless.
func testClaims(t *testing.T, s admission.Store) {
	ev := NewEventID()
	for _, n := range []uint64{1, 3, 7, 8, 9, 16, 3} {
		check(t, s.Claim(ctx, ev, public, n))
	}
	check(t, s.Claim(ctx, ev, "presale", 2))
	check(t, s.Claim(ctx, NewEventID(), public, 5))
	if got := bits(claimed(t, s, ev, public, 1, 17)); got != "10100011100000010" {
		t.Fatalf("Claimed(1, 17) = %s", got)
	}
	if got := bits(claimed(t, s, ev, "presale", 1, 4)); got != "0100" {
		t.Fatalf("presale Claimed(1, 4) = %s", got)
	}
	if got := bits(claimed(t, s, ev, "other", 1, 4)); got != "0000" {
		t.Fatalf("unclaimed lane Claimed(1, 4) = %s", got)
	}
	if got := bits(claimed(t, s, ev, public, 5, 5)); got != "0" {
		t.Fatalf("Claimed(5, 5) = %s", got)
	}
}

// testClaimedRanges: any range, within and beyond the claimed numbers,
// has one entry per number; from > to has none.
func testClaimedRanges(t *testing.T, s admission.Store) {
	ev := NewEventID()
	r := rand.New(rand.NewPCG(1, 2))
	want := make([]bool, 3000)
	for range 400 {
		n := 1 + r.IntN(2000)
		want[n] = true
		check(t, s.Claim(ctx, ev, public, uint64(n)))
	}
	for _, rg := range [][2]uint64{{0, 2999}, {1, 1}, {0, 0}, {2000, 2000}, {1999, 2999}, {8, 15}, {9, 17},
		{123, 1234}, {2001, 2999}, {5000, 5100}, {1 << 33, 1<<33 + 9}} {
		got := claimed(t, s, ev, public, rg[0], rg[1])
		if uint64(len(got)) != rg[1]-rg[0]+1 {
			t.Fatalf("Claimed(%d, %d) has %d entries", rg[0], rg[1], len(got))
		}
		for i, c := range got {
			n := rg[0] + uint64(i)
			if c != (n < uint64(len(want)) && want[n]) {
				t.Fatalf("Claimed(%d, %d)[%d]: number %d claimed = %v", rg[0], rg[1], i, n, c)
			}
		}
	}
	for _, rg := range [][2]uint64{{5, 4}, {100, 1}} {
		if got := claimed(t, s, ev, public, rg[0], rg[1]); len(got) != 0 {
			t.Fatalf("Claimed(%d, %d) = %s, want nothing", rg[0], rg[1], bits(got))
		}
	}
}
