// Cases on extending holds: the new expiry and its bound, holds that can
// no longer be extended, invalid requests, idempotency keys, the audit
// entry, and that an extended hold outlives its first expiry.

package inventorytest

import (
	"errors"
	"testing"
	"time"

	"github.com/waitroom/waitroom/inventory"
)

func extend(t *testing.T, s inventory.Store, ev, id string, req inventory.ExtendRequest) inventory.Hold {
	t.Helper()
	h, err := s.Extend(ctx, ev, id, req)
	if err != nil {
		t.Fatalf("Extend(%s, %+v): %v", id, req, err)
	}
	return h
}

func testExtend(t *testing.T, s inventory.Store) {
	def := Theatre()
	def.HoldTTLSeconds, def.MaxHoldSeconds = 60, 200
	ev := define(t, s, def)
	if got, err := s.Event(ctx, ev); err != nil || got.MaxHoldSeconds != 200 {
		t.Fatalf("Event = %+v, %v; want max_hold_seconds 200", got, err)
	}
	h := hold(t, s, ev, seats("u1", "A-1-1"))
	before := time.Now()
	got := extend(t, s, ev, h.ID, inventory.ExtendRequest{TTLSeconds: 120})
	if d := got.ExpiresAt.Sub(before); d < 119*time.Second || d > 122*time.Second || got.ID != h.ID ||
		got.Status != inventory.HoldHeld || !got.CreatedAt.Equal(h.CreatedAt) || got.User != "u1" || len(got.Seats) != 1 {
		t.Fatalf("extended by 120s: %+v (expires in %v)", got, d)
	}
	if g, err := s.GetHold(ctx, ev, h.ID); err != nil || !g.ExpiresAt.Equal(got.ExpiresAt) {
		t.Fatalf("GetHold after extend = %+v, %v; want expiry %v", g, err, got.ExpiresAt)
	}
	// The event's TTL by default; never earlier than it is.
	if again := extend(t, s, ev, h.ID, inventory.ExtendRequest{}); !again.ExpiresAt.Equal(got.ExpiresAt) {
		t.Fatalf("a shorter extend moved the expiry from %v to %v", got.ExpiresAt, again.ExpiresAt)
	}
	// Bounded by the maximum hold time from creation, and then a no-op.
	limit := h.CreatedAt.Add(200 * time.Second)
	if capped := extend(t, s, ev, h.ID, inventory.ExtendRequest{TTL: time.Hour}); !capped.ExpiresAt.Equal(limit) {
		t.Fatalf("extend by an hour: expires %v, want the maximum %v", capped.ExpiresAt, limit)
	}
	if capped := extend(t, s, ev, h.ID, inventory.ExtendRequest{TTLSeconds: 3600}); !capped.ExpiresAt.Equal(limit) {
		t.Fatalf("extend at the maximum: expires %v, want %v", capped.ExpiresAt, limit)
	}
	wantCounts(t, counts(t, s, ev).Counts, 56, 1, 0)

	// GA holds too; and the audit stream records each change once.
	g := hold(t, s, ev, ga("u2", "floor", 2))
	before = time.Now()
	got = extend(t, s, ev, g.ID, inventory.ExtendRequest{TTL: 90500 * time.Millisecond})
	if d := got.ExpiresAt.Sub(before); d < 90*time.Second || d > 93*time.Second || got.Pool != "floor" || got.Quantity != 2 {
		t.Fatalf("extend a GA hold by 90.5 s: %+v (expires in %v)", got, d)
	}
	n := 0
	for _, e := range auditAll(t, s, ev) {
		if e.Action == inventory.ActionExtend {
			n++
			if e.HoldID != h.ID && e.HoldID != g.ID {
				t.Fatalf("extend audit entry for %s", e.HoldID)
			}
		}
	}
	if n != 3 { // 120 s, the maximum, the GA hold; the no-ops record nothing
		t.Fatalf("%d extend entries in the audit stream, want 3", n)
	}
}

func testExtendDefaultMax(t *testing.T, s inventory.Store) {
	def := Theatre()
	def.HoldTTLSeconds = 60
	ev := define(t, s, def)
	if got, err := s.Event(ctx, ev); err != nil || got.MaxHoldSeconds != inventory.DefaultMaxHoldFactor*60 {
		t.Fatalf("Event = %+v, %v; want the default max_hold_seconds", got, err)
	}
	h := hold(t, s, ev, seats("u1", "A-1-1"))
	want := h.CreatedAt.Add(inventory.DefaultMaxHoldFactor * time.Minute)
	if got := extend(t, s, ev, h.ID, inventory.ExtendRequest{TTL: 2 * time.Hour}); !got.ExpiresAt.Equal(want) {
		t.Fatalf("extend by two hours: expires %v, want %v", got.ExpiresAt, want)
	}
	for _, bad := range []int{59, 86401, -1} {
		d := Theatre()
		d.HoldTTLSeconds, d.MaxHoldSeconds = 60, bad
		if _, err := s.PutEvent(ctx, NewEventID(), d, "test"); !errors.Is(err, inventory.ErrInvalid) {
			t.Errorf("max_hold_seconds %d: %v, want invalid", bad, err)
		}
	}
}

func testExtendEnded(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	req := seats("u1", "A-1-1")
	req.TTL = expireSoon
	expired := hold(t, s, ev, req)
	released := hold(t, s, ev, seats("u1", "A-1-2"))
	if _, err := s.Release(ctx, ev, released.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	sold := hold(t, s, ev, seats("u1", "A-1-3"))
	if _, err := s.Confirm(ctx, ev, sold.ID, inventory.ConfirmRequest{}); err != nil {
		t.Fatal(err)
	}
	waitExpiry()
	_, err := s.Extend(ctx, ev, expired.ID, inventory.ExtendRequest{TTLSeconds: 60})
	wantErr(t, err, inventory.ErrHoldExpired)
	if g, err := s.GetHold(ctx, ev, expired.ID); err != nil || g.Status != inventory.HoldExpired {
		t.Fatalf("an expired hold after extend = %+v, %v", g, err)
	}
	_, err = s.Extend(ctx, ev, released.ID, inventory.ExtendRequest{})
	wantErr(t, err, inventory.ErrHoldReleased)
	_, err = s.Extend(ctx, ev, sold.ID, inventory.ExtendRequest{})
	wantErr(t, err, inventory.ErrHoldConfirmed)
	_, err = s.Extend(ctx, ev, "hld_doesnotexist", inventory.ExtendRequest{})
	wantErr(t, err, inventory.ErrHoldNotFound)
	_, err = s.Extend(ctx, NewEventID(), expired.ID, inventory.ExtendRequest{})
	wantErr(t, err, inventory.ErrEventNotFound)
	wantCounts(t, counts(t, s, ev).Counts, 56, 0, 1)

	live := hold(t, s, ev, seats("u1", "A-1-4"))
	for i, req := range []inventory.ExtendRequest{
		{TTLSeconds: -1}, {TTLSeconds: 86401}, {TTL: time.Microsecond}, {TTL: 25 * time.Hour},
		{IdempotencyKey: "bad key"}, {Actor: "a\x00"},
	} {
		if _, err := s.Extend(ctx, ev, live.ID, req); !errors.Is(err, inventory.ErrInvalid) {
			t.Fatalf("case %d (%+v): %v, want invalid", i, req, err)
		}
	}
	if g, _ := s.GetHold(ctx, ev, live.ID); !g.ExpiresAt.Equal(live.ExpiresAt) {
		t.Fatal("an invalid extend changed the hold")
	}
}

func testExtendIdempotent(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	h := hold(t, s, ev, seats("u1", "A-1-1"))
	req := inventory.ExtendRequest{TTLSeconds: 900, IdempotencyKey: "ext-key"}
	first := extend(t, s, ev, h.ID, req)
	if first.Replayed {
		t.Fatal("a first extend says replayed")
	}
	time.Sleep(5 * time.Millisecond)
	again := extend(t, s, ev, h.ID, req)
	if !again.Replayed || !again.ExpiresAt.Equal(first.ExpiresAt) {
		t.Fatalf("a repeated key: %+v, want the first result %v replayed", again, first.ExpiresAt)
	}
	req.TTLSeconds = 901
	_, err := s.Extend(ctx, ev, h.ID, req)
	wantErr(t, err, inventory.ErrIdempotencyMismatch)
	// An error outcome is remembered too.
	if _, err := s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	k := inventory.ExtendRequest{IdempotencyKey: "ext-released"}
	_, err = s.Extend(ctx, ev, h.ID, k)
	wantErr(t, err, inventory.ErrHoldReleased)
	_, err = s.Extend(ctx, ev, h.ID, k)
	wantErr(t, err, inventory.ErrHoldReleased)
}

// testExtendOutlivesFirstExpiry: an extended hold is still live, and its
// seat still taken, after the expiry it had first; no reap takes it.
func testExtendOutlivesFirstExpiry(t *testing.T, s inventory.Store) {
	ev := define(t, s, Theatre())
	req := seats("u1", "A-1-1")
	req.TTL = time.Second
	h := hold(t, s, ev, req)
	got, err := s.Extend(ctx, ev, h.ID, inventory.ExtendRequest{TTLSeconds: 120})
	if errors.Is(err, inventory.ErrHoldExpired) {
		t.Skip("the machine took more than a second between two calls")
	}
	if err != nil || !got.ExpiresAt.After(h.ExpiresAt.Add(100*time.Second)) {
		t.Fatalf("extend: %+v, %v", got, err)
	}
	time.Sleep(time.Until(h.ExpiresAt) + 200*time.Millisecond)
	if n, err := s.Reap(ctx, ev, 100); err != nil || n != 0 {
		t.Fatalf("Reap after the first expiry = %d, %v; want nothing to reap", n, err)
	}
	if g, err := s.GetHold(ctx, ev, h.ID); err != nil || g.Status != inventory.HoldHeld || !g.ExpiresAt.Equal(got.ExpiresAt) {
		t.Fatalf("after the first expiry: %+v, %v", g, err)
	}
	_, err = s.Hold(ctx, ev, seats("u2", "A-1-1"))
	wantErr(t, err, inventory.ErrSeatUnavailable)
	if _, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{}); err != nil {
		t.Fatalf("confirm an extended hold after its first expiry: %v", err)
	}
}
