package redisstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/inventorytest"
)

// TestTornWrite kills Redis as it writes one change (a confirm, a cancel,
// a release), cuts the AOF in the middle of each command of the change's
// MULTI/EXEC block in turn, as the kill can, and restarts twice (a change
// in between): the change must be gone whole both times, and the
// counters, the seat map and the audit stream must agree.
//
// With Redis's default aof-load-truncated yes the first restart drops
// the change but leaves its first commands in the AOF, and the second
// applies them: after a torn confirm of 3 GA places the availability
// said held 0, sold 3 while the audit said held 3, sold 0 (the
// TestCrashKill9 failure). The store requires aof-load-truncated no;
// the torn AOF is then repaired with redis-check-aof --fix, which cuts
// before the block's MULTI.
func TestTornWrite(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	ctx := context.Background()
	seats := []string{"A-1-1", "A-1-2"}
	cases := []struct {
		name string
		// change sets up an event and makes the change that is torn; it
		// returns a check that the change did not happen.
		change func(t *testing.T, s inventory.Store, ev string) func(t *testing.T, s inventory.Store)
	}{
		{"confirm GA", func(t *testing.T, s inventory.Store, ev string) func(t *testing.T, s inventory.Store) {
			h := hold(t, s, ev, inventory.HoldRequest{User: "u", GA: &inventory.GARequest{Pool: "floor", Quantity: 3}})
			if _, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "p"}); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T, s inventory.Store) {
				if got, err := s.GetHold(ctx, ev, h.ID); err != nil || got.Status != inventory.HoldHeld || got.OrderID != "" {
					t.Fatalf("hold after a torn confirm: %+v, %v", got, err)
				}
			}
		}},
		{"cancel seats", func(t *testing.T, s inventory.Store, ev string) func(t *testing.T, s inventory.Store) {
			h := hold(t, s, ev, inventory.HoldRequest{User: "u", Seats: seats})
			o, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "p"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Cancel(ctx, ev, o.ID, inventory.CancelRequest{Reason: "r"}); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T, s inventory.Store) {
				if got, err := s.GetOrder(ctx, ev, o.ID); err != nil || got.Status != inventory.OrderConfirmed {
					t.Fatalf("order after a torn cancel: %+v, %v", got, err)
				}
			}
		}},
		{"release seats", func(t *testing.T, s inventory.Store, ev string) func(t *testing.T, s inventory.Store) {
			h := hold(t, s, ev, inventory.HoldRequest{User: "u", Seats: seats})
			if _, err := s.Release(ctx, ev, h.ID, inventory.ReleaseRequest{}); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T, s inventory.Store) {
				if got, err := s.GetHold(ctx, ev, h.ID); err != nil || got.Status != inventory.HoldHeld {
					t.Fatalf("hold after a torn release: %+v, %v", got, err)
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			for k := 1; ; k++ {
				ev := inventorytest.NewEventID()
				s := newStore(t, srv.Client())
				if _, err := s.PutEvent(ctx, ev, inventorytest.CrashEvent(), "test"); err != nil {
					t.Fatal(err)
				}
				undone := tc.change(t, s, ev)
				srv.Kill()
				block := srv.TearLastBlock(k)
				repairs := srv.AOFRepairs
				srv.Restart()
				if srv.AOFRepairs != repairs+1 {
					t.Fatalf("cut in command %d of %v: Redis started from the torn AOF", k, block[k].Args[0])
				}
				s = newStore(t, srv.Client())
				undone(t, s)
				inventorytest.CheckAuditInvariants(t, s, ev)
				// Another change, then a plain crash and restart.
				hold(t, s, ev, inventory.HoldRequest{User: "v", Seats: []string{"B-1-1", "B-1-2"}})
				srv.Kill()
				srv.Restart()
				s = newStore(t, srv.Client())
				undone(t, s)
				inventorytest.CheckAuditInvariants(t, s, ev)
				if k == len(block)-1 { // the cut was in EXEC
					t.Logf("cut in each of the %d commands of the block: the change is gone whole", k)
					return
				}
			}
		})
	}
}

func hold(t *testing.T, s inventory.Store, ev string, req inventory.HoldRequest) inventory.Hold {
	t.Helper()
	h, err := s.Hold(context.Background(), ev, req)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
