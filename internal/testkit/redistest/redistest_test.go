package redistest

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
)

// TestTakenPort: a server asked for a port another redis-server holds
// must fail, not hand out a client of the stranger (whose keys a test
// would then read).
func TestTakenPort(t *testing.T) {
	first := Start(t, Options{})
	_, port, err := net.SplitHostPort(first.Addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Launch(Options{Dir: t.TempDir(), Port: n})
	if err == nil {
		s.Stop()
		t.Fatal("Launch on a taken port returned a server")
	}
	if !strings.Contains(err.Error(), "taken by another redis-server") {
		t.Fatalf("Launch on a taken port: %v", err)
	}
}

// TestRestartRepairsTornAOF: a kill that tears a MULTI/EXEC block (a
// script's writes) must cost the whole block, now and after any later
// restart. Redis's own loader (aof-load-truncated yes) cuts inside the
// block and a later restart applies its first commands; the server here
// refuses the torn file and Restart cuts it with redis-check-aof --fix.
func TestRestartRepairsTornAOF(t *testing.T) {
	srv := Start(t, Options{AppendOnly: true})
	ctx := context.Background()
	c := srv.Client()
	if err := c.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	three := "redis.call('INCRBY', 'held', 3); redis.call('SET', 'rec', 'x'); redis.call('SET', 'audit', 'x'); return 1"
	if err := c.Eval(ctx, three, nil).Err(); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	block := srv.TearLastBlock(2) // INCRBY whole, the first SET torn
	if len(block) != 5 || block[1].Args[0] != "INCRBY" {
		t.Fatalf("unexpected block %v", block)
	}
	srv.Restart()
	if srv.AOFRepairs != 1 {
		t.Fatalf("Restart repaired %d torn AOFs, want 1", srv.AOFRepairs)
	}
	c = srv.Client()
	check := func(when string) {
		t.Helper()
		if v, _ := c.Get(ctx, "before").Result(); v != "1" {
			t.Fatalf("%s: the write before the torn block is lost", when)
		}
		if n, _ := c.Exists(ctx, "held", "rec", "audit").Result(); n != 0 {
			t.Fatalf("%s: %d keys of the torn block exist", when, n)
		}
	}
	check("after the repair")
	// A later block, then a plain crash: the torn block stays gone.
	if err := c.Eval(ctx, "redis.call('SET', 'later', '1'); redis.call('SET', 'later2', '1'); return 1", nil).Err(); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	srv.Restart()
	c = srv.Client()
	check("after the next restart")
	if v, _ := c.Get(ctx, "later").Result(); v != "1" || srv.AOFRepairs != 1 {
		t.Fatalf("after the next restart: later = %q, %d repairs", v, srv.AOFRepairs)
	}
}
