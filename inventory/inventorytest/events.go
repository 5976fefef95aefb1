// Cases on events: define and read back, invalid definitions, unknown
// events, and updating a defined event.

package inventorytest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/waitroom/waitroom/inventory"
)

func testDefineAndGet(t *testing.T, s inventory.Store) {
	def := Theatre()
	def.Limits.PerUser = 6
	id := NewEventID()
	got, err := s.PutEvent(ctx, id, def, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != id || got.Seats != 30+12+5 || got.GACapacity != 10 || got.HoldTTLSeconds != 480 || got.Limits.PerUser != 6 {
		t.Fatalf("PutEvent = %+v", got)
	}
	again, err := s.Event(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(again) != fmt.Sprint(got) {
		t.Fatalf("Event = %+v, want %+v", again, got)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	ids, err := s.Events(ctx)
	if err != nil || !slices.Contains(ids, id) {
		t.Fatalf("Events = %v, %v; want it to contain %s", ids, err, id)
	}
	a := counts(t, s, id)
	wantCounts(t, a.Counts, 57, 0, 0)
	wantCounts(t, a.Sections["A"], 30, 0, 0)
	if a.GA["floor"].Capacity != 10 {
		t.Fatalf("GA floor = %+v", a.GA["floor"])
	}
}

func testDefineInvalid(t *testing.T, s inventory.Store) {
	bad := []inventory.EventDef{
		{},
		{Sections: []inventory.Section{{ID: "A-1", Rows: []inventory.Row{{ID: "1", Seats: 1}}}}},
		{Sections: []inventory.Section{{ID: "A", Rows: []inventory.Row{{ID: "1", Seats: 0}}}}},
		{Sections: []inventory.Section{{ID: "A", Rows: []inventory.Row{{ID: "1", Seats: 2}, {ID: "1", Seats: 3}}}}},
		{Sections: []inventory.Section{{ID: "A", Rows: []inventory.Row{{ID: "1", Seats: 2}}}, {ID: "A", Rows: []inventory.Row{{ID: "1", Seats: 2}}}}},
		{GA: []inventory.Pool{{ID: "floor", Capacity: 0}}},
		{GA: []inventory.Pool{{ID: "floor", Capacity: 5}}, HoldTTLSeconds: -1},
		{GA: []inventory.Pool{{ID: "floor", Capacity: 5}}, Limits: inventory.Limits{PerUser: -1}},
		{Sections: []inventory.Section{{ID: "A", PriceCents: -5, Rows: []inventory.Row{{ID: "1", Seats: 2}}}}},
	}
	for i, def := range bad {
		id := NewEventID()
		_, err := s.PutEvent(ctx, id, def, "")
		wantErr(t, err, inventory.ErrInvalid)
		if _, err := s.Event(ctx, id); !errors.Is(err, inventory.ErrEventNotFound) {
			t.Fatalf("case %d: invalid definition was stored: %v", i, err)
		}
	}
	// Every problem is reported, with its path.
	_, err := s.PutEvent(ctx, NewEventID(), inventory.EventDef{Sections: []inventory.Section{
		{ID: "", Rows: []inventory.Row{{ID: "1", Seats: 0}}}}}, "")
	msg := wantErr(t, err, inventory.ErrInvalid).Message
	for _, want := range []string{"sections[0].id", "sections[0].rows[0].seats"} {
		if !contains(msg, want) {
			t.Fatalf("message %q lacks %q", msg, want)
		}
	}
	for _, id := range []string{"", "-x", "a b", "../x", "x}"} {
		_, err := s.PutEvent(ctx, id, Theatre(), "")
		wantErr(t, err, inventory.ErrInvalid)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func testUnknownEvent(t *testing.T, s inventory.Store) {
	ev := NewEventID()
	_, err := s.Event(ctx, ev)
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.Hold(ctx, ev, seats("u1", "A-1-1"))
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.GetHold(ctx, ev, "hld_x")
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.Confirm(ctx, ev, "hld_x", inventory.ConfirmRequest{})
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.Release(ctx, ev, "hld_x", inventory.ReleaseRequest{})
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.Cancel(ctx, ev, "ord_x", inventory.CancelRequest{})
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.Availability(ctx, ev)
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.SeatMap(ctx, ev, "A")
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.Audit(ctx, ev, "", 10)
	wantErr(t, err, inventory.ErrEventNotFound)
	_, err = s.Reap(ctx, ev, 10)
	wantErr(t, err, inventory.ErrEventNotFound)
}

func testUpdateEvent(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, seats("u1", "A-3-10"))
	g := hold(t, s, ev, ga("u1", "floor", 6))

	smaller := Theatre()
	smaller.Sections[0].Rows = smaller.Sections[0].Rows[:2] // drops row 3
	_, err := s.PutEvent(ctx, ev, smaller, "")
	if d := wantErr(t, err, inventory.ErrDefinitionConflict); !slices.Equal(d.Seats, []string{"A-3-10"}) {
		t.Fatalf("conflict = %+v", d)
	}
	shrunk := Theatre()
	shrunk.Sections[0].Rows[2].Seats = 9
	_, err = s.PutEvent(ctx, ev, shrunk, "")
	wantErr(t, err, inventory.ErrDefinitionConflict)
	lessGA := Theatre()
	lessGA.GA[0].Capacity = 5
	_, err = s.PutEvent(ctx, ev, lessGA, "")
	if d := wantErr(t, err, inventory.ErrDefinitionConflict); !slices.Equal(d.Pools, []string{"floor"}) {
		t.Fatalf("pool conflict = %+v", d)
	}
	if got, _ := s.Event(ctx, ev); got.Seats != 47 {
		t.Fatalf("a refused update changed the event: %+v", got)
	}
	// Growing keeps held seats; an available seat may be removed.
	grown := Theatre()
	grown.Sections[0].Rows = append(grown.Sections[0].Rows, inventory.Row{ID: "4", Seats: 12})
	grown.Sections[2].Rows[0].Seats = 4
	grown.Sections[1].Tier = "platinum"
	grown.GA[0].Capacity = 6
	if _, err := s.PutEvent(ctx, ev, grown, ""); err != nil {
		t.Fatal(err)
	}
	a := counts(t, s, ev)
	wantCounts(t, a.Sections["A"], 41, 1, 0)
	wantCounts(t, a.Sections["C"], 4, 0, 0)
	if a.GA["floor"].Capacity != 6 || a.GA["floor"].Available != 0 {
		t.Fatalf("floor = %+v", a.GA["floor"])
	}
	if _, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{}); err != nil {
		t.Fatalf("confirming a hold across an update: %v", err)
	}
	hold(t, s, ev, inventory.HoldRequest{User: "u2", Best: &inventory.BestRequest{Tier: "platinum", Quantity: 2}})
	// Back to the original: row 4 is free, C-1-5 returns, the floor's 6
	// held places fit in 10 again.
	if _, err := s.PutEvent(ctx, ev, Theatre(), ""); err != nil {
		t.Fatal(err)
	}
	a = counts(t, s, ev)
	wantCounts(t, a.Sections["A"], 29, 0, 1)
	wantCounts(t, a.Sections["B"], 10, 2, 0)
	wantCounts(t, a.Sections["C"], 5, 0, 0)
	if got, err := s.GetHold(ctx, ev, g.ID); err != nil || got.Status != inventory.HoldHeld || a.GA["floor"].Held != 6 {
		t.Fatalf("GA hold across updates = %+v, %v, %+v", got, err, a.GA["floor"])
	}
}
