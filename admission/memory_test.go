package admission_test

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/memstore"
	"github.com/waitroom/waitroom/admission/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// rss is the process's resident set size in bytes.
func rss(t testing.TB) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// queue joins n visitors to an event's pre-queue through the engine, then
// draws them, and returns the engine.
func queue(t testing.TB, s admission.Store, n int) (*admission.Engine, *fakeclock.Clock) {
	clk := fakeclock.New(t0.Add(time.Second))
	e, err := admission.New(admission.Options{Store: s, Clock: clk.Now, Meter: &meter{}, Replica: "mem"}, event("big"))
	if err != nil {
		t.Fatal(err)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 256 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if _, _, err := e.Join(context.Background(), "big", admission.JoinRequest{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	clk.Add(62 * time.Second) // past the on-sale: the next tick draws
	if err := e.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f := e.Figures("big").Lanes["public"]; f.Drawn != uint64(n) {
		t.Fatalf("drew %d of %d", f.Drawn, n)
	}
	return e, clk
}

// TestMemoryPerVisitor queues 200,000 visitors in the embedded store and
// bounds what they cost the process (store, drawn order, liveness,
// claims): at most 100 bytes each. WAITROOM_MEMORY_TEST=1 runs the
// 10,000,000-visitor version.
func TestMemoryPerVisitor(t *testing.T) {
	n := 200_000
	if os.Getenv("WAITROOM_MEMORY_TEST") == "1" {
		n = 10_000_000
	}
	s, err := memstore.Open(memstore.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rss0, heap0 := rss(t), heapInUse()
	started := time.Now()
	e, _ := queue(t, s, n)
	rss1, heap1 := rss(t), heapInUse()
	perRSS, perHeap := float64(rss1-rss0)/float64(n), float64(heap1-heap0)/float64(n)
	t.Logf("embedded: %d visitors joined and drawn in %s: RSS +%d MiB (%.1f B/visitor), heap +%d MiB (%.1f B/visitor)",
		n, time.Since(started).Round(time.Second), (rss1-rss0)>>20, perRSS, (heap1-heap0)>>20, perHeap)
	if perHeap > 100 {
		t.Errorf("%.1f heap bytes per queued visitor, want ≤ 100", perHeap)
	}
	if n == 10_000_000 && rss1-rss0 > 1<<30 {
		t.Errorf("10M visitors cost %d MiB of RSS, want ≤ 1 GiB", (rss1-rss0)>>20)
	}
	runtime.KeepAlive(e)
}

// TestMemoryPerVisitorRedis is the same over Redis: used_memory of the
// Redis, and what the replica itself holds (its drawn order).
func TestMemoryPerVisitorRedis(t *testing.T) {
	n := 200_000
	if os.Getenv("WAITROOM_MEMORY_TEST") == "1" {
		n = 10_000_000
	}
	srv := redistest.Start(t, redistest.Options{})
	c := srv.Client()
	s, err := redisstore.New(ctx, redisstore.Options{Client: c})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	used := func() int64 {
		info, _ := c.Info(ctx, "memory").Result()
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		return 0
	}
	used0, heap0 := used(), heapInUse()
	started := time.Now()
	e, _ := queue(t, s, n)
	used1, heap1 := used(), heapInUse()
	per := float64(used1-used0) / float64(n)
	t.Logf("redis: %d visitors joined and drawn in %s: used_memory +%d MiB (%.1f B/visitor); replica heap +%d MiB (%.1f B/visitor)",
		n, time.Since(started).Round(time.Second), (used1-used0)>>20, per, (heap1-heap0)>>20, float64(heap1-heap0)/float64(n))
	if per > 100 {
		t.Errorf("%.1f bytes of Redis memory per queued visitor, want ≤ 100", per)
	}
	if n == 10_000_000 && used1-used0 > 1<<30 {
		t.Errorf("10M visitors cost %d MiB of Redis memory, want ≤ 1 GiB", (used1-used0)>>20)
	}
	runtime.KeepAlive(e)
}
