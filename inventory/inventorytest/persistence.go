// The persistence case: what a store has acknowledged survives Reopen.

package inventorytest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/waitroom/waitroom/inventory"
)

func testPersistence(t *testing.T, h Harness) {
	s := h.New(t)
	def := Theatre()
	def.Limits.PerUser = 5
	ev := define(t, s, def)
	held := hold(t, s, ev, seats("u1", "A-1-1", "A-1-2"))
	toSell := hold(t, s, ev, seats("u2", "B-1-1"))
	o, err := s.Confirm(ctx, ev, toSell.ID, inventory.ConfirmRequest{PaymentRef: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	released := hold(t, s, ev, ga("u3", "floor", 3))
	s.Release(ctx, ev, released.ID, inventory.ReleaseRequest{})
	cancelled := hold(t, s, ev, seats("u4", "C-1-1"))
	oc, _ := s.Confirm(ctx, ev, cancelled.ID, inventory.ConfirmRequest{})
	s.Cancel(ctx, ev, oc.ID, inventory.CancelRequest{})
	keyed := ga("u5", "floor", 2)
	keyed.IdempotencyKey = "persist-key"
	k1 := hold(t, s, ev, keyed)
	held, err = s.Extend(ctx, ev, held.ID, inventory.ExtendRequest{TTLSeconds: 900})
	if err != nil {
		t.Fatal(err)
	}
	before := counts(t, s, ev)
	auditBefore := auditAll(t, s, ev)

	s = h.Reopen(t, s)
	if a := counts(t, s, ev); fmt.Sprint(a) != fmt.Sprint(before) {
		t.Fatalf("availability after reopen = %+v, want %+v", a, before)
	}
	if got, err := s.GetHold(ctx, ev, held.ID); err != nil || got.Status != inventory.HoldHeld || !got.ExpiresAt.Equal(held.ExpiresAt) {
		t.Fatalf("held after reopen = %+v, %v", got, err)
	}
	if got, err := s.GetOrder(ctx, ev, o.ID); err != nil || got.Status != inventory.OrderConfirmed || !slices.Equal(got.Seats, []string{"B-1-1"}) {
		t.Fatalf("order after reopen = %+v, %v", got, err)
	}
	if got, err := s.GetHold(ctx, ev, released.ID); err != nil || got.Status != inventory.HoldReleased {
		t.Fatalf("released after reopen = %+v, %v", got, err)
	}
	if got, err := s.GetOrder(ctx, ev, oc.ID); err != nil || got.Status != inventory.OrderCancelled {
		t.Fatalf("cancelled after reopen = %+v, %v", got, err)
	}
	if again := hold(t, s, ev, keyed); again.ID != k1.ID || !again.Replayed {
		t.Fatalf("idempotency key lost: %+v", again)
	}
	if a := auditAll(t, s, ev); len(a) != len(auditBefore) || a[len(a)-1].ID != auditBefore[len(auditBefore)-1].ID {
		t.Fatalf("audit after reopen has %d entries, want %d", len(a), len(auditBefore))
	}
	// The user limit still counts what u1 holds.
	_, err = s.Hold(ctx, ev, seats("u1", "A-2-1", "A-2-2", "A-2-3", "A-2-4"))
	wantErr(t, err, inventory.ErrUserLimit)
	// And the store keeps working.
	if _, err := s.Confirm(ctx, ev, held.ID, inventory.ConfirmRequest{}); err != nil {
		t.Fatal(err)
	}
}
