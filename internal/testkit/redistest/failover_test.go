package redistest

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestSentinelFailover: a write the replicas have is on the promoted
// replica after the master is killed, and the killed master comes back
// as a replica of it.
func TestSentinelFailover(t *testing.T) {
	r := StartReplicated(t, 2, Options{})
	ts := time.Now()
	g := StartSentinels(t, r, 3)
	t.Logf("sentinels started in %v", time.Since(ts))
	ctx := context.Background()
	m := r.Master.Client()
	if err := m.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := m.Wait(ctx, 2, 5*time.Second).Result(); err != nil || n != 2 {
		t.Fatalf("WAIT 2 = %d, %v", n, err)
	}
	old := r.Master
	t0 := time.Now()
	old.Kill()
	promoted := g.WaitFailover(t, old)
	t.Logf("sentinel failover took %v", time.Since(t0))
	if promoted == old || r.Master != promoted || len(r.Replicas) != 2 {
		t.Fatalf("promoted %v, group %v %v", promoted, r.Master, r.Replicas)
	}
	if v, err := promoted.Client().Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("on the promoted replica k = %q, %v", v, err)
	}
	sc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: g.Name, SentinelAddrs: g.Addrs()})
	defer sc.Close()
	if err := sc.Set(ctx, "k2", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// The old master comes back; a Sentinel makes it a replica of the
	// promoted one (after 10-20 s, which this test does not wait for),
	// and writes still reach the promoted master meanwhile.
	old.Restart()
	if err := sc.Set(ctx, "k3", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := promoted.Client().Get(ctx, "k3").Result(); err != nil || v != "v" {
		t.Fatalf("a write after the old master came back is not on the promoted master: %q, %v", v, err)
	}
}

// TestClusterFailover: killing a master of a cluster with replicas
// promotes its replica, which keeps the master's keys; the restarted
// master rejoins as a replica.
func TestClusterFailover(t *testing.T) {
	ts := time.Now()
	c := StartClusterWith(t, ClusterOptions{Masters: 3, Replicas: 1, NodeTimeout: time.Second})
	t.Logf("cluster started in %v", time.Since(ts))
	if len(c.Nodes) != 6 {
		t.Fatalf("%d nodes", len(c.Nodes))
	}
	ctx := context.Background()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	defer cc.Close()
	if err := cc.Set(ctx, "{ev:1}k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	dead := c.MasterOf(t, "{ev:1}k")
	replicas := c.ReplicasOf(t, dead)
	if len(replicas) != 1 {
		t.Fatalf("%s has %d replicas", dead.Addr, len(replicas))
	}
	waitInSync(t, dead, replicas)
	t0 := time.Now()
	dead.Kill()
	promoted := c.WaitFailover(t, dead)
	t.Logf("cluster failover took %v", time.Since(t0))
	if promoted != replicas[0] || c.MasterOf(t, "{ev:1}k") != promoted {
		t.Fatalf("promoted %s, want %s", promoted.Addr, replicas[0].Addr)
	}
	if v, err := promoted.Client().Do(ctx, "GET", "{ev:1}k").Text(); err != nil || v != "v" {
		t.Fatalf("on the promoted replica = %q, %v", v, err)
	}
	dead.Restart()
	waitUntil(t, "the old master to rejoin as a replica", func() (bool, string) {
		r := c.ReplicasOf(t, promoted)
		return len(r) == 1 && r[0] == dead, ""
	})
}
