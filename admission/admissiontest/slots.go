// Cases on the pass-through slots of threshold mode: each granted slot
// goes to exactly one taker, a new grant replaces what is left and tells
// how many were taken, and a grant ends with its ttl.

package admissiontest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

func take(t *testing.T, s admission.Store, ev string) bool {
	t.Helper()
	ok, err := s.TakeSlot(ctx, ev)
	check(t, err)
	return ok
}

func grant(t *testing.T, s admission.Store, ev string, n int) int {
	t.Helper()
	taken, err := s.GrantSlots(ctx, ev, n, time.Minute)
	check(t, err)
	return taken
}

// testSlots: no slot before a grant; n slots after a grant of n; a new
// grant replaces the rest and reports the taken ones; events are apart.
func testSlots(t *testing.T, s admission.Store) {
	ev, other := NewEventID(), NewEventID()
	if take(t, s, ev) {
		t.Fatal("TakeSlot before any grant = true")
	}
	if n := grant(t, s, ev, 3); n != 0 {
		t.Fatalf("first GrantSlots reported %d taken", n)
	}
	if take(t, s, other) {
		t.Fatal("TakeSlot of another event = true")
	}
	for i := range 2 {
		if !take(t, s, ev) {
			t.Fatalf("TakeSlot %d of 3 = false", i+1)
		}
	}
	if n := grant(t, s, ev, 1); n != 2 {
		t.Fatalf("GrantSlots after 2 takes reported %d", n)
	}
	if !take(t, s, ev) || take(t, s, ev) {
		t.Fatal("a grant of 1 did not give exactly one slot (the rest of the last grant must be gone)")
	}
	if n := grant(t, s, ev, 0); n != 1 {
		t.Fatalf("GrantSlots after 1 take reported %d", n)
	}
	if take(t, s, ev) {
		t.Fatal("TakeSlot after a grant of 0 = true")
	}
	if n := grant(t, s, ev, -5); n != 0 {
		t.Fatalf("GrantSlots(-5) reported %d taken", n)
	}
	if take(t, s, ev) {
		t.Fatal("TakeSlot after a negative grant = true")
	}
}

// testSlotsConcurrent: many takers at once share a grant exactly.
func testSlotsConcurrent(t *testing.T, s admission.Store) {
	ev := NewEventID()
	const slots, takers = 25, 40
	grant(t, s, ev, slots)
	var got atomic.Int64
	var wg sync.WaitGroup
	for range takers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				ok, err := s.TakeSlot(ctx, ev)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					got.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if got.Load() != slots {
		t.Fatalf("%d takers got %d slots of a grant of %d", takers, got.Load(), slots)
	}
	if n := grant(t, s, ev, 0); n != slots {
		t.Fatalf("GrantSlots reported %d taken, want %d", n, slots)
	}
}

// testSlotsExpire: a grant past its ttl has no slot left. Only a lower
// bound of time is relied on: the take comes well after the ttl.
func testSlotsExpire(t *testing.T, s admission.Store) {
	ev := NewEventID()
	_, err := s.GrantSlots(ctx, ev, 10, 50*time.Millisecond)
	check(t, err)
	time.Sleep(300 * time.Millisecond)
	if take(t, s, ev) {
		t.Fatal("TakeSlot after the grant's ttl = true")
	}
}
