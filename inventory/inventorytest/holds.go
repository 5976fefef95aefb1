// Cases on holds: explicit seats, all or nothing, unknown seats, invalid
// requests, TTL, general admission pools, the per-user limit, and many
// buyers racing for the same hot seats.

package inventorytest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/inventory"
)

func testHoldExplicit(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	before := time.Now()
	h := hold(t, s, ev, seats("u1", "A-1-1", "A-1-2"))
	if h.ID == "" || h.Event != ev || h.User != "u1" || h.Status != inventory.HoldHeld || h.Quantity != 2 ||
		!slices.Equal(h.Seats, []string{"A-1-1", "A-1-2"}) || h.PriceCents != 30000 || h.Pool != "" {
		t.Fatalf("hold = %+v", h)
	}
	if d := h.ExpiresAt.Sub(before); d < 479*time.Second || d > 482*time.Second {
		t.Fatalf("expires in %v, want the default 480s", d)
	}
	got, err := s.GetHold(ctx, ev, h.ID)
	if err != nil || got.Status != inventory.HoldHeld || !slices.Equal(got.Seats, h.Seats) || !got.ExpiresAt.Equal(h.ExpiresAt) {
		t.Fatalf("GetHold = %+v, %v", got, err)
	}
	a := counts(t, s, ev)
	wantCounts(t, a.Counts, 55, 2, 0)
	wantCounts(t, a.Sections["A"], 28, 2, 0)
	if st := seatStatus(t, s, ev, "A-1-2"); st != inventory.SeatHeld {
		t.Fatalf("A-1-2 is %s", st)
	}
	_, err = s.GetHold(ctx, ev, "hld_doesnotexist")
	wantErr(t, err, inventory.ErrHoldNotFound)
}

func testHoldAllOrNothing(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	hold(t, s, ev, seats("u1", "A-1-2"))
	hold(t, s, ev, seats("u2", "A-1-4"))
	_, err := s.Hold(ctx, ev, seats("u3", "A-1-1", "A-1-2", "A-1-3", "A-1-4"))
	d := wantErr(t, err, inventory.ErrSeatUnavailable)
	if !slices.Equal(d.Seats, []string{"A-1-2", "A-1-4"}) {
		t.Fatalf("unavailable = %v, want every taken seat", d.Seats)
	}
	for _, seat := range []string{"A-1-1", "A-1-3"} {
		if st := seatStatus(t, s, ev, seat); st != inventory.SeatAvailable {
			t.Fatalf("%s is %s after a failed hold", seat, st)
		}
	}
	wantCounts(t, counts(t, s, ev).Counts, 55, 2, 0)
}

func testHoldUnknownSeat(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	_, err := s.Hold(ctx, ev, seats("u1", "A-1-1", "A-1-11", "Z-1-1", "A-9-1"))
	d := wantErr(t, err, inventory.ErrSeatNotFound)
	if !slices.Equal(d.Seats, []string{"A-1-11", "Z-1-1", "A-9-1"}) {
		t.Fatalf("unknown = %v", d.Seats)
	}
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
	_, err = s.Hold(ctx, ev, best("u1", "Z", 2))
	wantErr(t, err, inventory.ErrSectionNotFound)
	_, err = s.Hold(ctx, ev, inventory.HoldRequest{User: "u1", Best: &inventory.BestRequest{Tier: "bronze", Quantity: 1}})
	wantErr(t, err, inventory.ErrTierNotFound)
	_, err = s.Hold(ctx, ev, ga("u1", "balcony", 1))
	wantErr(t, err, inventory.ErrPoolNotFound)
}

func testHoldInvalid(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	bad := []inventory.HoldRequest{
		{Seats: []string{"A-1-1"}},
		{User: "u1"},
		{User: "u1", Seats: []string{}},
		{User: "u1", Seats: []string{"A-1-1", "A-1-1"}},
		{User: "u1", Seats: []string{"A11"}},
		{User: "u1", Seats: []string{"A-1-01"}},
		{User: "u1", Seats: []string{"A-1-0"}},
		{User: "u1", Seats: []string{"A-1-1"}, GA: &inventory.GARequest{Pool: "floor", Quantity: 1}},
		{User: "u1", Best: &inventory.BestRequest{Quantity: 2}},
		{User: "u1", Best: &inventory.BestRequest{Section: "A", Tier: "gold", Quantity: 2}},
		{User: "u1", Best: &inventory.BestRequest{Section: "A", Quantity: 0}},
		{User: "u1", GA: &inventory.GARequest{Pool: "floor", Quantity: inventory.MaxHoldQuantity + 1}},
		{User: "u1", Seats: []string{"A-1-1"}, TTLSeconds: 86401},
		{User: "u1", Seats: []string{"A-1-1"}, IdempotencyKey: "bad key"},
		{User: "u\x00", Seats: []string{"A-1-1"}},
	}
	for i, req := range bad {
		_, err := s.Hold(ctx, ev, req)
		if !errors.Is(err, inventory.ErrInvalid) {
			t.Fatalf("case %d (%+v): error %v, want invalid", i, req, err)
		}
	}
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
}

func testHoldTTL(t *testing.T, s inventory.Store) {
	def := Theatre()
	def.HoldTTLSeconds = 60
	ev := define(t, s, def)
	before := time.Now()
	h := hold(t, s, ev, seats("u1", "A-1-1"))
	if d := h.ExpiresAt.Sub(before); d < 59*time.Second || d > 62*time.Second {
		t.Fatalf("event TTL: expires in %v, want 60s", d)
	}
	req := seats("u1", "A-1-2")
	req.TTLSeconds = 300
	h = hold(t, s, ev, req)
	if d := h.ExpiresAt.Sub(before); d < 299*time.Second || d > 302*time.Second {
		t.Fatalf("request TTL: expires in %v, want 300s", d)
	}
}

func testGA(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, ga("u1", "floor", 4))
	if h.Pool != "floor" || h.Quantity != 4 || len(h.Seats) != 0 || h.PriceCents != 36000 {
		t.Fatalf("GA hold = %+v", h)
	}
	hold(t, s, ev, ga("u2", "floor", 5))
	_, err := s.Hold(ctx, ev, ga("u3", "floor", 2))
	if d := wantErr(t, err, inventory.ErrNotEnoughSeats); d.Available != 1 {
		t.Fatalf("available = %d", d.Available)
	}
	last := hold(t, s, ev, ga("u3", "floor", 1))
	_, err = s.Hold(ctx, ev, ga("u4", "floor", 1))
	wantErr(t, err, inventory.ErrSoldOut)
	if _, err := s.Confirm(ctx, ev, last.ID, inventory.ConfirmRequest{PaymentRef: "p"}); err != nil {
		t.Fatal(err)
	}
	a := counts(t, s, ev)
	if a.GA["floor"] != (inventory.PoolCounts{Capacity: 10, Counts: inventory.Counts{Available: 0, Held: 9, Sold: 1}}) {
		t.Fatalf("floor = %+v", a.GA["floor"])
	}
	wantCounts(t, a.Counts, 47, 9, 1)
	if _, err := s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	if c := counts(t, s, ev).GA["floor"]; c.Available != 4 || c.Held != 5 {
		t.Fatalf("after release floor = %+v", c)
	}
}

func testUserLimit(t *testing.T, s inventory.Store) {
	def := Theatre()
	def.Limits.PerUser = 4
	ev := define(t, s, def)
	h1 := hold(t, s, ev, seats("u1", "A-1-1", "A-1-2", "A-1-3"))
	_, err := s.Hold(ctx, ev, seats("u1", "A-2-1", "A-2-2"))
	if d := wantErr(t, err, inventory.ErrUserLimit); d.Limit != 4 || d.Current != 3 {
		t.Fatalf("limit error = %+v", d)
	}
	_, err = s.Hold(ctx, ev, ga("u1", "floor", 2))
	wantErr(t, err, inventory.ErrUserLimit)
	hold(t, s, ev, seats("u2", "A-2-1", "A-2-2")) // other users unaffected
	h2 := hold(t, s, ev, ga("u1", "floor", 1))
	if _, err := s.Confirm(ctx, ev, h1.ID, inventory.ConfirmRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Hold(ctx, ev, best("u1", "B", 1)) // 3 sold + 1 held = 4
	wantErr(t, err, inventory.ErrUserLimit)
	if _, err := s.Release(ctx, ev, h2.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	hold(t, s, ev, best("u1", "B", 1))
	// Expired holds stop counting.
	req := seats("u3", "C-1-1", "C-1-2", "C-1-3", "C-1-4")
	req.TTL = expireSoon
	hold(t, s, ev, req)
	waitExpiry()
	hold(t, s, ev, ga("u3", "floor", 4))
}

// testHotSeats has many clients fight over a few seats and checks that no
// seat was ever held or sold twice.
func testHotSeats(t *testing.T, s inventory.Store) {
	ev := define(t, s, inventory.EventDef{Sections: []inventory.Section{{ID: "H", Rows: []inventory.Row{{ID: "1", Seats: 6}}}}})
	const clients, tries = 24, 15
	var mu sync.Mutex
	owner := map[string]string{} // seat → order
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			user := fmt.Sprintf("u%d", c)
			for i := range tries {
				var req inventory.HoldRequest
				switch i % 3 {
				case 0:
					req = seats(user, fmt.Sprintf("H-1-%d", i%6+1), fmt.Sprintf("H-1-%d", (i+1)%6+1))
				case 1:
					req = best(user, "H", 1+i%2)
				default:
					req = seats(user, fmt.Sprintf("H-1-%d", c%6+1))
				}
				h, err := s.Hold(ctx, ev, req)
				if err != nil {
					if !errors.Is(err, inventory.ErrSeatUnavailable) && !errors.Is(err, inventory.ErrSoldOut) && !errors.Is(err, inventory.ErrNotEnoughSeats) {
						t.Errorf("hold: %v", err)
					}
					continue
				}
				if (c+i)%2 == 0 {
					s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{})
					continue
				}
				o, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{})
				if err != nil {
					t.Errorf("confirm of a live hold: %v", err)
					continue
				}
				mu.Lock()
				for _, seat := range o.Seats {
					if prev, ok := owner[seat]; ok {
						t.Errorf("seat %s sold twice: %s and %s", seat, prev, o.ID)
					}
					owner[seat] = o.ID
				}
				mu.Unlock()
				if c%5 == 0 {
					// Forget the sale before cancelling it: once the
					// cancel is done another client may buy the seat
					// and record it before this one could forget it.
					mu.Lock()
					for _, seat := range o.Seats {
						if owner[seat] == o.ID {
							delete(owner, seat)
						}
					}
					mu.Unlock()
					if _, err := s.Cancel(ctx, ev, o.ID, inventory.CancelRequest{}); err != nil {
						t.Errorf("cancel: %v", err)
					}
				}
			}
		})
	}
	wg.Wait()
	a := counts(t, s, ev)
	if a.Sold != len(owner) || a.Held != 0 || a.Available != 6-len(owner) {
		t.Fatalf("counts %+v disagree with %d sold seats", a.Counts, len(owner))
	}
	m, _ := s.SeatMap(ctx, ev, "H")
	for _, st := range m.Seats {
		_, sold := owner[st.ID]
		if sold != (st.Status == inventory.SeatSold) {
			t.Fatalf("seat %s is %s, sold to %q", st.ID, st.Status, owner[st.ID])
		}
	}
}
