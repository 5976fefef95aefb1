package memstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/admissiontest"
	"github.com/waitroom/waitroom/admission/memstore"
)

func open(t *testing.T, dir string) *memstore.Store {
	t.Helper()
	s, err := memstore.Open(memstore.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	var mu sync.Mutex
	dirs := map[admission.Store]string{}
	admissiontest.Run(t, admissiontest.Harness{
		New: func(t *testing.T) admission.Store {
			dir := t.TempDir()
			s := open(t, dir)
			mu.Lock()
			dirs[s] = dir
			mu.Unlock()
			return s
		},
		Reopen: func(t *testing.T, s admission.Store) admission.Store {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			n := open(t, dirs[s])
			dirs[n] = dirs[s]
			return n
		},
	})
}

func TestDirLocked(t *testing.T) {
	dir := t.TempDir()
	open(t, dir)
	if _, err := memstore.Open(memstore.Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("a second Open of a locked directory = %v", err)
	}
}

func TestClosed(t *testing.T) {
	s := open(t, t.TempDir())
	s.Close()
	if err := s.AppendMember(context.Background(), "ev", "public", 0, admission.NewVisitorID()); err == nil {
		t.Fatal("AppendMember after Close succeeded")
	}
	if _, err := s.Serving(context.Background(), "ev"); err == nil {
		t.Fatal("Serving after Close succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestBatchedFlush: claims and controller state reach the disk within a
// second or so without a Close; the state file is read by a second
// store over a copy of the directory (the first keeps its lock).
func TestBatchedFlush(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Claim(ctx, "ev", "public", 3); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveController(ctx, "ev", []byte("state")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2*memstore.FlushInterval + 200*time.Millisecond)
	cp := t.TempDir()
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(cp, "LOCK"))
	c := open(t, cp)
	got, err := c.Claimed(ctx, "ev", "public", 3, 3)
	if err != nil || !got[0] {
		t.Fatalf("claim not flushed: %v, %v", got, err)
	}
	if st, err := c.LoadController(ctx, "ev"); err != nil || string(st) != "state" {
		t.Fatalf("controller state not flushed: %q, %v", st, err)
	}
}

// TestNames: event and lane names that are not file names round-trip.
func TestNames(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir)
	names := []string{"plain-1_x", "a.b", "../up", "sp ace/slash", "%41", "é", "", "a%"}
	for i, ev := range names {
		if ev == "" {
			continue // an empty event id is refused
		}
		for j, lane := range names {
			if err := s.AppendMember(ctx, ev, lane, i*10+j, admission.VisitorID{byte(i), byte(j)}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Advance(ctx, ev, lane, uint64(i*10+j+1)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.AppendMember(ctx, "", "public", 0, admission.VisitorID{}); err == nil {
		t.Fatal("an empty event id was accepted")
	}
	s.Close()
	s = open(t, dir)
	for i, ev := range names {
		if ev == "" {
			continue
		}
		m, err := s.Serving(ctx, ev)
		if err != nil || len(m) != len(names) {
			t.Fatalf("Serving(%q) = %v, %v", ev, m, err)
		}
		for j, lane := range names {
			got, err := s.Members(ctx, ev, lane, i*10+j)
			if err != nil || len(got) != 1 || got[0] != (admission.VisitorID{byte(i), byte(j)}) || m[lane] != uint64(i*10+j+1) {
				t.Fatalf("event %q lane %q: members %v, serving %d, %v", ev, lane, got, m[lane], err)
			}
		}
	}
}

// TestMinutesTornTail: a crash in the middle of a minute record leaves
// a torn last line; the record acknowledged after the restart must not
// be glued to it (and lost at the next load).
func TestMinutesTornTail(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	m0 := time.Now().UTC().Truncate(time.Minute)
	s := open(t, dir)
	if err := s.RecordMinute(ctx, "show", m0, []byte("first"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "events", "*", "minutes.log"))
	if len(matches) != 1 {
		t.Fatalf("minute logs: %v", matches)
	}
	f, err := os.OpenFile(matches[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"m":123,"u":99999999999`) // the torn tail of a crash
	f.Close()

	s = open(t, dir)
	if err := s.RecordMinute(ctx, "show", m0.Add(time.Minute), []byte("second"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir)
	recs, err := s.Minutes(ctx, "show", m0, m0.Add(time.Hour))
	if err != nil || len(recs) != 2 || string(recs[1].Record) != "second" {
		t.Fatalf("after a torn tail and a restart: %d records %v, %v; want first and second", len(recs), recs, err)
	}
}
