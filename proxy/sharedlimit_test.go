package proxy

import (
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/proxy/ratelimit"
	"github.com/waitroom/waitroom/proxy/ratelimit/redislimit"
)

// withShared puts a budget shared through Redis behind the replica's own
// buckets.
func withShared(l *redislimit.Limiter) rigOption {
	return func(o *Options) { o.SharedLimiter = l }
}

// TestSharedRateLimit: two replicas behind a load balancer, each with its
// own buckets of 3 and a shared budget of 3: one address gets 3 API
// requests in all, not 3 per replica, and is told when to come back.
// With Redis gone, each replica's own buckets decide (counted), so a
// failover refuses nobody the replica alone would let through.
func TestSharedRateLimit(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	shared, err := redislimit.New(redislimit.Options{Client: srv.Client(), Prefix: "test:rl:",
		Buckets: ratelimit.Config{PerIP: ratelimit.Bucket{Rate: 0.001, Burst: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(shared.Close)
	// Each replica sees the client's address in X-Forwarded-For, as
	// behind a load balancer.
	a := newRig(t, withLimiter(0.001, 3), withShared(shared), withTrusted("X-Forwarded-For", "127.0.0.1/32"))
	b := newRig(t, withLimiter(0.001, 3), withShared(shared), withTrusted("X-Forwarded-For", "127.0.0.1/32"))
	v := newVisitor(t, "ua")
	passed := 0
	for i := range 8 {
		r := a
		if i%2 == 1 {
			r = b
		}
		got := v.do(t, "GET", r.url+"/_wr/api/status?event=show", "", "X-Forwarded-For", "192.0.2.1")
		switch {
		case got.status == 429:
			if !strings.Contains(got.body, `"rate_limited"`) || got.header.Get("Retry-After") == "" {
				t.Fatalf("request %d refused without its error or Retry-After: %v %s", i, got.header, got.body)
			}
		case got.status == 401:
			passed++
		default:
			t.Fatalf("request %d: %d %s", i, got.status, got.body)
		}
	}
	if passed != 3 {
		t.Fatalf("%d of 8 requests over two replicas passed, want the shared 3", passed)
	}

	srv.Kill()
	// Another address: 3 on each replica, by their own buckets.
	w := newVisitor(t, "ua")
	for _, r := range []*rig{a, b} {
		for i := range 4 {
			got := w.do(t, "GET", r.url+"/_wr/api/status?event=show", "", "X-Forwarded-For", "192.0.2.2")
			if want := 401; i == 3 {
				want = 429
				if got.status != want {
					t.Fatalf("with Redis down, request %d: %d, want %d (the replica's own bucket)", i, got.status, want)
				}
			} else if got.status != want {
				t.Fatalf("with Redis down, request %d: %d %s, want %d", i, got.status, got.body, want)
			}
		}
		if n := counterValue(t, r.reg, "waitroom_rate_limit_shared_errors_total", nil); n != 3 {
			t.Fatalf("shared budget failures counted %v, want 3", n)
		}
	}
}

// TestSharedRateLimitHungRedis: a Redis that takes connections and never
// answers (a stalled node, a black-holed failover) costs each API request
// at most SharedLimitTimeout, after which the replica's own buckets
// decide: no request hangs on it, and admitted visitors, who never reach
// the shared budget, are served as before.
func TestSharedRateLimitHungRedis(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // read nothing, answer nothing
			mu.Unlock()
		}
	}()
	c := redis.NewClient(&redis.Options{Addr: ln.Addr().String()})
	shared, err := redislimit.New(redislimit.Options{Client: c, Buckets: ratelimit.Config{PerIP: ratelimit.Bucket{Rate: 0.001, Burst: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The hung connections first: Close waits for the commands sent.
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
		shared.Close()
		c.Close()
	})
	r := newRig(t, withLimiter(1000, 1000), withShared(shared))
	admitted := r.admit(t, "Mozilla/5.0 hung redis")
	before := counterValue(t, r.reg, "waitroom_rate_limit_shared_errors_total", nil)
	const n = 20
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Go(func() {
			codes[i] = newVisitor(t, "ua").do(t, "GET", r.url+"/_wr/api/status?event=show", "").status
		})
	}
	if resp := admitted.do(t, "GET", r.url+"/show/seats", ""); resp.status != 200 || resp.body != "origin:/show/seats" {
		t.Errorf("admitted visitor while Redis hangs: %d %s", resp.status, resp.body)
	}
	wg.Wait()
	for i, code := range codes {
		if code != 401 {
			t.Errorf("status request %d with Redis hung: %d, want 401 (past the limit, no ticket)", i, code)
		}
	}
	if got := counterValue(t, r.reg, "waitroom_rate_limit_shared_errors_total", nil) - before; got != n {
		t.Errorf("shared budget failures counted %v, want %d", got, n)
	}
}
