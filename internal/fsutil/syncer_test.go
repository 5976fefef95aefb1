package fsutil

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Syncs succeed again and again, and on Linux amd64/arm64 they go through
// AIO (the kernels this project runs on allow it; if one does not, this
// says so rather than passing on the fallback unnoticed).
func TestDataSyncerSyncs(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := NewDataSyncer()
	defer s.Close()
	want := runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64")
	if s.Async() != want {
		t.Fatalf("Async() = %v on %s/%s, want %v", s.Async(), runtime.GOOS, runtime.GOARCH, want)
	}
	for i := range 50 {
		if _, err := f.Write([]byte("record\n")); err != nil {
			t.Fatal(err)
		}
		if err := s.Sync(f); err != nil {
			t.Fatalf("sync %d: %v", i, err)
		}
	}
	if s.Async() != want {
		t.Fatal("the syncer fell back to fdatasync on a regular file")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// Errors reach the caller: a closed file, and a descriptor that cannot be
// synced at all (a pipe), which AIO refuses and fdatasync then reports.
func TestDataSyncerReportsErrors(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "journal"))
	if err != nil {
		t.Fatal(err)
	}
	s := NewDataSyncer()
	defer s.Close()
	f.Close()
	if err := s.Sync(f); err == nil {
		t.Fatal("syncing a closed file succeeded")
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	p := NewDataSyncer()
	defer p.Close()
	if err := p.Sync(w); err == nil {
		t.Fatal("syncing a pipe succeeded")
	}
	if p.Async() {
		t.Error("after the kernel refused an asynchronous sync, the syncer did not fall back")
	}
	if err := p.Sync(w); err == nil {
		t.Fatal("syncing a pipe succeeded on the fallback")
	}
}

// The fallback alone (where AIO is not available) syncs too.
func TestDataSyncerFallback(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := &DataSyncer{}
	if s.Async() {
		t.Fatal("a syncer without AIO says it is asynchronous")
	}
	if _, err := f.Write([]byte("record\n")); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(f); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkDataSyncer(b *testing.B) {
	for _, mode := range []string{"aio", "fdatasync"} {
		b.Run(mode, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "journal"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			s := NewDataSyncer()
			if mode == "fdatasync" {
				s.Close()
				s = &DataSyncer{}
			} else if !s.Async() {
				b.Skip("no AIO here")
			}
			defer s.Close()
			rec := make([]byte, 64)
			for b.Loop() {
				if _, err := f.Write(rec); err != nil {
					b.Fatal(err)
				}
				if err := s.Sync(f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A pool hands back the syncers it was given, one per concurrent
// committer, closes those beyond its size, and they keep syncing.
func TestSyncerPool(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := NewSyncerPool(1)
	a, b := p.Get(), p.Get()
	if a == b {
		t.Fatal("two committers got the same syncer")
	}
	p.Put(a)
	p.Put(b) // beyond the pool's size: closed
	if b.Async() {
		t.Error("a syncer beyond the pool's size was not closed")
	}
	c := p.Get()
	if c != a {
		t.Fatal("the pool did not hand back its idle syncer")
	}
	if err := c.Sync(f); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(f); err != nil { // closed: falls back to fdatasync
		t.Fatal(err)
	}
	p.Put(c)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if c.Async() {
		t.Error("Close left an idle syncer open")
	}
}
