// Cases on expiry: due holds expire at the next operation without a
// reaper, and Reap expires at most the number asked for, auditing each
// expiry.

package inventorytest

import (
	"fmt"
	"testing"
	"time"

	"github.com/waitroom/waitroom/inventory"
)

func testLazyExpiry(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	req := seats("u1", "A-1-1", "A-1-2")
	req.TTL = expireSoon
	first := hold(t, s, ev, req)
	gareq := ga("u1", "floor", 10)
	gareq.TTL = expireSoon
	hold(t, s, ev, gareq)
	waitExpiry()
	// No reaper has run: the seats are free to every operation.
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
	if st := seatStatus(t, s, ev, "A-1-2"); st != inventory.SeatAvailable {
		t.Fatalf("expired seat shows %s", st)
	}
	second := hold(t, s, ev, seats("u2", "A-1-2", "A-1-3"))
	hold(t, s, ev, ga("u2", "floor", 10))
	got, err := s.GetHold(ctx, ev, first.ID)
	if err != nil || got.Status != inventory.HoldExpired {
		t.Fatalf("first hold = %+v, %v", got, err)
	}
	if second.Status != inventory.HoldHeld {
		t.Fatalf("second = %+v", second)
	}
}

func testReap(t *testing.T, s inventory.Store) {
	// Every operation expires the holds that are due (lazy expiry), so the
	// five short holds must all be made, and the long one after them,
	// before the first of them is due: only then are all five left for
	// Reap. On a loaded machine that can take longer than expireSoon; the
	// scenario is then tried again on a new event.
	var ev string
	var long inventory.Hold
	for try := 0; ; try++ {
		ev = define(t, s, Theatre())
		start := time.Now()
		for i := 1; i <= 5; i++ {
			req := seats("u1", fmt.Sprintf("A-1-%d", i))
			req.TTL = expireSoon
			hold(t, s, ev, req)
		}
		long = hold(t, s, ev, seats("u2", "B-1-1"))
		if time.Since(start) < expireSoon {
			break
		}
		if try == 20 {
			t.Fatalf("making six holds took longer than %v twenty times: the machine is too loaded for this case", expireSoon)
		}
	}
	waitExpiry()
	n, err := s.Reap(ctx, ev, 3)
	if err != nil || n != 3 {
		t.Fatalf("Reap(3) = %d, %v; want 3", n, err)
	}
	n, err = s.Reap(ctx, ev, 10)
	if err != nil || n > 2 {
		t.Fatalf("second Reap = %d, %v; want at most the 2 left", n, err)
	}
	n, err = s.Reap(ctx, ev, 10)
	if err != nil || n != 0 {
		t.Fatalf("third Reap = %d, %v; want 0", n, err)
	}
	if got, _ := s.GetHold(ctx, ev, long.ID); got.Status != inventory.HoldHeld {
		t.Fatalf("live hold reaped: %+v", got)
	}
	wantCounts(t, counts(t, s, ev).Counts, 56, 1, 0)
	expires := 0
	for _, e := range auditAll(t, s, ev) {
		if e.Action == inventory.ActionExpire {
			expires++
			if e.Actor != "system" || e.HoldID == "" || len(e.Seats) != 1 {
				t.Fatalf("expire entry = %+v", e)
			}
		}
	}
	if expires != 5 {
		t.Fatalf("%d expire entries, want 5", expires)
	}
}
