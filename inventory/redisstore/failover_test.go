package redisstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/redisconn"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/inventorytest"
	"github.com/waitroom/waitroom/inventory/redisstore"
)

// TestFailoverKill9 kills the master with SIGKILL right after a burst of
// acknowledged sales, with min_replicas_acked 1, through Sentinel and
// through a Redis Cluster with a replica per master: after the promotion
// every acknowledged confirm is sold and every acknowledged cancel
// cancelled, the audit stream replays cleanly, and sales carry on.
func TestFailoverKill9(t *testing.T) {
	for _, mode := range []string{"sentinel", "cluster"} {
		t.Run(mode, func(t *testing.T) {
			var (
				settings redisconn.Settings
				kill     func() *redistest.Server
				wait     func(dead *redistest.Server)
			)
			ev := inventorytest.NewEventID()
			switch mode {
			case "sentinel":
				// Two replicas: after the failover one is left to confirm.
				r := redistest.StartReplicated(t, 2, redistest.Options{})
				g := redistest.StartSentinels(t, r, 3)
				settings.Sentinel = redisconn.Sentinel{Master: g.Name, Addresses: g.Addrs()}
				kill = func() *redistest.Server { m := r.Master; m.Kill(); return m }
				wait = func(dead *redistest.Server) { g.WaitFailover(t, dead) }
			case "cluster":
				c := redistest.StartClusterWith(t, redistest.ClusterOptions{Masters: 3, Replicas: 1, NodeTimeout: time.Second})
				settings.Cluster = c.Addrs()
				kill = func() *redistest.Server { m := c.MasterOf(t, "{ev:"+ev+"}"); m.Kill(); return m }
				wait = func(dead *redistest.Server) {
					promoted := c.WaitFailover(t, dead)
					// One replica per master: until the old master is
					// back as the promoted one's replica, WAIT 1 fails.
					dead.Restart()
					c.WaitReplicas(t, promoted, 1)
				}
			}
			settings.MinReplicasAcked = 1
			conn := redisconn.New(settings, nil)
			t.Cleanup(func() { conn.Close() })
			client, err := conn.Client()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			s, err := redisstore.New(ctx, redisstore.Options{Client: client, MinReplicasAcked: 1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			if _, err := s.PutEvent(ctx, ev, inventorytest.CrashEvent(), "test"); err != nil {
				t.Fatal(err)
			}
			var (
				mu   sync.Mutex
				acks []inventorytest.Ack
				n    int
				dead *redistest.Server
			)
			loadCtx, stop := context.WithCancel(ctx)
			killed := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				inventorytest.Load(loadCtx, s, ev, 8, 1, func(a inventorytest.Ack) {
					mu.Lock()
					defer mu.Unlock()
					acks = append(acks, a)
					if n++; n == 200 {
						dead = kill()
						close(killed)
					}
				})
			}()
			<-killed
			wait(dead)
			stop()
			<-done
			time.Sleep(50 * time.Millisecond) // let the load's short holds run out
			inventorytest.VerifyAcked(t, s, ev, acks)
			h, err := s.Hold(ctx, ev, inventory.HoldRequest{User: "after", GA: &inventory.GARequest{Pool: "floor", Quantity: 1}})
			if err != nil {
				t.Fatalf("the first hold after the failover: %v", err)
			}
			if _, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "after"}); err != nil {
				t.Fatalf("the first confirm after the failover: %v", err)
			}
			entries := inventorytest.CheckAuditInvariants(t, s, ev)
			t.Logf("%d acknowledged changes survive the failover, %d audit entries replay cleanly", len(acks), entries)
		})
	}
}
