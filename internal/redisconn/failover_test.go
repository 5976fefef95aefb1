package redisconn_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/redisconn"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

func open(t *testing.T, s redisconn.Settings) redis.UniversalClient {
	t.Helper()
	conn := redisconn.New(s, nil)
	t.Cleanup(func() { conn.Close() })
	c, err := conn.Client()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSentinelFailover: through redis.sentinel the client follows the
// Sentinels to the promoted replica: the first write sent after Redis
// finished its failover succeeds (retried within RetryFor, 2 s).
func TestSentinelFailover(t *testing.T) {
	r := redistest.StartReplicated(t, 1, redistest.Options{})
	g := redistest.StartSentinels(t, r, 3)
	c := open(t, redisconn.Settings{Sentinel: redisconn.Sentinel{Master: g.Name, Addresses: g.Addrs()},
		RetryFor: 2 * time.Second})
	ctx := context.Background()
	if err := c.Set(ctx, "k", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	old := r.Master
	killed := time.Now()
	old.Kill()
	g.WaitFailover(t, old)
	promoted := time.Now()
	if err := c.Set(ctx, "k", "2", 0).Err(); err != nil {
		t.Fatalf("the first write after the failover: %v", err)
	}
	t.Logf("Sentinel failover took %v; the first write after it took %v",
		promoted.Sub(killed).Round(time.Millisecond), time.Since(promoted).Round(time.Millisecond))
	old.Restart() // a Sentinel makes it a replica; writes still reach the master
	if err := c.Set(ctx, "k", "3", 0).Err(); err != nil {
		t.Fatalf("a write after the old master came back: %v", err)
	}
}

// TestRestartResumes: a command sent while a standalone Redis restarts
// waits for it (within RetryFor) instead of failing.
func TestRestartResumes(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	c := open(t, redisconn.Settings{URL: srv.URL(), RetryFor: 10 * time.Second})
	ctx := context.Background()
	if err := c.Set(ctx, "k", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	done := make(chan error, 1)
	go func() { done <- c.Incr(ctx, "n").Err() }()
	srv.Restart()
	if err := <-done; err != nil {
		t.Fatalf("INCR across the restart: %v", err)
	}
}

// TestNotExecuted: which errors say Redis surely did not run a command.
func TestNotExecuted(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	read := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	replyErr := func(script string) error {
		return srv.Client().Eval(ctx, "return redis.error_reply('"+script+"')", nil).Err()
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{dial, true},
		{fmt.Errorf("redis: connection pool: %w", dial), true},
		{read, false},
		{errors.New("EOF"), false},
		{context.DeadlineExceeded, false},
		{replyErr("CLUSTERDOWN The cluster is down"), true},
		{replyErr("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{replyErr("READONLY You cannot write against a read only replica."), true},
		{replyErr("MOVED 3999 127.0.0.1:6381"), true},
		{replyErr("LOADING Redis is loading the dataset in memory"), true},
		{replyErr("MASTERDOWN Link with MASTER is down"), true},
		{replyErr("NOREPLICAS Not enough good replicas to write."), true},
		{replyErr("ERR wrong number of arguments"), false},
		{replyErr("NOSCRIPT No matching script"), false},
	} {
		if got := redisconn.NotExecuted(tc.err); got != tc.want {
			t.Errorf("NotExecuted(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
