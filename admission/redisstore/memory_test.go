package redisstore

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// The memory tests queue n visitors in one tranche of one event, as
// AppendMember writes them (APPEND of 16 raw bytes to the tranche's key),
// pipelined 10,000 at a time, and report Redis's used_memory growth per
// visitor. The server runs without an AOF: used_memory does not count
// the file, and an AOF with appendfsync always would only make loading
// slow.
//
// TestMemory200k runs with every `go test`; the ten-million run is
//
//	WAITROOM_MEMORY_TEST=1 go test -run Memory10M -v -timeout 30m ./admission/redisstore/

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

func usedMemory(t *testing.T, s *Store) (used, rss int64) {
	info, err := s.c.Info(context.Background(), "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		k, v, _ := strings.Cut(line, ":")
		switch k {
		case "used_memory":
			used, _ = strconv.ParseInt(v, 10, 64)
		case "used_memory_rss":
			rss, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	if used == 0 {
		t.Fatalf("no used_memory in INFO memory: %q", info)
	}
	return used, rss
}

func measureMembers(t *testing.T, n int, budget float64) {
	ctx := context.Background()
	srv := redistest.Start(t, redistest.Options{AppendOnly: false})
	s, err := New(ctx, Options{Client: srv.Client(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	used0, rss0 := usedMemory(t, s)

	const batch = 10_000
	key := s.key("ev", membersKey("public", 0))
	r := rand.New(rand.NewPCG(1, 2))
	var first, last admission.VisitorID
	start := time.Now()
	for done := 0; done < n; {
		pipe := s.c.Pipeline()
		for range min(batch, n-done) {
			var v admission.VisitorID
			binary.LittleEndian.PutUint64(v[:8], r.Uint64())
			binary.LittleEndian.PutUint64(v[8:], r.Uint64())
			if done == 0 {
				first = v
			}
			last = v
			pipe.Append(ctx, key, string(v[:]))
			done++
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	loadTime := time.Since(start)
	used1, rss1 := usedMemory(t, s)

	if c, err := s.MemberCount(ctx, "ev", "public", 0); err != nil || c != n {
		t.Fatalf("MemberCount = %d, %v; want %d", c, err, n)
	}
	start = time.Now()
	all, err := s.Members(ctx, "ev", "public", 0)
	if err != nil || len(all) != n || all[0] != first || all[n-1] != last {
		t.Fatalf("Members = %d members, %v", len(all), err)
	}
	readTime := time.Since(start)

	per := func(b int64) float64 { return float64(b) / float64(n) }
	t.Logf("%d members: Redis used_memory +%.1f MiB (%.1f B/visitor), used_memory_rss +%.1f MiB (%.1f B/visitor)",
		n, float64(used1-used0)/(1<<20), per(used1-used0), float64(rss1-rss0)/(1<<20), per(rss1-rss0))
	t.Logf("appended in %v (%.0f/s, pipelines of %d); Members read them back in %v",
		loadTime.Round(time.Millisecond), float64(n)/loadTime.Seconds(), batch, readTime.Round(time.Millisecond))
	if per(used1-used0) > budget {
		t.Errorf("used_memory grew by %.1f B per visitor, budget %.1f", per(used1-used0), budget)
	}
}
