package redispersist_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/redispersist"
	"github.com/waitroom/waitroom/internal/redistest"
)

func TestCheck(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		aof  bool
		want bool
	}{{true, true}, {false, false}} {
		srv := redistest.Start(t, redistest.Options{AppendOnly: tc.aof})
		nodes, err := redispersist.Check(ctx, srv.Client())
		if err != nil || len(nodes) != 1 {
			t.Fatalf("Check = %v, %v", nodes, err)
		}
		n := nodes[0]
		if n.Addr != srv.Addr || n.AOF() != tc.want || n.FsyncAlways() != tc.want || n.LoadsTornTail() {
			t.Fatalf("appendonly %v: got %+v", tc.aof, n)
		}
	}
}

// TestLoadsTornTail reads aof-load-truncated: redistest's AOF servers run
// with no; Redis's default, yes, is reported.
func TestLoadsTornTail(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	c := srv.Client()
	nodes, err := redispersist.Check(ctx, c)
	if err != nil || len(nodes) != 1 || nodes[0].AOFLoadTruncated != "no" || nodes[0].LoadsTornTail() {
		t.Fatalf("Check = %+v, %v", nodes, err)
	}
	if err := c.ConfigSet(ctx, "aof-load-truncated", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	nodes, err = redispersist.Check(ctx, c)
	if err != nil || len(nodes) != 1 || nodes[0].AOFLoadTruncated != "yes" || !nodes[0].LoadsTornTail() {
		t.Fatalf("Check after CONFIG SET aof-load-truncated yes = %+v, %v", nodes, err)
	}
}

func TestCheckCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	t.Cleanup(func() { c.Close() })
	nodes, err := redispersist.Check(context.Background(), c)
	if err != nil || len(nodes) != 3 {
		t.Fatalf("Check = %v, %v", nodes, err)
	}
	for _, n := range nodes {
		if n.Err != nil || n.AOF() { // the cluster nodes run without an AOF
			t.Fatalf("node %+v", n)
		}
	}
}

func TestCheckUnreadable(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	c := srv.Client()
	// A client for a closed server: the settings cannot be read.
	srv.Stop()
	nodes, err := redispersist.Check(context.Background(), c)
	if err != nil || len(nodes) != 1 || nodes[0].Err == nil || nodes[0].AOF() {
		t.Fatalf("Check of a stopped server = %+v, %v", nodes, err)
	}
}
