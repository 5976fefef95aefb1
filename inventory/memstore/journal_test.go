package memstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/waitroom/waitroom/internal/journal"
	"github.com/waitroom/waitroom/inventory"
)

// TestTornTail cuts the journal at every byte of its last record, as a
// crash during a write would, and checks that the store opens with every
// earlier record and nothing of the torn one.
func TestTornTail(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	def := inventory.EventDef{Sections: []inventory.Section{{ID: "A", Rows: []inventory.Row{{ID: "1", Seats: 4}}}}}
	if _, err := s.PutEvent(ctx, "ev", def, ""); err != nil {
		t.Fatal(err)
	}
	first, err := s.Hold(ctx, "ev", inventory.HoldRequest{User: "u1", Seats: []string{"A-1-1"}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "events", "ev", "journal")
	before, _ := os.Stat(path)
	if _, err := s.Hold(ctx, "ev", inventory.HoldRequest{User: "u2", Seats: []string{"A-1-2"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.Remove(filepath.Join(dir, "events", "ev", "snapshot")) // recover from the journal alone
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for cut := before.Size(); cut < int64(len(full)); cut++ {
		if err := os.WriteFile(path, full[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(Options{Dir: dir})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		a, err := s.Availability(ctx, "ev")
		if err != nil || a.Held != 1 {
			t.Fatalf("cut at %d: %+v, %v; want only the first hold", cut, a, err)
		}
		if h, err := s.GetHold(ctx, "ev", first.ID); err != nil || h.Status != inventory.HoldHeld {
			t.Fatalf("cut at %d: first hold %+v, %v", cut, h, err)
		}
		// The torn bytes are gone, and new records follow the good ones.
		if _, err := s.Hold(ctx, "ev", inventory.HoldRequest{User: "u3", Seats: []string{"A-1-3"}}); err != nil {
			t.Fatalf("cut at %d: hold after recovery: %v", cut, err)
		}
		s.Close()
		s, err = Open(Options{Dir: dir})
		if err != nil {
			t.Fatalf("cut at %d: second open: %v", cut, err)
		}
		if a, _ := s.Availability(ctx, "ev"); a.Held != 2 {
			t.Fatalf("cut at %d: after reopen %+v", cut, a)
		}
		s.Close()
		os.Remove(filepath.Join(dir, "events", "ev", "snapshot"))
	}
}

// TestLockedDir refuses a second store on the same directory.
func TestLockedDir(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Open(Options{Dir: dir}); err == nil {
		t.Fatal("a second store opened a locked data directory")
	}
}

// TestJournalFailureIsSticky: once a write to the journal fails, the
// store answers nothing more (it cannot tell what is durable) and Ping
// says so, until it is restarted and recovers from what is on disk.
func TestJournalFailureIsSticky(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	def := inventory.EventDef{Sections: []inventory.Section{{ID: "A", Rows: []inventory.Row{{ID: "1", Seats: 4}}}}}
	if _, err := s.PutEvent(ctx, "ev", def, ""); err != nil {
		t.Fatal(err)
	}
	kept, err := s.Hold(ctx, "ev", inventory.HoldRequest{User: "u1", Seats: []string{"A-1-1"}})
	if err != nil {
		t.Fatal(err)
	}
	journal.BreakWrites(s.events["ev"].j) // the next write fails, as a full or broken disk would
	if _, err := s.Hold(ctx, "ev", inventory.HoldRequest{User: "u2", Seats: []string{"A-1-2"}}); !errors.Is(err, inventory.ErrUnavailable) {
		t.Fatalf("hold after a failed write: %v, want unavailable", err)
	}
	if _, err := s.Availability(ctx, "ev"); !errors.Is(err, inventory.ErrUnavailable) {
		t.Fatalf("read after a failed write: %v, want unavailable", err)
	}
	if err := s.Ping(ctx); !errors.Is(err, inventory.ErrUnavailable) {
		t.Fatalf("Ping after a failed write: %v", err)
	}
	s.Close()
	s, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if h, err := s.GetHold(ctx, "ev", kept.ID); err != nil || h.Status != inventory.HoldHeld {
		t.Fatalf("acknowledged hold after restart: %+v, %v", h, err)
	}
	if a, _ := s.Availability(ctx, "ev"); a.Held != 1 {
		t.Fatalf("the failed hold survived: %+v", a)
	}
}
