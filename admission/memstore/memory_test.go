package memstore_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/memstore"
	"github.com/waitroom/waitroom/internal/testkit/racedetect"
)

// The memory tests queue n visitors in one tranche of one event through
// AppendMember and report what each costs: the growth of the process's
// resident set (VmRSS) and of the live Go heap, then the same for a store
// that loads them from disk.
//
// TestMemory200k runs with every `go test`; the ten-million run is
//
//	WAITROOM_MEMORY_TEST=1 go test -run Memory10M -v -timeout 30m ./admission/memstore/

const memoryEnv = "WAITROOM_MEMORY_TEST"

func TestMemory200k(t *testing.T) {
	measureMembers(t, 200_000, 100)
}

func TestMemory10M(t *testing.T) {
	if os.Getenv(memoryEnv) != "1" {
		t.Skip("set " + memoryEnv + "=1 to queue ten million visitors")
	}
	measureMembers(t, 10_000_000, float64(1<<30)/10_000_000)
}

// memory is a reading of the process's memory.
type memory struct{ rss, heap int64 }

func readMemory(t *testing.T) memory {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memory{rss: vmRSS(t), heap: int64(ms.HeapAlloc)}
}

// vmRSS reads VmRSS from /proc/self/status, in bytes.
func vmRSS(t *testing.T) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatalf("reading RSS: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS line %q", sc.Text())
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// peakRSS samples VmRSS until stop is called, and returns the highest.
func peakRSS(t *testing.T) (stop func() int64) {
	var peak atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if r := vmRSS(t); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() int64 {
		close(done)
		wg.Wait()
		return max(peak.Load(), vmRSS(t))
	}
}

func measureMembers(t *testing.T, n int, budget float64) {
	ctx := context.Background()
	dir := t.TempDir()
	debug.FreeOSMemory()
	before := readMemory(t)
	stop := peakRSS(t)
	s, err := memstore.Open(memstore.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	const writers = 256
	start := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 42))
			var v admission.VisitorID
			for i := w; i < n; i += writers {
				binary.LittleEndian.PutUint64(v[:8], r.Uint64())
				binary.LittleEndian.PutUint64(v[8:], r.Uint64())
				if err := s.AppendMember(ctx, "ev", "public", 0, v); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		t.Fatal(err)
	}
	loadTime := time.Since(start)
	after := readMemory(t)
	peak := stop()
	if c, err := s.MemberCount(ctx, "ev", "public", 0); err != nil || c != n {
		t.Fatalf("MemberCount = %d, %v; want %d", c, err, n)
	}
	report(t, "appended", n, before, after, peak, budget)
	t.Logf("appended %d members in %v (%.0f/s) through AppendMember from %d goroutines", n, loadTime.Round(time.Millisecond), float64(n)/loadTime.Seconds(), writers)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = nil
	debug.FreeOSMemory()

	// A store that loads the same members from disk.
	before = readMemory(t)
	stop = peakRSS(t)
	start = time.Now()
	s, err = memstore.Open(memstore.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	openTime := time.Since(start)
	after = readMemory(t)
	peak = stop()
	if c, err := s.MemberCount(ctx, "ev", "public", 0); err != nil || c != n {
		t.Fatalf("MemberCount after reopen = %d, %v; want %d", c, err, n)
	}
	report(t, "reloaded", n, before, after, peak, budget)
	t.Logf("Open loaded %d members in %v", n, openTime.Round(time.Millisecond))
	start = time.Now()
	all, err := s.Members(ctx, "ev", "public", 0)
	if err != nil || len(all) != n {
		t.Fatalf("Members = %d, %v", len(all), err)
	}
	t.Logf("Members copied %d members in %v", n, time.Since(start).Round(time.Millisecond))
}

func report(t *testing.T, what string, n int, before, after memory, peak int64, budget float64) {
	t.Helper()
	per := func(b int64) float64 { return float64(b) / float64(n) }
	rss, heap, peakGrowth := after.rss-before.rss, after.heap-before.heap, peak-before.rss
	t.Logf("%s %d members: RSS +%.1f MiB (%.1f B/visitor, peak +%.1f MiB = %.1f B/visitor), Go heap +%.1f MiB (%.1f B/visitor)",
		what, n, mib(rss), per(rss), mib(peakGrowth), per(peakGrowth), mib(heap), per(heap))
	if per(heap) > budget {
		t.Errorf("%s: the Go heap grew by %.1f B per visitor, budget %.1f", what, per(heap), budget)
	}
	if racedetect.Enabled {
		t.Logf("race detector on: RSS (with shadow memory) not checked")
		return
	}
	if per(rss) > budget || per(peakGrowth) > budget {
		t.Errorf("%s: RSS grew by %.1f B per visitor (peak %.1f), budget %.1f", what, per(rss), per(peakGrowth), budget)
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
