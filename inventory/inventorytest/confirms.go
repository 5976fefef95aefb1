// Cases on what follows a hold: confirm (also of an expired or released
// hold), release, and cancelling an order.

package inventorytest

import (
	"slices"
	"testing"

	"github.com/waitroom/waitroom/inventory"
)

func testConfirm(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, seats("u1", "A-1-1", "A-1-2"))
	o, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "pay_1"})
	if err != nil {
		t.Fatal(err)
	}
	if o.ID == "" || o.HoldID != h.ID || o.Status != inventory.OrderConfirmed || !slices.Equal(o.Seats, h.Seats) ||
		o.PaymentRef != "pay_1" || o.User != "u1" || o.PriceCents != 30000 {
		t.Fatalf("order = %+v", o)
	}
	again, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "pay_1"})
	if err != nil || again.ID != o.ID {
		t.Fatalf("second confirm = %+v, %v; want the same order %s", again, err, o.ID)
	}
	got, err := s.GetHold(ctx, ev, h.ID)
	if err != nil || got.Status != inventory.HoldConfirmed || got.OrderID != o.ID {
		t.Fatalf("hold after confirm = %+v, %v", got, err)
	}
	got2, err := s.GetOrder(ctx, ev, o.ID)
	if err != nil || got2.ID != o.ID || got2.Status != inventory.OrderConfirmed {
		t.Fatalf("GetOrder = %+v, %v", got2, err)
	}
	wantCounts(t, counts(t, s, ev).Sections["A"], 28, 0, 2)
	if st := seatStatus(t, s, ev, "A-1-1"); st != inventory.SeatSold {
		t.Fatalf("A-1-1 is %s", st)
	}
	_, err = s.Confirm(ctx, ev, "hld_nope", inventory.ConfirmRequest{})
	wantErr(t, err, inventory.ErrHoldNotFound)
	_, err = s.Hold(ctx, ev, seats("u2", "A-1-1"))
	wantErr(t, err, inventory.ErrSeatUnavailable)
}

func testConfirmExpired(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	req := seats("u1", "A-1-1")
	req.TTL = expireSoon
	h := hold(t, s, ev, req)
	waitExpiry()
	_, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "late"})
	wantErr(t, err, inventory.ErrHoldExpired)
	got, err := s.GetHold(ctx, ev, h.ID)
	if err != nil || got.Status != inventory.HoldExpired || got.OrderID != "" {
		t.Fatalf("hold = %+v, %v; want expired", got, err)
	}
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
}

func testConfirmReleased(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, seats("u1", "A-1-1"))
	if _, err := s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{})
	wantErr(t, err, inventory.ErrHoldReleased)
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
}

func testRelease(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, seats("u1", "A-1-1", "A-1-2"))
	r, err := s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{})
	if err != nil || r.Status != "released" || r.HoldStatus != inventory.HoldReleased || r.HoldID != h.ID {
		t.Fatalf("release = %+v, %v", r, err)
	}
	r, err = s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{})
	if err != nil || r.Status != "released" {
		t.Fatalf("second release = %+v, %v", r, err)
	}
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
	hold(t, s, ev, seats("u2", "A-1-1")) // the seat is free again

	req := seats("u1", "B-1-1")
	req.TTL = expireSoon
	short := hold(t, s, ev, req)
	waitExpiry()
	r, err = s.Release(ctx, ev, short.ID, inventory.ReleaseRequest{})
	if err != nil || r.Status != "released" || r.HoldStatus != inventory.HoldExpired {
		t.Fatalf("release of expired = %+v, %v", r, err)
	}

	sold := hold(t, s, ev, seats("u1", "C-1-1"))
	if _, err := s.Confirm(ctx, ev, sold.ID, inventory.ConfirmRequest{}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Release(ctx, ev, sold.ID, inventory.ReleaseRequest{})
	wantErr(t, err, inventory.ErrHoldConfirmed)
	_, err = s.Release(ctx, ev, "hld_nope", inventory.ReleaseRequest{})
	wantErr(t, err, inventory.ErrHoldNotFound)
}

func testCancel(t *testing.T, s inventory.Store) {
	def := Theatre()
	def.Limits.PerUser = 2
	ev := define(t, s, def)
	h := hold(t, s, ev, seats("u1", "A-1-1", "A-1-2"))
	o, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Cancel(ctx, ev, o.ID, inventory.CancelRequest{Reason: "refund"})
	if err != nil || c.Status != inventory.OrderCancelled || c.ID != o.ID || c.CancelledAt == nil {
		t.Fatalf("cancel = %+v, %v", c, err)
	}
	c, err = s.Cancel(ctx, ev, o.ID, inventory.CancelRequest{})
	if err != nil || c.Status != inventory.OrderCancelled {
		t.Fatalf("second cancel = %+v, %v", c, err)
	}
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
	_, err = s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{})
	wantErr(t, err, inventory.ErrOrderCancelled)
	hold(t, s, ev, seats("u1", "A-1-1", "A-1-2")) // seats and the user's limit are free again
	_, err = s.Cancel(ctx, ev, "ord_nope", inventory.CancelRequest{})
	wantErr(t, err, inventory.ErrOrderNotFound)

	g := hold(t, s, ev, ga("u2", "floor", 2))
	og, err := s.Confirm(ctx, ev, g.ID, inventory.ConfirmRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cancel(ctx, ev, og.ID, inventory.CancelRequest{}); err != nil {
		t.Fatal(err)
	}
	if f := counts(t, s, ev).GA["floor"]; f.Available != 10 || f.Sold != 0 {
		t.Fatalf("floor after cancel = %+v", f)
	}
}
