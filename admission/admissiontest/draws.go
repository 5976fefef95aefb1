// Cases on seeds and draws: the first seed wins, a draw follows the last
// one, an identical draw is accepted again, concurrent writers agree.

package admissiontest

import (
	"bytes"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

func draw(tranche int, first, count uint64, s []byte) admission.Draw {
	return admission.Draw{Tranche: tranche, Seed: s, First: first, Count: count, At: time.Now()}
}

func record(t *testing.T, s admission.Store, ev, lane string, d admission.Draw) {
	t.Helper()
	if err := s.RecordDraw(ctx, ev, lane, d); err != nil {
		t.Fatalf("RecordDraw(%s, %+v): %v", lane, d, err)
	}
}

func wantConflict(t *testing.T, s admission.Store, ev, lane string, d admission.Draw) {
	t.Helper()
	if err := s.RecordDraw(ctx, ev, lane, d); !errors.Is(err, admission.ErrDrawConflict) {
		t.Fatalf("RecordDraw(%s, tranche %d first %d) = %v, want ErrDrawConflict", lane, d.Tranche, d.First, err)
	}
}

func sameDraws(a, b []admission.Draw) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Tranche != y.Tranche || !bytes.Equal(x.Seed, y.Seed) || x.First != y.First || x.Count != y.Count || !x.At.Equal(y.At) {
			return false
		}
	}
	return true
}

func wantDraws(t *testing.T, s admission.Store, ev, lane string, after int, want ...admission.Draw) {
	t.Helper()
	got, err := s.Draws(ctx, ev, lane, after)
	check(t, err)
	if !sameDraws(got, want) {
		t.Fatalf("Draws(%s, after %d) = %+v, want %+v", lane, after, got, want)
	}
}

// testSeed: the first writer wins, per lane and tranche, and the stored
// seed is nobody's alias.
func testSeed(t *testing.T, s admission.Store) {
	ev, other := NewEventID(), NewEventID()
	a, b := seed(1), seed(2)
	got, err := s.Seed(ctx, ev, public, 0, a)
	check(t, err)
	if !bytes.Equal(got, seed(1)) {
		t.Fatalf("first Seed = %x, want the proposal", got)
	}
	a[0], got[1] = 9, 9 // neither the proposal nor the answer is the stored seed
	for range 2 {
		got, err = s.Seed(ctx, ev, public, 0, b)
		check(t, err)
		if !bytes.Equal(got, seed(1)) {
			t.Fatalf("second Seed = %x, want the first proposal", got)
		}
	}
	for _, k := range []struct {
		ev, lane string
		tranche  int
	}{{ev, public, 1}, {ev, "presale", 0}, {other, public, 0}} {
		got, err := s.Seed(ctx, k.ev, k.lane, k.tranche, seed(3))
		check(t, err)
		if !bytes.Equal(got, seed(3)) {
			t.Fatalf("Seed(%s, %d) of another tranche = %x, want its own proposal", k.lane, k.tranche, got)
		}
	}
}

// testSeedConcurrent: replicas racing to seed one tranche all get the
// same seed, one of the proposals.
func testSeedConcurrent(t *testing.T, s admission.Store) {
	ev := NewEventID()
	const n = 20
	got := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = s.Seed(ctx, ev, public, 4, seed(byte(i+1))) })
	}
	wg.Wait()
	for i := range n {
		check(t, errs[i])
		if !bytes.Equal(got[i], got[0]) {
			t.Fatalf("proposer %d got %x, proposer 0 got %x", i, got[i], got[0])
		}
	}
	if w := got[0][0]; w < 1 || w > n || !bytes.Equal(got[0], seed(w)) {
		t.Fatalf("the winning seed %x is none of the proposals", got[0])
	}
}

// testRecordDrawFirst: a lane's first draw starts at number 1, whatever
// its tranche.
func testRecordDrawFirst(t *testing.T, s admission.Store) {
	ev := NewEventID()
	wantConflict(t, s, ev, public, draw(0, 0, 3, seed(1)))
	wantConflict(t, s, ev, public, draw(0, 2, 3, seed(1)))
	wantDraws(t, s, ev, public, -1)
	d := draw(2, 1, 3, seed(1)) // tranches 0 and 1 were empty
	record(t, s, ev, public, d)
	wantDraws(t, s, ev, public, -1, d)
	// Each lane and event numbers from 1.
	record(t, s, ev, "presale", draw(0, 1, 5, seed(2)))
	record(t, s, NewEventID(), public, draw(0, 1, 5, seed(2)))
}

// testRecordDrawSequence: each draw follows the lane's last one: a later
// tranche (gaps allowed) and First = last.Next().
func testRecordDrawSequence(t *testing.T, s admission.Store) {
	ev := NewEventID()
	d0 := draw(0, 1, 10, seed(1))
	record(t, s, ev, public, d0)
	d1 := draw(1, 11, 4, seed(2))
	record(t, s, ev, public, d1)
	wantConflict(t, s, ev, public, draw(3, 14, 1, seed(3))) // First is one short
	wantConflict(t, s, ev, public, draw(3, 16, 1, seed(3))) // a gap in the numbers
	wantConflict(t, s, ev, public, draw(3, 1, 1, seed(3)))  // numbers reused
	d4 := draw(4, 15, 2, seed(4))                           // tranches 2 and 3 were empty
	record(t, s, ev, public, d4)
	wantConflict(t, s, ev, public, draw(2, 17, 1, seed(5))) // an earlier tranche
	wantConflict(t, s, ev, public, draw(3, 17, 1, seed(5))) // still an earlier tranche
	d9 := draw(9, 17, 0, seed(6))                           // an empty draw keeps the numbering
	record(t, s, ev, public, d9)
	d10 := draw(10, 17, 1, seed(7))
	record(t, s, ev, public, d10)
	wantDraws(t, s, ev, public, -1, d0, d1, d4, d9, d10)
	// Another lane's numbers are its own.
	record(t, s, ev, "presale", draw(5, 1, 1, seed(8)))
	wantConflict(t, s, ev, "presale", draw(6, 18, 1, seed(8)))
}

// testRecordDrawIdentical: recording a stored draw again succeeds (a new
// leader repeating the old one's last step); a different draw of a drawn
// tranche does not.
func testRecordDrawIdentical(t *testing.T, s admission.Store) {
	ev := NewEventID()
	d0 := draw(0, 1, 10, seed(1))
	d2 := draw(2, 11, 5, seed(2))
	record(t, s, ev, public, d0)
	record(t, s, ev, public, d2)
	record(t, s, ev, public, d2)
	record(t, s, ev, public, d0) // an older one too
	again := d2
	again.Seed = slices.Clone(d2.Seed)
	again.At = d2.At.In(time.FixedZone("elsewhere", 3600)) // the same instant
	record(t, s, ev, public, again)
	for _, bad := range []admission.Draw{
		{Tranche: 2, Seed: seed(9), First: 11, Count: 5, At: d2.At},
		{Tranche: 2, Seed: d2.Seed, First: 11, Count: 6, At: d2.At},
		{Tranche: 2, Seed: d2.Seed, First: 11, Count: 5, At: d2.At.Add(time.Second)},
		{Tranche: 0, Seed: d0.Seed, First: 1, Count: 9, At: d0.At},
	} {
		wantConflict(t, s, ev, public, bad)
	}
	wantDraws(t, s, ev, public, -1, d0, d2)
}

// testRecordDrawConcurrent: two replicas drawing the same tranche
// differently: one draw is stored, everyone proposing it succeeds, the
// others get ErrDrawConflict.
func testRecordDrawConcurrent(t *testing.T, s admission.Store) {
	ev := NewEventID()
	variants := []admission.Draw{draw(0, 1, 7, seed(1)), draw(0, 1, 7, seed(2))}
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = s.RecordDraw(ctx, ev, public, variants[i%2]) })
	}
	wg.Wait()
	got, err := s.Draws(ctx, ev, public, -1)
	check(t, err)
	if len(got) != 1 {
		t.Fatalf("%d draws stored, want 1", len(got))
	}
	won := 0
	if bytes.Equal(got[0].Seed, variants[1].Seed) {
		won = 1
	}
	for i, err := range errs {
		if i%2 == won && err != nil {
			t.Fatalf("proposer %d of the stored draw: %v", i, err)
		}
		if i%2 != won && !errors.Is(err, admission.ErrDrawConflict) {
			t.Fatalf("proposer %d of the other draw: %v, want ErrDrawConflict", i, err)
		}
	}
}

// testDraws: Draws(after) lists the draws of tranches after `after`, in
// order, per lane and event, with every field kept.
func testDraws(t *testing.T, s admission.Store) {
	ev := NewEventID()
	d0 := admission.Draw{Tranche: 0, Seed: seed(1), First: 1, Count: 3, At: time.Date(2030, 5, 1, 10, 0, 0, 123456789, time.UTC)}
	d3 := admission.Draw{Tranche: 3, Seed: []byte("a seed of another length"), First: 4, Count: 1 << 40, At: time.Now()}
	d7 := admission.Draw{Tranche: 7, Seed: seed(3), First: 4 + 1<<40, Count: 2, At: time.Now().Add(time.Minute)}
	for _, d := range []admission.Draw{d0, d3, d7} {
		record(t, s, ev, public, d)
	}
	p0 := draw(1, 1, 1, seed(4))
	record(t, s, ev, "presale", p0)
	wantDraws(t, s, ev, public, -1, d0, d3, d7)
	wantDraws(t, s, ev, public, 0, d3, d7)
	wantDraws(t, s, ev, public, 2, d3, d7)
	wantDraws(t, s, ev, public, 3, d7)
	wantDraws(t, s, ev, public, 7)
	wantDraws(t, s, ev, public, 100)
	wantDraws(t, s, ev, "presale", -1, p0)
	wantDraws(t, s, ev, "other", -1)
	wantDraws(t, s, NewEventID(), public, -1)
	got, err := s.Draws(ctx, ev, public, -1)
	check(t, err)
	if got[0].Next() != 4 || got[2].Next() != 6+1<<40 {
		t.Fatalf("Next of the stored draws: %d, %d", got[0].Next(), got[2].Next())
	}
	got[0].Seed[0] = 99 // the caller's copy
	wantDraws(t, s, ev, public, -1, d0, d3, d7)
}
