package acme

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/acme/autocert"

	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// TestRedisCacheLock: of two replicas missing one certificate, the first
// Get takes the lock and misses (it orders); the second waits and gets
// what the first Put. When the holder gives up (Release), a waiter takes
// the lock in turn and misses. Challenge answers and the account key
// never wait.
func TestRedisCacheLock(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	ctx := context.Background()
	a, b := NewRedisCache(srv.Client(), "t:"), NewRedisCache(srv.Client(), "t:")
	a.Poll, b.Poll = 5*time.Millisecond, 5*time.Millisecond

	if _, err := a.Get(ctx, "shop.example.com"); !errors.Is(err, autocert.ErrCacheMiss) {
		t.Fatalf("first Get: %v, want a miss", err)
	}
	var wg sync.WaitGroup
	var got []byte
	var gotErr error
	wg.Add(1)
	go func() { defer wg.Done(); got, gotErr = b.Get(ctx, "shop.example.com") }()
	// b cannot return before a's Put: the lock is a's.
	if err := a.Put(ctx, "shop.example.com", []byte("cert")); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if gotErr != nil || string(got) != "cert" {
		t.Fatalf("the waiting replica got %q, %v; want the first's certificate", got, gotErr)
	}
	if n, _ := srv.Client().Exists(ctx, "t:{acme}:lock:shop.example.com").Result(); n != 0 {
		t.Error("the lock outlives the Put")
	}

	// A holder that fails.
	if _, err := a.Get(ctx, "www.example.com"); !errors.Is(err, autocert.ErrCacheMiss) {
		t.Fatalf("Get: %v, want a miss", err)
	}
	b.Release(ctx, "www.example.com") // not b's: nothing happens
	done := make(chan error, 1)
	go func() { _, err := b.Get(ctx, "www.example.com"); done <- err }()
	a.Release(ctx, "www.example.com")
	if err := <-done; !errors.Is(err, autocert.ErrCacheMiss) {
		t.Fatalf("after the holder released: %v, want a miss (the waiter orders)", err)
	}
	if owner, _ := srv.Client().Get(ctx, "t:{acme}:lock:www.example.com").Result(); owner != b.owner {
		t.Errorf("the lock is %q's after the release, want the waiter's", owner)
	}

	// Unlocked names: both miss at once.
	for _, name := range []string{"acme_account+key", "shop.example.com+token", "tok+http-01"} {
		for _, c := range []*RedisCache{a, b} {
			if _, err := c.Get(ctx, name); !errors.Is(err, autocert.ErrCacheMiss) {
				t.Errorf("Get(%s): %v, want a miss", name, err)
			}
		}
	}
	if err := a.Delete(ctx, "shop.example.com"); err != nil {
		t.Fatal(err)
	}
	if n, _ := srv.Client().Exists(ctx, "t:{acme}:shop.example.com").Result(); n != 0 {
		t.Error("Delete left the key")
	}
}

// TestRedisCacheWaitEndsWithContext: a Get waiting on another's lock
// returns when its context ends.
func TestRedisCacheWaitEndsWithContext(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{})
	a, b := NewRedisCache(srv.Client(), "t:"), NewRedisCache(srv.Client(), "t:")
	b.Poll = 5 * time.Millisecond
	if _, err := a.Get(context.Background(), "shop.example.com"); !errors.Is(err, autocert.ErrCacheMiss) {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Get(ctx, "shop.example.com"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get with an ended context: %v", err)
	}
}
