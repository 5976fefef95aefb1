package redispersist_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/redispersist"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
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

// TestEnforce: a Redis without the AOF, or one that would start from a
// torn AOF, is refused when persistence is required and logged as an
// error otherwise, with what to set and how to repair; a Redis with
// appendonly yes, appendfsync always and aof-load-truncated no passes
// silently.
func TestEnforce(t *testing.T) {
	ctx := context.Background()
	stakes := redispersist.Stakes{Role: "test", Lost: "LOST", LostLast: "LOSTLAST", Torn: "TORN"}
	enforce := func(c redis.UniversalClient, require bool) (string, error) {
		var log bytes.Buffer
		err := redispersist.Enforce(ctx, c, slog.New(slog.NewTextHandler(&log, nil)), stakes, require)
		return log.String(), err
	}
	has := func(s string, parts ...string) bool {
		for _, p := range parts {
			if !strings.Contains(s, p) {
				return false
			}
		}
		return true
	}

	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	c := srv.Client()
	for _, require := range []bool{false, true} {
		if log, err := enforce(c, require); err != nil || log != "" {
			t.Fatalf("a Redis as required (require %v): %v, logged %q", require, err, log)
		}
	}

	if err := c.ConfigSet(ctx, "aof-load-truncated", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{srv.Addr, "aof-load-truncated yes", "TORN", "set aof-load-truncated no", "redis-check-aof --fix"}
	if log, err := enforce(c, true); err == nil || !has(err.Error(), want...) || log != "" {
		t.Fatalf("aof-load-truncated yes, required: %v, logged %q", err, log)
	}
	if log, err := enforce(c, false); err != nil || !has(log, append(want, "level=ERROR", "THE TEST REDIS CAN REPLAY HALF A CHANGE")...) {
		t.Fatalf("aof-load-truncated yes: %v, logged %q", err, log)
	}

	if err := c.ConfigSet(ctx, "appendfsync", "everysec").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ConfigSet(ctx, "aof-load-truncated", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if log, err := enforce(c, true); err != nil || !has(log, "level=WARN", "everysec", "LOSTLAST", "appendfsync always") {
		t.Fatalf("appendfsync everysec, required: %v, logged %q", err, log)
	}

	off := redistest.Start(t, redistest.Options{}).Client()
	if log, err := enforce(off, true); err == nil || !has(err.Error(), "appendonly off", "LOST", "appendonly yes") || log != "" {
		t.Fatalf("appendonly no, required: %v, logged %q", err, log)
	}
	if log, err := enforce(off, false); err != nil || !has(log, "level=ERROR", "THE TEST REDIS HAS NO PERSISTENCE", "LOST") {
		t.Fatalf("appendonly no: %v, logged %q", err, log)
	}
}
