// Cases on best-available holds: front row centre first, no orphan seats,
// tiers, sold out, and agreement with a reference implementation.

package inventorytest

import (
	"errors"
	"slices"
	"testing"

	"github.com/waitroom/waitroom/inventory"
)

func testBestFrontRowCentre(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, best("u1", "A", 2))
	if !slices.Equal(h.Seats, []string{"A-1-5", "A-1-6"}) || h.PriceCents != 30000 {
		t.Fatalf("best 2 = %v (%d), want the centre of row 1", h.Seats, h.PriceCents)
	}
	// Row 1's free runs are now 1-4 and 7-10: any 3 there would leave a
	// single seat alone, so row 2 wins; 4-6 and 5-7 are equally central
	// and the lower number breaks the tie.
	h = hold(t, s, ev, best("u2", "A", 3))
	if !slices.Equal(h.Seats, []string{"A-2-4", "A-2-5", "A-2-6"}) {
		t.Fatalf("best 3 = %v, want A-2-4..6", h.Seats)
	}
	// Best never breaks a row: a block of 10 goes to row 3.
	h = hold(t, s, ev, best("u3", "A", 10))
	if h.Seats[0] != "A-3-1" || h.Seats[9] != "A-3-10" {
		t.Fatalf("best 10 = %v, want all of row 3", h.Seats)
	}
	// An exact fit is no orphan: 4 fill row 1's 1-4.
	h = hold(t, s, ev, best("u4", "A", 4))
	if !slices.Equal(h.Seats, []string{"A-1-1", "A-1-2", "A-1-3", "A-1-4"}) {
		t.Fatalf("best 4 = %v, want A-1-1..4", h.Seats)
	}
}

func testBestAvoidsOrphans(t *testing.T, s inventory.Store) {
	ev := define(t, s, inventory.EventDef{Sections: []inventory.Section{
		{ID: "S", Rows: []inventory.Row{{ID: "1", Seats: 5}, {ID: "2", Seats: 5}}},
	}})
	hold(t, s, ev, seats("x", "S-1-1"))
	// Row 1 has 2-5 free: any 3 there leave a single seat alone, row 2
	// has a clean choice, so row 2 wins over the front row.
	h := hold(t, s, ev, best("u1", "S", 3))
	if h.Seats[0][:4] != "S-2-" {
		t.Fatalf("best 3 = %v, want row 2 (row 1 would orphan a seat)", h.Seats)
	}
	// Row 1 still has 2-5 free: 4 fills it exactly.
	h = hold(t, s, ev, best("u2", "S", 4))
	if !slices.Equal(h.Seats, []string{"S-1-2", "S-1-3", "S-1-4", "S-1-5"}) {
		t.Fatalf("best 4 = %v, want S-1-2..5", h.Seats)
	}
	// Only orphaning choices left: taking one is still better than nothing.
	ev2 := define(t, s, inventory.EventDef{Sections: []inventory.Section{{ID: "S", Rows: []inventory.Row{{ID: "1", Seats: 3}}}}})
	h = hold(t, s, ev2, best("u1", "S", 2))
	if len(h.Seats) != 2 {
		t.Fatalf("best 2 of 3 = %v", h.Seats)
	}
}

func testBestTier(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	hold(t, s, ev, seats("x", "A-1-1", "A-1-2", "A-1-3", "A-1-4", "A-1-5", "A-1-6", "A-1-7", "A-1-8"))
	h := hold(t, s, ev, inventory.HoldRequest{User: "u1", Best: &inventory.BestRequest{Tier: "gold", Quantity: 2}})
	// A row 1 has 9-10 free (an exact fit at the row's end, no orphan);
	// front rows come before sections, and A comes before B.
	if !slices.Equal(h.Seats, []string{"A-1-9", "A-1-10"}) {
		t.Fatalf("gold 2 = %v, want A-1-9,A-1-10", h.Seats)
	}
	h = hold(t, s, ev, inventory.HoldRequest{User: "u2", Best: &inventory.BestRequest{Tier: "gold", Quantity: 4}})
	// B row 1 (front row beats A row 2): the centred 2-5 would orphan
	// seats 1 and 6, so 1-4 (tied with 3-6 on distance, lower wins).
	if !slices.Equal(h.Seats, []string{"B-1-1", "B-1-2", "B-1-3", "B-1-4"}) {
		t.Fatalf("gold 4 = %v, want B-1-1..4", h.Seats)
	}
	if h.PriceCents != 4*12000 {
		t.Fatalf("price = %d", h.PriceCents)
	}
}

func testBestSoldOut(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	hold(t, s, ev, seats("x", "C-1-1", "C-1-3", "C-1-5"))
	_, err := s.Hold(ctx, ev, best("u1", "C", 2))
	if d := wantErr(t, err, inventory.ErrNotEnoughSeats); d.Available != 2 {
		t.Fatalf("available = %d, want 2", d.Available)
	}
	hold(t, s, ev, seats("y", "C-1-2", "C-1-4"))
	_, err = s.Hold(ctx, ev, best("u1", "C", 1))
	wantErr(t, err, inventory.ErrSoldOut)
}

// testBestMatchesReference fragments sections at random and checks every
// best-available choice against BestBlock run on the store's own seat map.
func testBestMatchesReference(t *testing.T, s inventory.Store) {
	def := inventory.EventDef{Sections: []inventory.Section{
		{ID: "P", Tier: "t", Rows: []inventory.Row{{ID: "1", Seats: 7}, {ID: "2", Seats: 12}, {ID: "3", Seats: 9}, {ID: "4", Seats: 16}}},
		{ID: "Q", Tier: "t", Rows: []inventory.Row{{ID: "1", Seats: 11}, {ID: "2", Seats: 8}, {ID: "3", Seats: 13}}},
	}}
	ev := define(t, s, def)
	rng := newRand(7)
	rowsOf := func(secs []string) [][][]byte {
		out := make([][][]byte, len(secs))
		for i, sec := range secs {
			m, err := s.SeatMap(ctx, ev, sec)
			if err != nil {
				t.Fatal(err)
			}
			k := 0
			for _, sd := range def.Sections {
				if sd.ID != sec {
					continue
				}
				for _, r := range sd.Rows {
					row := make([]byte, r.Seats)
					for j := range row {
						row[j] = 'x'
						if m.Seats[k].Status == inventory.SeatAvailable {
							row[j] = inventory.SeatFree
						}
						k++
					}
					out[i] = append(out[i], row)
				}
			}
		}
		return out
	}
	for step := 0; step < 120; step++ {
		sec := []string{"P", "Q"}[rng.IntN(2)]
		if rng.IntN(3) == 0 {
			// Fragment: take one random seat (if free).
			r := def.Sections[map[string]int{"P": 0, "Q": 1}[sec]].Rows
			row := r[rng.IntN(len(r))]
			s.Hold(ctx, ev, seats("frag", inventory.SeatID(sec, row.ID, 1+rng.IntN(row.Seats))))
			continue
		}
		n := 1 + rng.IntN(5)
		req := best("u", sec, n)
		secs := []string{sec}
		if rng.IntN(2) == 0 {
			req.Best = &inventory.BestRequest{Tier: "t", Quantity: n}
			secs = []string{"P", "Q"}
		}
		rows := rowsOf(secs)
		want, ok := inventory.BestBlock(rows, n)
		h, err := s.Hold(ctx, ev, req)
		if !ok {
			if !errors.Is(err, inventory.ErrNotEnoughSeats) && !errors.Is(err, inventory.ErrSoldOut) {
				t.Fatalf("step %d: no block of %d exists but Hold = %+v, %v", step, n, h, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d: Hold best %d: %v", step, n, err)
		}
		var wantSeats []string
		secDef := def.Sections[map[string]int{"P": 0, "Q": 1}[secs[want.Section]]]
		for i := range n {
			wantSeats = append(wantSeats, inventory.SeatID(secDef.ID, secDef.Rows[want.Row].ID, want.Start+i+1))
		}
		if !slices.Equal(h.Seats, wantSeats) {
			t.Fatalf("step %d: best %d in %v chose %v, reference says %v\nrows: %q", step, n, secs, h.Seats, wantSeats, rows)
		}
		if rng.IntN(2) == 0 {
			s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{})
		}
	}
}
