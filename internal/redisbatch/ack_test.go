package redisbatch_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/redisbatch"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// waitCalls is how many WAIT commands the Redis at addr has run.
func waitCalls(t *testing.T, addr string) int {
	t.Helper()
	info, err := redistest.Info(addr, "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	v, _, _ := strings.Cut(strings.TrimPrefix(info["cmdstat_wait"], "calls="), ",")
	n, _ := strconv.Atoi(v)
	return n
}

// TestDurable: concurrent durable writes are acknowledged once a replica
// has them, share WAITs (one per pipeline), and fail with
// ErrNotReplicated when more replicas are asked for than exist.
func TestDurable(t *testing.T) {
	r := redistest.StartReplicated(t, 1, redistest.Options{})
	ctx := context.Background()
	c := r.Master.Client()
	b := redisbatch.NewAcked(c, 2, redisbatch.Ack{Replicas: 1, Timeout: time.Second})
	defer b.Close()
	const n = 400
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			key := fmt.Sprintf("k%d", i)
			if _, err := b.Durable(ctx, key, func(p redis.Pipeliner) redis.Cmder { return p.Set(ctx, key, i, 0) }); err != nil {
				t.Errorf("%s: %v", key, err)
			}
		})
	}
	wg.Wait()
	if w := waitCalls(t, r.Master.Addr); w < 1 || w >= n {
		t.Errorf("%d durable writes ran %d WAITs, want at least 1 and fewer than %d", n, w, n)
	}
	rc := r.Replicas[0].Client()
	for i := range n {
		if v, err := rc.Get(ctx, fmt.Sprintf("k%d", i)).Int(); err != nil || v != i {
			t.Fatalf("acknowledged k%d on the replica: %d, %v", i, v, err)
		}
	}
	two := redisbatch.NewAcked(c, 1, redisbatch.Ack{Replicas: 2, Timeout: 20 * time.Millisecond})
	defer two.Close()
	if _, err := two.Durable(ctx, "x", func(p redis.Pipeliner) redis.Cmder { return p.Set(ctx, "x", 1, 0) }); !errors.Is(err, redisbatch.ErrNotReplicated) {
		t.Fatalf("WAIT 2 with one replica: %v", err)
	}
}

// TestDurableCluster: in a Redis Cluster the WAIT goes to the master of
// each write's key, on the write's connection.
func TestDurableCluster(t *testing.T) {
	cl := redistest.StartClusterWith(t, redistest.ClusterOptions{Masters: 3, Replicas: 1, NodeTimeout: 2 * time.Second})
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	defer cc.Close()
	ctx := context.Background()
	b := redisbatch.NewAcked(cc, 2, redisbatch.Ack{Replicas: 1, Timeout: time.Second})
	defer b.Close()
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			key := fmt.Sprintf("{ev:%d}:k", i)
			if _, err := b.Durable(ctx, key, func(p redis.Pipeliner) redis.Cmder { return p.Set(ctx, key, i, 0) }); err != nil {
				t.Errorf("%s: %v", key, err)
			}
		})
	}
	wg.Wait()
	masters := 0
	for _, s := range cl.Nodes[:3] {
		if waitCalls(t, s.Addr) > 0 {
			masters++
		}
	}
	if masters != 3 {
		t.Fatalf("WAIT ran on %d of 3 masters", masters)
	}
}
