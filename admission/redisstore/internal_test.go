package redisstore

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

func testStore(t *testing.T) *Store {
	t.Helper()
	srv := redistest.Start(t, redistest.Options{})
	s, err := New(context.Background(), Options{Client: srv.Client(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestChunkedReads: Members and Claimed read in pieces of readChunk
// bytes; with tiny pieces every boundary case shows.
func TestChunkedReads(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	defer func(n int64) { readChunk = n }(readChunk)
	readChunk = 3 * int64(idSize)
	var want []admission.VisitorID
	for n := range 10 {
		if got, err := s.Members(ctx, "ev", "public", 0); err != nil || !slices.Equal(got, want) {
			t.Fatalf("%d members: got %d, %v", n, len(got), err)
		}
		v := admission.NewVisitorID()
		want = append(want, v)
		if err := s.AppendMember(ctx, "ev", "public", 0, v); err != nil {
			t.Fatal(err)
		}
	}

	readChunk = 2 // bytes of the claims bitmap
	claims := []uint64{0, 1, 7, 8, 15, 16, 17, 23, 24, 40, 41, 63}
	for _, n := range claims {
		if err := s.Claim(ctx, "ev", "public", n); err != nil {
			t.Fatal(err)
		}
	}
	for from := uint64(0); from < 70; from++ {
		for to := from; to < 72; to++ {
			got, err := s.Claimed(ctx, "ev", "public", from, to)
			if err != nil || uint64(len(got)) != to-from+1 {
				t.Fatalf("Claimed(%d, %d) = %d entries, %v", from, to, len(got), err)
			}
			for i, c := range got {
				if c != slices.Contains(claims, from+uint64(i)) {
					t.Fatalf("Claimed(%d, %d): number %d = %v", from, to, from+uint64(i), c)
				}
			}
		}
	}
}

// TestNoScript: after the server forgets its scripts (a restart, SCRIPT
// FLUSH, a new cluster node), calls fall back to EVAL.
func TestNoScript(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	if _, err := s.Seed(ctx, "ev", "public", 0, []byte("seed")); err != nil {
		t.Fatal(err)
	}
	if err := s.c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Seed(ctx, "ev", "public", 0, []byte("other")); err != nil || string(got) != "seed" {
		t.Fatalf("Seed after SCRIPT FLUSH = %q, %v", got, err)
	}
	if ok, err := s.Lease(ctx, "ev", "a", 1000000); err != nil || !ok {
		t.Fatalf("Lease after SCRIPT FLUSH = %v, %v", ok, err)
	}
}

// TestKeys: the key layout doc.go promises, one hash tag per event.
func TestKeys(t *testing.T) {
	ctx := context.Background()
	s := testStore(t)
	v := admission.NewVisitorID()
	s.AppendMember(ctx, "e1", "public", 3, v)
	s.Seed(ctx, "e1", "public", 3, []byte("s"))
	s.Claim(ctx, "e1", "public", 9)
	if err := s.MarkUsed(ctx, "e1", "public", []uint64{9, 12}); err != nil {
		t.Fatal(err)
	}
	s.Advance(ctx, "e1", "public", 2)
	s.Lease(ctx, "e1", "a", time.Minute) // long enough to be there when KEYS runs
	got, err := s.c.Get(ctx, "wr:adm:{adm:e1}:m:public:3").Bytes()
	if err != nil || string(got) != string(v[:]) {
		t.Fatalf("members key holds %x, %v", got, err)
	}
	// Uses are bits as SETBIT numbers them, like claims.
	for n, want := range map[int64]int64{8: 0, 9: 1, 12: 1} {
		if b, err := s.c.GetBit(ctx, "wr:adm:{adm:e1}:used:public", n).Result(); err != nil || b != want {
			t.Fatalf("GETBIT used %d = %d, %v; want %d", n, b, err, want)
		}
	}
	keys, err := s.c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	want := []string{"wr:adm:{adm:e1}:claims:public", "wr:adm:{adm:e1}:lease", "wr:adm:{adm:e1}:m:public:3",
		"wr:adm:{adm:e1}:seed:public:3", "wr:adm:{adm:e1}:serving", "wr:adm:{adm:e1}:used:public"}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys = %q, want %q", keys, want)
	}
}
