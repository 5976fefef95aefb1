// Cases on idempotency keys: a retried hold, confirm or release replays
// the first outcome (a failure too), a reused key with another request is
// refused, and keys belong to their event.

package inventorytest

import (
	"slices"
	"testing"

	"github.com/waitroom/waitroom/inventory"
)

func testIdempotentHold(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	req := seats("u1", "A-1-1")
	req.IdempotencyKey = "k-hold-1"
	h1 := hold(t, s, ev, req)
	h2 := hold(t, s, ev, req)
	if h2.ID != h1.ID || !h2.Replayed || h1.Replayed || !h2.ExpiresAt.Equal(h1.ExpiresAt) {
		t.Fatalf("retry = %+v, want replay of %+v", h2, h1)
	}
	wantCounts(t, counts(t, s, ev).Counts, 56, 1, 0)
	// The original result, even after the hold has moved on.
	if _, err := s.Release(ctx, ev, h1.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	h3 := hold(t, s, ev, req)
	if h3.ID != h1.ID || h3.Status != inventory.HoldHeld {
		t.Fatalf("retry after release = %+v", h3)
	}
	wantCounts(t, counts(t, s, ev).Counts, 57, 0, 0)
	// Same key, different request.
	other := seats("u1", "A-1-2")
	other.IdempotencyKey = "k-hold-1"
	_, err := s.Hold(ctx, ev, other)
	wantErr(t, err, inventory.ErrIdempotencyMismatch)
	// A failure is an outcome too: the retry gets it back.
	hold(t, s, ev, seats("u2", "A-1-5"))
	conflict := seats("u3", "A-1-5")
	conflict.IdempotencyKey = "k-hold-2"
	_, err = s.Hold(ctx, ev, conflict)
	wantErr(t, err, inventory.ErrSeatUnavailable)
	_, err = s.Hold(ctx, ev, conflict)
	if d := wantErr(t, err, inventory.ErrSeatUnavailable); !slices.Equal(d.Seats, []string{"A-1-5"}) {
		t.Fatalf("replayed conflict = %+v", d)
	}
	// Keys belong to their event.
	ev2 := define(t, s, Theatre())
	h4 := hold(t, s, ev2, req)
	if h4.ID == h1.ID || h4.Replayed {
		t.Fatalf("key leaked across events: %+v", h4)
	}
}

func testIdempotentConfirmRelease(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, seats("u1", "A-1-1"))
	creq := inventory.ConfirmRequest{PaymentRef: "pay", IdempotencyKey: "k-confirm"}
	o1, err := s.Confirm(ctx, ev, h.ID, creq)
	if err != nil {
		t.Fatal(err)
	}
	o2, err := s.Confirm(ctx, ev, h.ID, creq)
	if err != nil || o2.ID != o1.ID || !o2.Replayed {
		t.Fatalf("confirm retry = %+v, %v", o2, err)
	}
	_, err = s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "other", IdempotencyKey: "k-confirm"})
	wantErr(t, err, inventory.ErrIdempotencyMismatch)

	h2 := hold(t, s, ev, seats("u1", "A-1-2"))
	rreq := inventory.ReleaseRequest{IdempotencyKey: "k-release"}
	r1, err := s.Release(ctx, ev, h2.ID, rreq)
	if err != nil || r1.HoldStatus != inventory.HoldReleased {
		t.Fatal(r1, err)
	}
	r2, err := s.Release(ctx, ev, h2.ID, rreq)
	if err != nil || !r2.Replayed || r2.HoldID != h2.ID {
		t.Fatalf("release retry = %+v, %v", r2, err)
	}
	// A remembered failure of confirm.
	h3 := hold(t, s, ev, seats("u1", "A-1-3"))
	if _, err := s.Release(ctx, ev, h3.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	late := inventory.ConfirmRequest{IdempotencyKey: "k-late"}
	_, err = s.Confirm(ctx, ev, h3.ID, late)
	wantErr(t, err, inventory.ErrHoldReleased)
	_, err = s.Confirm(ctx, ev, h3.ID, late)
	wantErr(t, err, inventory.ErrHoldReleased)
}
