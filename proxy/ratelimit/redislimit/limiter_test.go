package redislimit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/proxy/ratelimit"
)

var ctx = context.Background()

var prefixes atomic.Int64

// newLimiter returns a limiter over c with keys of its own.
func newLimiter(t *testing.T, c redis.UniversalClient, b ratelimit.Config) *Limiter {
	t.Helper()
	return limiterAt(t, c, b, fmt.Sprintf("test:%d:rl:", prefixes.Add(1)))
}

func limiterAt(t *testing.T, c redis.UniversalClient, b ratelimit.Config, prefix string) *Limiter {
	t.Helper()
	l, err := New(Options{Client: c, Prefix: prefix, Buckets: b})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// slow buckets refill once in 1000 s: nothing refills during a test.
func slow(ipBurst, prefixBurst int) ratelimit.Config {
	return ratelimit.Config{PerIP: ratelimit.Bucket{Rate: 0.001, Burst: ipBurst},
		PerPrefix: ratelimit.Bucket{Rate: 0.001, Burst: prefixBurst}}
}

func allow(t *testing.T, l *Limiter, addr string) (bool, time.Duration) {
	t.Helper()
	ok, wait, err := l.Allow(ctx, netip.MustParseAddr(addr))
	if err != nil {
		t.Fatal(err)
	}
	return ok, wait
}

func TestBuckets(t *testing.T) {
	c := redistest.Start(t, redistest.Options{}).Client()
	l := newLimiter(t, c, slow(3, 5))
	for i := range 3 {
		if ok, _ := allow(t, l, "192.0.2.1"); !ok {
			t.Fatalf("request %d of a burst of 3 refused", i+1)
		}
	}
	ok, wait := allow(t, l, "192.0.2.1")
	if ok || wait <= 0 || wait > 1000*time.Second {
		t.Fatalf("the 4th request: ok %v, wait %v; want refused with a wait of at most one interval", ok, wait)
	}
	// The /24 has 2 tokens left; IPv4-mapped is the same address.
	if ok, _ := allow(t, l, "192.0.2.2"); !ok {
		t.Fatal("a neighbour refused with tokens left in the prefix")
	}
	if ok, _ := allow(t, l, "::ffff:192.0.2.1"); ok {
		t.Fatal("the IPv4-mapped form of a spent address passed")
	}
	if ok, _ := allow(t, l, "192.0.2.3"); !ok {
		t.Fatal("the prefix's 5th token refused")
	}
	if ok, _ := allow(t, l, "192.0.2.4"); ok {
		t.Fatal("a fresh address in a spent prefix passed")
	}
	if ok, _ := allow(t, l, "198.51.100.1"); !ok {
		t.Fatal("another prefix refused")
	}
	// IPv6: the /48 is the prefix.
	for _, a := range []string{"2001:db8:1:1::1", "2001:db8:1:2::1", "2001:db8:1:3::1", "2001:db8:1:4::1", "2001:db8:1:5::1"} {
		if ok, _ := allow(t, l, a); !ok {
			t.Fatalf("%s refused", a)
		}
	}
	if ok, _ := allow(t, l, "2001:db8:1:6::1"); ok {
		t.Fatal("a 6th address of a /48 with a burst of 5 passed")
	}
}

// A request refused by either bucket takes a token from neither.
func TestRefusedTakesNothing(t *testing.T) {
	c := redistest.Start(t, redistest.Options{}).Client()
	l := newLimiter(t, c, slow(1, 2))
	if ok, _ := allow(t, l, "192.0.2.1"); !ok {
		t.Fatal("first request refused")
	}
	for range 5 {
		if ok, _ := allow(t, l, "192.0.2.1"); ok {
			t.Fatal("a spent address passed")
		}
	}
	if ok, _ := allow(t, l, "192.0.2.2"); !ok {
		t.Fatal("the spent address's refusals took the prefix's tokens")
	}
	if ok, _ := allow(t, l, "192.0.2.3"); ok {
		t.Fatal("a spent prefix let a third address through")
	}
	// The third address was refused by its prefix: it kept its own token.
	k, _ := l.Keys(netip.MustParseAddr("192.0.2.3"))
	if n, err := c.Exists(ctx, k).Result(); err != nil || n != 0 {
		t.Fatalf("a refused request's address bucket was written (%d, %v)", n, err)
	}
}

func TestWaitTakesNothing(t *testing.T) {
	c := redistest.Start(t, redistest.Options{}).Client()
	l := newLimiter(t, c, slow(2, 10))
	a := netip.MustParseAddr("203.0.113.9")
	for range 10 {
		if w, err := l.Wait(ctx, a); err != nil || w != 0 {
			t.Fatalf("Wait = %v, %v on a full bucket", w, err)
		}
	}
	for i := range 2 {
		if ok, _ := allow(t, l, a.String()); !ok {
			t.Fatalf("request %d refused after Waits", i+1)
		}
	}
	if w, err := l.Wait(ctx, a); err != nil || w <= 0 {
		t.Fatalf("Wait = %v, %v on a spent bucket", w, err)
	}
}

// The tokens refill at the rate, on the Redis server's clock, and a
// bucket's key is gone once it is full again.
func TestRefill(t *testing.T) {
	c := redistest.Start(t, redistest.Options{}).Client()
	l := newLimiter(t, c, ratelimit.Config{PerIP: ratelimit.Bucket{Rate: 20, Burst: 1}})
	if ok, _ := allow(t, l, "192.0.2.7"); !ok {
		t.Fatal("first request refused")
	}
	ok, wait := allow(t, l, "192.0.2.7")
	if ok || wait <= 0 || wait > 50*time.Millisecond {
		t.Fatalf("second request: ok %v wait %v; want refused for at most 50 ms", ok, wait)
	}
	time.Sleep(wait + 5*time.Millisecond)
	if ok, _ := allow(t, l, "192.0.2.7"); !ok {
		t.Fatal("refused after waiting the retry-after")
	}
	k, pk := l.Keys(netip.MustParseAddr("192.0.2.7"))
	if ttl, err := c.PTTL(ctx, k).Result(); err != nil || ttl <= 0 || ttl > 50*time.Millisecond {
		t.Fatalf("the bucket's key has TTL %v (%v); want at most one interval", ttl, err)
	}
	if n, _ := c.Exists(ctx, pk).Result(); n != 0 {
		t.Fatal("a prefix bucket that is off was written")
	}
}

// Several replicas, each with its own client and limiter, share one
// budget: exactly the burst passes, however the requests interleave.
func TestReplicasShareOneBudget(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	const burst, replicas, each = 25, 3, 40
	prefix := fmt.Sprintf("test:%d:rl:", prefixes.Add(1))
	var passed atomic.Int64
	var wg sync.WaitGroup
	for range replicas {
		c := srv.Client()
		l := limiterAt(t, c, slow(burst, 1000), prefix)
		for range each {
			wg.Go(func() {
				ok, _, err := l.Allow(ctx, netip.MustParseAddr("192.0.2.50"))
				if err != nil {
					t.Error(err)
				}
				if ok {
					passed.Add(1)
				}
			})
		}
	}
	wg.Wait()
	if n := passed.Load(); n != burst {
		t.Fatalf("%d of %d requests over %d replicas passed; want the burst, %d", n, replicas*each, replicas, burst)
	}
}

// The Redis limiter decides as the in-memory one does, request by
// request, on a random sequence of addresses (no refill in between).
func TestSameDecisionsAsInMemory(t *testing.T) {
	c := redistest.Start(t, redistest.Options{}).Client()
	cfg := slow(3, 7)
	cfg.IPv4Prefix, cfg.IPv6Prefix = 28, 56
	l := newLimiter(t, c, cfg)
	mem, err := ratelimit.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	for i := range 400 {
		var a netip.Addr
		if rng.IntN(2) == 0 {
			a = netip.AddrFrom4([4]byte{10, 0, byte(rng.IntN(2)), byte(rng.IntN(40))})
		} else {
			a = netip.AddrFrom16([16]byte{0x20, 0x01, 0xd, 0xb8, 0, byte(rng.IntN(2)), 0, byte(rng.IntN(300) % 256), 15: byte(rng.IntN(4))})
		}
		want, _ := mem.AllowAt(a, now)
		got, _, err := l.Allow(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("request %d from %s: redis says %v, in-memory %v", i, a, got, want)
		}
	}
}

// Both keys of a request carry the prefix's hash tag: the script runs on
// one Cluster shard, whichever it is.
func TestCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	t.Cleanup(func() { c.Close() })
	l := newLimiter(t, c, slow(1, 100))
	for i := range 30 {
		a := fmt.Sprintf("10.%d.%d.1", i, i*7%256)
		if ok, _ := allow(t, l, a); !ok {
			t.Fatalf("%s refused", a)
		}
		if ok, _ := allow(t, l, a); ok {
			t.Fatalf("%s passed twice with a burst of 1", a)
		}
	}
}

// A server that forgot its scripts (a restart, a failover) gets the
// script again.
func TestScriptFlushed(t *testing.T) {
	c := redistest.Start(t, redistest.Options{}).Client()
	l := newLimiter(t, c, slow(2, 10))
	allow(t, l, "192.0.2.1")
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if ok, _ := allow(t, l, "192.0.2.1"); !ok {
		t.Fatal("refused after SCRIPT FLUSH")
	}
	if ok, _ := allow(t, l, "192.0.2.1"); ok {
		t.Fatal("the budget was lost with the scripts")
	}
}

// Redis down: an error, never a silent pass or refusal.
func TestUnreachable(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	c := srv.Client()
	l := newLimiter(t, c, slow(2, 10))
	srv.Kill()
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if ok, _, err := l.Allow(cctx, netip.MustParseAddr("192.0.2.1")); err == nil || ok {
		t.Fatalf("Allow with Redis down = %v, %v; want an error", ok, err)
	}
	if _, err := l.Wait(cctx, netip.MustParseAddr("192.0.2.1")); err == nil {
		t.Fatal("Wait with Redis down: no error")
	}
}

func TestOptions(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for name, o := range map[string]Options{
		"no client": {Buckets: slow(1, 1)},
		"brace":     {Client: c, Prefix: "a{b", Buckets: slow(1, 1)},
		"no burst":  {Client: c, Buckets: ratelimit.Config{PerIP: ratelimit.Bucket{Rate: 1}}},
		"bad bits":  {Client: c, Buckets: ratelimit.Config{IPv4Prefix: 40}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("%s: New accepted %+v", name, o)
		}
	}
	l, err := New(Options{Client: c, Buckets: slow(1, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, p := l.Keys(netip.MustParseAddr("::ffff:192.0.2.1"))
	if a != "wr:rl:{192.0.2.0/24}:a:192.0.2.1" || p != "wr:rl:{192.0.2.0/24}:p" {
		t.Errorf("Keys = %q, %q", a, p)
	}
}
