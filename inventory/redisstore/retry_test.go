package redisstore

import (
	"context"
	"slices"
	"testing"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/inventorytest"
)

// TestHoldScriptRetry runs the hold script twice with the same hold id,
// as go-redis does when a reply is lost on the network: the second run
// must answer like the first and take nothing more.
func TestHoldScriptRetry(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, Options{Client: redistest.Start(t, redistest.Options{}).Client()})
	if err != nil {
		t.Fatal(err)
	}
	ev := inventorytest.NewEventID()
	if _, err := s.PutEvent(ctx, ev, inventorytest.Theatre(), ""); err != nil {
		t.Fatal(err)
	}
	id := inventory.NewID(inventory.HoldIDPrefix)
	run := func() inventory.Hold {
		r, err := s.run(ctx, scriptHold, ev, id, "u1", "section", "A", 2, 0, "", "", "")
		if err != nil {
			t.Fatal(err)
		}
		return holdFrom(ev, r)
	}
	first, second := run(), run()
	if first.ID != id || second.ID != id || !slices.Equal(first.Seats, second.Seats) || !first.ExpiresAt.Equal(second.ExpiresAt) {
		t.Fatalf("retry answered %+v, first run %+v", second, first)
	}
	a, err := s.Availability(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	if a.Held != 2 {
		t.Fatalf("after a retried hold %d seats are held, want 2", a.Held)
	}
}
