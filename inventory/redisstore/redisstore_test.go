package redisstore_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/inventorytest"
	"github.com/waitroom/waitroom/inventory/redisstore"
)

func newStore(t *testing.T, c redis.UniversalClient) *redisstore.Store {
	t.Helper()
	s, err := redisstore.New(context.Background(), redisstore.Options{Client: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	inventorytest.Run(t, inventorytest.Harness{
		New: func(t *testing.T) inventory.Store { return newStore(t, srv.Client()) },
		// Reopen crashes Redis (SIGKILL) and restarts it from its AOF.
		Reopen: func(t *testing.T, s inventory.Store) inventory.Store {
			srv.Restart()
			return newStore(t, srv.Client())
		},
	})
}

func TestConformanceCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	t.Cleanup(func() { c.Close() })
	inventorytest.Run(t, inventorytest.Harness{
		New: func(t *testing.T) inventory.Store { return newStore(t, c) },
	})
}

func TestRequirePersistence(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: false})
	_, err := redisstore.New(context.Background(), redisstore.Options{Client: srv.Client(), RequirePersistence: true})
	if err == nil {
		t.Fatal("New accepted a Redis without persistence although it was required")
	}
	if _, err := redisstore.New(context.Background(), redisstore.Options{Client: srv.Client()}); err != nil {
		t.Fatalf("without the requirement New must only warn: %v", err)
	}
}

// TestRequireWholeChanges: a Redis that would start from an AOF whose
// last write a crash tore (aof-load-truncated yes, Redis's default) can
// later apply half of a script (see TestTornWrite). New refuses it when
// persistence is required and logs an error otherwise.
func TestRequireWholeChanges(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Options{AppendOnly: true}) // aof-load-truncated no
	if _, err := redisstore.New(ctx, redisstore.Options{Client: srv.Client(), RequirePersistence: true}); err != nil {
		t.Fatalf("New refused a Redis with appendonly yes, appendfsync always, aof-load-truncated no: %v", err)
	}
	if err := srv.Client().ConfigSet(ctx, "aof-load-truncated", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	_, err := redisstore.New(ctx, redisstore.Options{Client: srv.Client(), RequirePersistence: true})
	if err == nil || !strings.Contains(err.Error(), "aof-load-truncated yes") || !strings.Contains(err.Error(), "redis-check-aof --fix") {
		t.Fatalf("New with aof-load-truncated yes and persistence required: %v", err)
	}
	var log bytes.Buffer
	_, err = redisstore.New(ctx, redisstore.Options{Client: srv.Client(), Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatalf("without the requirement New must only warn: %v", err)
	}
	if !strings.Contains(log.String(), "level=ERROR") || !strings.Contains(log.String(), "aof-load-truncated yes") {
		t.Fatalf("New with aof-load-truncated yes logged %q", log.String())
	}
}

func TestLinearizable(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	s := newStore(t, srv.Client())
	for seed := range uint64(3) {
		inventorytest.CheckLinearizable(t, s, inventorytest.LinearizabilityOptions{Clients: 6, OpsPerClient: 50, Seed: seed})
	}
}

func TestLinearizableCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	t.Cleanup(func() { c.Close() })
	inventorytest.CheckLinearizable(t, newStore(t, c), inventorytest.LinearizabilityOptions{Clients: 6, OpsPerClient: 50, Seed: 42})
}

// TestCrashKill9 kills redis-server (appendfsync always) with SIGKILL in
// the middle of a load, restarts it from its AOF and checks that every
// acknowledged confirm and cancel survived and that no seat was ever
// sold twice.
func TestCrashKill9(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	ctx := context.Background()
	ev := inventorytest.NewEventID()
	if _, err := newStore(t, srv.Client()).PutEvent(ctx, ev, inventorytest.CrashEvent(), "test"); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		acks []inventorytest.Ack
	)
	for round := range 3 {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
		s := newStore(t, c)
		killAt := 40 + 60*round
		killed := make(chan struct{})
		n := 0
		inventorytest.Load(ctx, s, ev, 8, uint64(round), func(a inventorytest.Ack) {
			mu.Lock()
			defer mu.Unlock()
			acks = append(acks, a)
			if n++; n == killAt {
				srv.Kill()
				close(killed)
			}
		})
		<-killed
		c.Close()
		srv.Restart()
		s = newStore(t, srv.Client())
		time.Sleep(50 * time.Millisecond) // let the load's short holds run out
		inventorytest.VerifyAcked(t, s, ev, acks)
		entries := inventorytest.CheckAuditInvariants(t, s, ev)
		t.Logf("round %d: Redis killed after %d acks; %d acknowledged changes survive, %d audit entries replay cleanly", round, killAt, len(acks), entries)
	}
}
