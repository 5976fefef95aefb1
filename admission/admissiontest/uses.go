// Cases on pass uses: MarkUsed marks numbers in batches, Used reads them
// back by range, and bad numbers are refused without marking anything.

package admissiontest

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/waitroom/waitroom/admission"
)

func used(t *testing.T, s admission.Store, ev, lane string, from, to uint64) []bool {
	t.Helper()
	got, err := s.Used(ctx, ev, lane, from, to)
	check(t, err)
	if uint64(len(got)) != to-from+1 {
		t.Fatalf("Used(%d, %d) has %d entries", from, to, len(got))
	}
	return got
}

// testUses: MarkUsed marks a batch, per lane and event; marking again is
// harmless; uses and claims are apart.
func testUses(t *testing.T, s admission.Store) {
	ev := NewEventID()
	check(t, s.MarkUsed(ctx, ev, public, []uint64{1, 3, 7, 8}))
	check(t, s.MarkUsed(ctx, ev, public, []uint64{9, 16, 3, 3}))
	check(t, s.MarkUsed(ctx, ev, public, nil))
	check(t, s.MarkUsed(ctx, ev, "presale", []uint64{2}))
	check(t, s.MarkUsed(ctx, NewEventID(), public, []uint64{5}))
	check(t, s.Claim(ctx, ev, public, 5))
	if got := bits(used(t, s, ev, public, 1, 17)); got != "10100011100000010" {
		t.Fatalf("Used(1, 17) = %s", got)
	}
	if got := bits(used(t, s, ev, "presale", 1, 4)); got != "0100" {
		t.Fatalf("presale Used(1, 4) = %s", got)
	}
	if got := bits(used(t, s, ev, "other", 1, 4)); got != "0000" {
		t.Fatalf("unused lane Used(1, 4) = %s", got)
	}
	if got := bits(used(t, s, NewEventID(), public, 1, 4)); got != "0000" {
		t.Fatalf("Used of a new event = %s", got)
	}
	// A claim is not a use, and a use is not a claim.
	if got := bits(used(t, s, ev, public, 5, 5)); got != "0" {
		t.Fatalf("a claimed number reads as used: %s", got)
	}
	if got := bits(claimed(t, s, ev, public, 1, 3)); got != "000" {
		t.Fatalf("used numbers read as claimed: %s", got)
	}
}

// testUsedRanges: any range, within and beyond the marked numbers, has
// one entry per number; a full batch is taken.
func testUsedRanges(t *testing.T, s admission.Store) {
	ev := NewEventID()
	r := rand.New(rand.NewPCG(3, 4))
	want := make([]bool, 3000)
	var batch []uint64
	for range 400 {
		n := 1 + r.IntN(2000)
		want[n] = true
		batch = append(batch, uint64(n))
	}
	check(t, s.MarkUsed(ctx, ev, public, batch[:150]))
	check(t, s.MarkUsed(ctx, ev, public, batch[150:]))
	for _, rg := range [][2]uint64{{1, 2999}, {1, 1}, {2000, 2000}, {1999, 2999}, {8, 15}, {9, 17},
		{123, 1234}, {2001, 2999}, {5000, 5100}, {1 << 33, 1<<33 + 9}} {
		for i, u := range used(t, s, ev, public, rg[0], rg[1]) {
			n := rg[0] + uint64(i)
			if u != (n < uint64(len(want)) && want[n]) {
				t.Fatalf("Used(%d, %d)[%d]: number %d used = %v", rg[0], rg[1], i, n, u)
			}
		}
	}
	full := make([]uint64, admission.MaxUseBatch)
	for i := range full {
		full[i] = uint64(10_001 + i)
	}
	check(t, s.MarkUsed(ctx, ev, "big", full))
	got := used(t, s, ev, "big", 10_000, 10_001+admission.MaxUseBatch)
	if got[0] || got[len(got)-1] {
		t.Fatal("Used marks a number next to a full batch")
	}
	for i, u := range got[1 : len(got)-1] {
		if !u {
			t.Fatalf("number %d of a full batch is not marked", 10_001+i)
		}
	}
}

// testUsesRefused: numbers a store cannot take, and ranges it cannot
// answer, are ErrBadNumbers, and a refused batch marks nothing.
func testUsesRefused(t *testing.T, s admission.Store) {
	ev := NewEventID()
	for name, batch := range map[string][]uint64{
		"zero":      {4, 0, 5},
		"too large": {4, 1 << 40, 5},
		"max":       {4, 1<<64 - 1},
		"too many":  make([]uint64, admission.MaxUseBatch+1),
	} {
		if err := s.MarkUsed(ctx, ev, public, batch); !errors.Is(err, admission.ErrBadNumbers) {
			t.Errorf("MarkUsed of %s: %v, want ErrBadNumbers", name, err)
		}
	}
	if got := bits(used(t, s, ev, public, 1, 8)); got != "00000000" {
		t.Fatalf("refused batches marked %s", got)
	}
	for _, rg := range [][2]uint64{{0, 5}, {0, 0}, {5, 4}, {100, 1}, {1, admission.MaxUsedSpan + 1}, {1, 1<<64 - 1}} {
		if got, err := s.Used(ctx, ev, public, rg[0], rg[1]); !errors.Is(err, admission.ErrBadNumbers) {
			t.Errorf("Used(%d, %d) = %d entries, %v; want ErrBadNumbers", rg[0], rg[1], len(got), err)
		}
	}
	if got := used(t, s, ev, public, 1, admission.MaxUsedSpan); len(got) != admission.MaxUsedSpan {
		t.Fatalf("Used of the largest span has %d entries", len(got))
	}
}

// testUsesConcurrent: concurrent batches (replicas flushing at once) are
// all kept.
func testUsesConcurrent(t *testing.T, s admission.Store) {
	ev := NewEventID()
	const writers, each = 8, 250
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			batch := make([]uint64, 0, each)
			for i := range each {
				batch = append(batch, uint64(1+i*writers+w)) // interleaved: shared bytes
			}
			errs <- s.MarkUsed(ctx, ev, public, batch)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		check(t, err)
	}
	for i, u := range used(t, s, ev, public, 1, writers*each+8) {
		if u != (i < writers*each) {
			t.Fatalf("number %d used = %v after concurrent batches", i+1, u)
		}
	}
}
