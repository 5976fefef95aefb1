package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/admissiontest"
	"github.com/waitroom/waitroom/admission/redisstore"
	guardstore "github.com/waitroom/waitroom/challenge/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
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
	admissiontest.Run(t, admissiontest.Harness{
		New: func(t *testing.T) admission.Store { return newStore(t, srv.Client()) },
		// Reopen closes the store, crashes Redis (SIGKILL) and restarts it
		// from its AOF.
		Reopen: func(t *testing.T, s admission.Store) admission.Store {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			srv.Restart()
			return newStore(t, srv.Client())
		},
		SharedLease: true,
	})
}

func TestConformanceCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	t.Cleanup(func() { c.Close() })
	admissiontest.Run(t, admissiontest.Harness{
		New:         func(t *testing.T) admission.Store { return newStore(t, c) },
		SharedLease: true,
	})
	// A Cluster keeps the challenges' values off the event's shard (the
	// replay guard spreads them): the suite skips its Once cases, and
	// the methods refuse.
	s := newStore(t, c)
	if s.SpendsOnce() {
		t.Error("a Cluster store spends one-time values on the event's shard")
	}
	if _, err := s.AppendMemberOnce(context.Background(), "ev", admission.PublicLane, 1, admission.NewVisitorID(),
		[]byte("v"), time.Now().Add(time.Minute)); err == nil {
		t.Error("AppendMemberOnce on a Cluster succeeded")
	}
}

// TestSpendsOnceWithTheGuard: one Redis spends a join's one-time value
// in the join's own script, under the replay guard's own key: a value the
// guard redeemed buys no place, and a value a join or SpendOnce spent
// does not redeem at the guard (replicas of either kind share one
// Redis during a rolling upgrade).
func TestSpendsOnceWithTheGuard(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	s := newStore(t, srv.Client())
	if !s.SpendsOnce() {
		t.Fatal("a standalone store declines to spend one-time values")
	}
	g := guardstore.New(guardstore.Options{Client: srv.Client(), Prefix: redisstore.DefaultPrefix + "replay:"})
	t.Cleanup(func() { g.Close() })
	ctx, until := context.Background(), time.Now().Add(time.Minute)
	id := func(b byte) []byte { return bytes.Repeat([]byte{b}, 16) }
	redeem := func(v []byte) bool {
		t.Helper()
		ok, err := g.Redeem(ctx, v, until)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	join := func(v []byte) bool {
		t.Helper()
		ok, err := s.AppendMemberOnce(ctx, "ev", admission.PublicLane, 1, admission.NewVisitorID(), v, until)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !redeem(id(1)) || join(id(1)) {
		t.Error("a value the guard redeemed bought a place")
	}
	if !join(id(2)) || redeem(id(2)) {
		t.Error("a value a join spent redeemed at the guard")
	}
	if ok, err := s.SpendOnce(ctx, "ev", id(3), until); err != nil || !ok || redeem(id(3)) {
		t.Errorf("a value SpendOnce spent (%v, %v) redeemed at the guard", ok, err)
	}
}

// TestPersistenceWarning: New warns, loudly, about a Redis without an
// AOF, and works all the same.
func TestPersistenceWarning(t *testing.T) {
	for _, tc := range []struct {
		aof  bool
		want string
	}{{false, "NO PERSISTENCE"}, {true, ""}} {
		srv := redistest.Start(t, redistest.Options{AppendOnly: tc.aof})
		var log logBuffer
		s, err := redisstore.New(context.Background(), redisstore.Options{Client: srv.Client(),
			Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if tc.want == "" && log.String() != "" {
			t.Fatalf("appendonly yes: New logged %q", log.String())
		}
		if tc.want != "" && !strings.Contains(log.String(), tc.want) {
			t.Fatalf("appendonly no: New logged %q, want a line with %q", log.String(), tc.want)
		}
	}
}

// TestRequirePersistence: with RequirePersistence, New refuses a Redis
// without the AOF or one that would start from a torn AOF
// (aof-load-truncated yes, Redis's default; see TestTornWrite) and says
// what to set; without it, New logs an error and works.
func TestRequirePersistence(t *testing.T) {
	ctx := context.Background()
	aof := redistest.Start(t, redistest.Options{AppendOnly: true}) // aof-load-truncated no
	if s, err := redisstore.New(ctx, redisstore.Options{Client: aof.Client(), RequirePersistence: true}); err != nil {
		t.Fatalf("New refused a Redis with appendonly yes, appendfsync always, aof-load-truncated no: %v", err)
	} else {
		s.Close()
	}
	if err := aof.Client().ConfigSet(ctx, "aof-load-truncated", "yes").Err(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		c         redis.UniversalClient
		err, logs string
	}{
		{"appendonly no", redistest.Start(t, redistest.Options{}).Client(), "appendonly off", "NO PERSISTENCE"},
		{"aof-load-truncated yes", aof.Client(), "aof-load-truncated no, and when Redis then refuses to start after a crash, run redis-check-aof --fix", "CAN REPLAY HALF A CHANGE"},
	} {
		_, err := redisstore.New(ctx, redisstore.Options{Client: tc.c, RequirePersistence: true, Logger: discard()})
		if err == nil || !strings.HasPrefix(err.Error(), "redisstore: ") || !strings.Contains(err.Error(), tc.err) {
			t.Fatalf("%s, persistence required: New = %v", tc.name, err)
		}
		var log logBuffer
		s, err := redisstore.New(ctx, redisstore.Options{Client: tc.c, Logger: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatalf("%s: without the requirement New must only log: %v", tc.name, err)
		}
		s.Close()
		if !strings.Contains(log.String(), "level=ERROR") || !strings.Contains(log.String(), tc.logs) {
			t.Fatalf("%s: New logged %q", tc.name, log.String())
		}
	}
}

// TestBadNames: ids that would break the key layout are refused.
func TestBadNames(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	c := srv.Client()
	if _, err := redisstore.New(context.Background(), redisstore.Options{Client: c, Prefix: "x{y}:", Logger: discard()}); err == nil {
		t.Fatal("a prefix with braces was accepted")
	}
	s, err := redisstore.New(context.Background(), redisstore.Options{Client: c, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, ev := range []string{"", "a}b", "{x"} {
		if err := s.AppendMember(context.Background(), ev, "public", 0, admission.VisitorID{}); err == nil {
			t.Fatalf("event id %q was accepted", ev)
		}
	}
}

// TestStoreDown: a Redis that is gone yields admission.ErrStoreDown.
func TestStoreDown(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	s, err := redisstore.New(context.Background(), redisstore.Options{Client: c, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv.Kill()
	ctx := context.Background()
	for name, err := range map[string]error{
		"AppendMember": s.AppendMember(ctx, "ev", "public", 0, admission.VisitorID{}),
		"Claim":        s.Claim(ctx, "ev", "public", 1),
		"SetControl":   s.SetControl(ctx, "ev", admission.Control{}),
	} {
		if !errors.Is(err, admission.ErrStoreDown) {
			t.Fatalf("%s with Redis down = %v, want ErrStoreDown", name, err)
		}
	}
	if _, err := s.Advance(ctx, "ev", "public", 1); !errors.Is(err, admission.ErrStoreDown) {
		t.Fatalf("Advance with Redis down = %v", err)
	}
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
