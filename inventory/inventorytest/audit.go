// Cases on what a store reports: the audit stream and seat maps.

package inventorytest

import (
	"slices"
	"testing"

	"github.com/waitroom/waitroom/inventory"
)

func auditAll(t *testing.T, s inventory.Store, ev string) []inventory.AuditEntry {
	t.Helper()
	var all []inventory.AuditEntry
	after := ""
	for {
		p, err := s.Audit(ctx, ev, after, 2)
		if err != nil {
			t.Fatalf("Audit: %v", err)
		}
		all = append(all, p.Entries...)
		if len(p.Entries) == 0 {
			return all
		}
		after = p.Next
	}
}

func testAudit(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, inventory.HoldRequest{User: "u1", Seats: []string{"A-1-1"}, Actor: "checkout"})
	o, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{Actor: "checkout"})
	if err != nil {
		t.Fatal(err)
	}
	h2 := hold(t, s, ev, ga("u2", "floor", 2))
	if _, err := s.Release(ctx, ev, h2.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cancel(ctx, ev, o.ID, inventory.CancelRequest{Actor: "support"}); err != nil {
		t.Fatal(err)
	}
	// Failed and read-only calls leave no trace.
	s.Hold(ctx, ev, seats("u3", "Z-1-1"))
	s.Availability(ctx, ev)

	all := auditAll(t, s, ev)
	var actions []string
	for _, e := range all {
		actions = append(actions, e.Action)
	}
	want := []string{"define", "hold", "confirm", "hold", "release", "cancel"}
	if !slices.Equal(actions, want) {
		t.Fatalf("actions = %v, want %v", actions, want)
	}
	if e := all[1]; e.User != "u1" || e.Actor != "checkout" || e.HoldID != h.ID || !slices.Equal(e.Seats, []string{"A-1-1"}) || e.At.IsZero() {
		t.Fatalf("hold entry = %+v", e)
	}
	if e := all[2]; e.OrderID != o.ID || e.HoldID != h.ID {
		t.Fatalf("confirm entry = %+v", e)
	}
	if e := all[3]; e.Pool != "floor" || e.Quantity != 2 {
		t.Fatalf("GA hold entry = %+v", e)
	}
	if e := all[5]; e.Actor != "support" || e.OrderID != o.ID {
		t.Fatalf("cancel entry = %+v", e)
	}
	for i := 1; i < len(all); i++ {
		if all[i].At.Before(all[i-1].At) {
			t.Fatalf("entries out of time order: %+v before %+v", all[i-1], all[i])
		}
	}
	// Reading after any entry's id returns exactly what follows it.
	for i, e := range all {
		p, err := s.Audit(ctx, ev, e.ID, 100)
		if err != nil || len(p.Entries) != len(all)-i-1 {
			t.Fatalf("after %s: %d entries, %v; want %d", e.ID, len(p.Entries), err, len(all)-i-1)
		}
	}
	p, err := s.Audit(ctx, ev, all[len(all)-1].ID, 10)
	if err != nil || len(p.Entries) != 0 || p.Next == "" {
		t.Fatalf("at the end: %+v, %v", p, err)
	}
	_, err = s.Audit(ctx, ev, "not-a-cursor", 10)
	wantErr(t, err, inventory.ErrInvalid)
}

func testSeatMap(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, seats("u1", "B-2-6"))
	if _, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{}); err != nil {
		t.Fatal(err)
	}
	hold(t, s, ev, seats("u1", "B-1-1"))
	m, err := s.SeatMap(ctx, ev, "B")
	if err != nil {
		t.Fatal(err)
	}
	if m.Section != "B" || len(m.Seats) != 12 || m.Seats[0] != (inventory.SeatState{ID: "B-1-1", Status: inventory.SeatHeld}) ||
		m.Seats[11] != (inventory.SeatState{ID: "B-2-6", Status: inventory.SeatSold}) ||
		m.Seats[6] != (inventory.SeatState{ID: "B-2-1", Status: inventory.SeatAvailable}) {
		t.Fatalf("seat map = %+v", m)
	}
	_, err = s.SeatMap(ctx, ev, "Q")
	wantErr(t, err, inventory.ErrSectionNotFound)
}
