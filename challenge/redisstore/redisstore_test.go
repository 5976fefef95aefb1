package redisstore

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/challenge/challengetest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

var ctx = context.Background()

// prefixes gives each guard of a test its own keys on a shared server.
var prefixes atomic.Int64

func freshPrefix() string { return fmt.Sprintf("test:%d:replay:", prefixes.Add(1)) }

func TestConformance(t *testing.T) {
	c := redistest.Start(t, redistest.Options{}).Client()
	challengetest.Run(t, func(t *testing.T) challenge.ReplayGuard {
		g := New(Options{Client: c, Prefix: freshPrefix()})
		t.Cleanup(func() { g.Close() })
		return g
	})
}

func TestConformanceCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs()})
	t.Cleanup(func() { c.Close() })
	challengetest.Run(t, func(t *testing.T) challenge.ReplayGuard {
		g := New(Options{Client: c, Prefix: freshPrefix()})
		t.Cleanup(func() { g.Close() })
		return g
	})
}

// TestKeys: the key is <prefix><hex id>, set to a 20-byte mark and
// expiring at the redeem's expiry (to the millisecond, rounded up).
func TestKeys(t *testing.T) {
	c := redistest.Start(t, redistest.Options{}).Client()
	id := []byte{0x00, 0xab, 0xcd, 0xef}
	exp := time.Now().Add(time.Hour).Truncate(time.Millisecond).Add(300 * time.Microsecond)
	for _, tc := range []struct{ prefix, want string }{
		{"", "wr:replay:00abcdef"},
		{"app:{r}:", "app:{r}:00abcdef"},
	} {
		g := New(Options{Client: c, Prefix: tc.prefix})
		if got := g.Key(id); got != tc.want {
			t.Fatalf("Key = %q, want %q", got, tc.want)
		}
		if ok, err := g.Redeem(ctx, id, exp); !ok || err != nil {
			t.Fatalf("Redeem = %v, %v", ok, err)
		}
		if v, err := c.Get(ctx, tc.want).Result(); len(v) != 20 || err != nil {
			t.Fatalf("GET %s = %q, %v", tc.want, v, err)
		}
		at, err := c.Do(ctx, "pexpiretime", tc.want).Int64()
		if err != nil || at != exp.UnixMilli()+1 {
			t.Fatalf("PEXPIRETIME %s = %d, %v; want %d", tc.want, at, err, exp.UnixMilli()+1)
		}
	}
}

// TestExpiry: once its mark expires (by the server's clock) an id can be
// redeemed again, and Redis has dropped the key.
func TestExpiry(t *testing.T) {
	c := redistest.Start(t, redistest.Options{}).Client()
	g := New(Options{Client: c})
	id := challengetest.NewID()
	exp := time.Now().Add(200 * time.Millisecond)
	if ok, err := g.Redeem(ctx, id, exp); !ok || err != nil {
		t.Fatalf("Redeem = %v, %v", ok, err)
	}
	if ok, err := g.Redeem(ctx, id, exp); ok || err != nil {
		t.Fatalf("second Redeem = %v, %v", ok, err)
	}
	time.Sleep(time.Until(exp) + 50*time.Millisecond)
	if n, err := c.Exists(ctx, g.Key(id)).Result(); n != 0 || err != nil {
		t.Fatalf("EXISTS after expiry = %d, %v", n, err)
	}
	if ok, err := g.Redeem(ctx, id, time.Now().Add(time.Minute)); !ok || err != nil {
		t.Fatalf("Redeem after expiry = %v, %v", ok, err)
	}
}

// TestSharedByReplicas: two guards (two processes' clients) over one
// Redis see each other's redeems.
func TestSharedByReplicas(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	a, b := New(Options{Client: srv.Client()}), New(Options{Client: srv.Client()})
	id := challengetest.NewID()
	exp := time.Now().Add(time.Minute)
	if ok, err := a.Redeem(ctx, id, exp); !ok || err != nil {
		t.Fatalf("a: Redeem = %v, %v", ok, err)
	}
	if ok, err := b.Redeem(ctx, id, exp); ok || err != nil {
		t.Fatalf("b: Redeem of a's id = %v, %v", ok, err)
	}
}

// TestCloseLeavesClientOpen: the guard does not own its client.
func TestCloseLeavesClientOpen(t *testing.T) {
	c := redistest.Start(t, redistest.Options{}).Client()
	g := New(Options{Client: c})
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("client unusable after the guard's Close: %v", err)
	}
	if _, err := g.Redeem(ctx, challengetest.NewID(), time.Now().Add(time.Minute)); err != ErrClosed {
		t.Fatalf("Redeem after Close = %v, want ErrClosed", err)
	}
}

// TestUnreachable: a Redis that is gone shows as an error, never as a
// successful redeem.
func TestUnreachable(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	c := srv.Client()
	g := New(Options{Client: c})
	srv.Kill()
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ok, err := g.Redeem(cctx, challengetest.NewID(), time.Now().Add(time.Minute))
	if err == nil || ok {
		t.Fatalf("Redeem with Redis down = %v, %v; want an error", ok, err)
	}
	if !strings.HasPrefix(err.Error(), "redisstore: ") {
		t.Errorf("error %q lacks the package prefix", err)
	}
}

func TestNewWithoutClientPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New without a client did not panic")
		}
	}()
	New(Options{})
}

// TestLostReply: when the connection drops after Redis ran the SET but
// before its reply arrived, go-redis sends the command again; the redeem
// finds its own mark and succeeds (a visitor is not refused for the
// network's fault), while a second redeem of the id is still refused.
func TestLostReply(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	front := dropFirstReply(t, srv.Addr, "pxat")
	c := redis.NewClient(&redis.Options{Addr: front, MaxRetries: 3})
	t.Cleanup(func() { c.Close() })
	g := New(Options{Client: c})
	t.Cleanup(func() { g.Close() })
	id := challengetest.NewID()
	exp := time.Now().Add(time.Minute)
	if ok, err := g.Redeem(ctx, id, exp); !ok || err != nil {
		t.Fatalf("Redeem whose reply was lost = %v, %v; want true", ok, err)
	}
	if ok, err := g.Redeem(ctx, id, exp); ok || err != nil {
		t.Fatalf("second Redeem = %v, %v; want false", ok, err)
	}
}

// dropFirstReply runs a loopback TCP relay to addr. The first request
// that contains word goes to Redis, which runs it; its reply does not come
// back: the relay hangs up on the client instead. Everything else is
// relayed as it is.
func dropFirstReply(t *testing.T, addr, word string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var dropped atomic.Bool
	go func() {
		for {
			cl, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", addr)
			if err != nil {
				cl.Close()
				continue
			}
			var hang atomic.Bool // this connection's next reply is lost
			// Replies, unless this connection hangs up instead.
			go func() {
				defer cl.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := up.Read(buf)
					if hang.Load() {
						return // hang up instead of answering
					}
					if n > 0 {
						if _, err := cl.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
			// Requests, all passed on.
			go func() {
				defer up.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := cl.Read(buf)
					if n > 0 && bytes.Contains(bytes.ToLower(buf[:n]), []byte(word)) && dropped.CompareAndSwap(false, true) {
						hang.Store(true)
					}
					if n > 0 {
						if _, err := up.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestCheck: a Redis that takes SET NX GET passes; one that is gone is
// an error.
func TestCheck(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	g := New(Options{Client: srv.Client()})
	if err := g.Check(ctx); err != nil {
		t.Fatalf("Check = %v", err)
	}
	srv.Kill()
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := g.Check(cctx); err == nil {
		t.Fatal("Check with Redis down = nil")
	}
}
