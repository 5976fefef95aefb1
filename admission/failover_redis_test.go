package admission_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/redisstore"
	"github.com/waitroom/waitroom/internal/redisconn"
	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestDrawDueDuringFailover: the master of the event's slot in a Redis
// Cluster is killed just before the on-sale; the draw due then happens
// as soon as Redis has promoted a replica, with the seed whose
// commitment the audit published before, and every visitor who joined
// before the on-sale (acknowledged with min_replicas_acked 1: two
// replicas per master, so one is left after the failover) has a number.
func TestDrawDueDuringFailover(t *testing.T) {
	cl := redistest.StartClusterWith(t, redistest.ClusterOptions{Masters: 3, Replicas: 2, NodeTimeout: time.Second})
	conn := redisconn.New(redisconn.Settings{Cluster: cl.Addrs(), MinReplicasAcked: 1}, nil)
	t.Cleanup(func() { conn.Close() })
	client, err := conn.Client()
	if err != nil {
		t.Fatal(err)
	}
	s, err := redisstore.New(ctx, redisstore.Options{Client: client, MinReplicasAcked: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	clk := fakeclock.New(t0.Add(-10 * time.Second))
	m := &meter{}
	m.m = admission.Measurements{LatencyP50: 20 * time.Millisecond, LatencyP95: 50 * time.Millisecond, RequestRate: 10}
	e, err := admission.New(admission.Options{Store: s, Clock: clk.Now, Meter: m,
		Rand: rand.NewChaCha8([32]byte{7}), Replica: "a"}, event("show"))
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(11 * time.Second)
	if err := e.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := e.Audit(ctx, "show", "public", 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var tickets []admission.Ticket
	for range 300 {
		tk, _, err := e.Join(ctx, "show", admission.JoinRequest{})
		if err != nil {
			t.Fatal(err)
		}
		tickets = append(tickets, tk)
	}
	dead := cl.MasterOf(t, "{adm:show}")
	killed := time.Now()
	dead.Kill()
	clk.Add(time.Minute) // the on-sale: the pre-queue's draw is due
	drawn := make(chan time.Time, 1)
	go func() {
		for range 600 {
			if err := e.Tick(ctx); err == nil && e.Figures("show").Lanes["public"].Drawn > 0 {
				drawn <- time.Now()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		close(drawn)
	}()
	cl.WaitFailover(t, dead)
	promoted := time.Now()
	at, ok := <-drawn
	if !ok {
		t.Fatal("the draw never happened after the failover")
	}
	t.Logf("Redis failed over in %v; the draw due during it was made %v after the promotion",
		promoted.Sub(killed).Round(time.Millisecond), at.Sub(promoted).Round(time.Millisecond))
	after, err := e.Audit(ctx, "show", "public", 0, 0, len(tickets))
	if err != nil {
		t.Fatal(err)
	}
	if !after.Drawn || after.Commitment != before.Commitment || admission.Commitment(after.Seed) != before.Commitment {
		t.Fatalf("the draw's commitment %x (drawn %v), published before %x", after.Commitment, after.Drawn, before.Commitment)
	}
	if err := admission.VerifyAudit(before.Commitment, after.Seed, after.Hashes); err != nil {
		t.Fatal(err)
	}
	inDraw := map[[32]byte]bool{}
	for _, h := range after.Hashes {
		inDraw[h] = true
	}
	for _, tk := range tickets {
		if !inDraw[admission.VisitorHash(tk.Visitor)] {
			t.Fatalf("visitor %x joined before the on-sale and is not in the draw (%d drawn)", tk.Visitor, after.Count)
		}
		res, err := e.Status(ctx, "show", tk)
		if err != nil || res.Ticket.Number == 0 {
			t.Fatalf("a visitor who joined before the on-sale has no number: %+v %v", res.Ticket, err)
		}
	}
}
