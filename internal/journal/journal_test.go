package journal

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/waitroom/waitroom/internal/fsutil"
)

var (
	records = Format{MaxCount: 64 << 20}
	items   = Format{ItemSize: 16, MaxCount: 1 << 16}
)

func syncers(t testing.TB) *fsutil.SyncerPool {
	p := fsutil.NewSyncerPool(2)
	t.Cleanup(func() { p.Close() })
	return p
}

func open(t testing.TB, path string, opts Options, replay func(off, end int64, payload []byte) error) *Journal {
	t.Helper()
	if opts.Syncers == nil {
		opts.Syncers = syncers(t)
	}
	j, err := Open(path, 0, opts, replay)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// frame is one frame as the stores wrote them before this package.
func frame(count uint32, payload []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, count)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(payload, crc32.MakeTable(crc32.Castagnoli)))
	return append(b, payload...)
}

func appendWait(t testing.TB, j *Journal, p []byte) int64 {
	t.Helper()
	b, end, err := j.Append(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	return end
}

// TestFormats: both codecs write exactly the frames the stores wrote
// before, and read them back.
func TestFormats(t *testing.T) {
	dir := t.TempDir()
	t.Run("records", func(t *testing.T) {
		path := filepath.Join(dir, "journal")
		j := open(t, path, Options{Format: records}, nil)
		if end := appendWait(t, j, []byte("one")); end != HeaderSize+3 {
			t.Fatalf("end %d", end)
		}
		appendWait(t, j, nil)
		appendWait(t, j, []byte("three"))
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		want := append(append(frame(3, []byte("one")), frame(0, nil)...), frame(5, []byte("three"))...)
		if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
			t.Fatalf("file\n%x\nwant\n%x", got, want)
		}
		var got []string
		j = open(t, path, Options{Format: records}, func(_, _ int64, p []byte) error { got = append(got, string(p)); return nil })
		defer j.Close()
		if fmt.Sprint(got) != "[one  three]" {
			t.Fatalf("replayed %q", got)
		}
	})
	t.Run("items", func(t *testing.T) {
		path := filepath.Join(dir, "x.members")
		j := open(t, path, Options{Format: items, Lazy: true, CloseIdle: true}, nil)
		a, b := bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{2}, 32)
		appendWait(t, j, a)
		appendWait(t, j, b)
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		want := append(frame(1, a), frame(2, b)...)
		if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
			t.Fatalf("file\n%x\nwant\n%x", got, want)
		}
	})
}

// TestItemFrames: appends of one batch share a frame, and a batch larger
// than a frame is written as several (moved from admission/memstore's
// TestFrames).
func TestItemFrames(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.members")
	var durable []byte
	j := open(t, path, Options{Format: items, Lazy: true, CloseIdle: true,
		OnDurable: func(p []byte) { durable = append(durable, p...) }}, nil)
	buf := make([]byte, (2*int(items.MaxCount)+5)*items.ItemSize)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	appendWait(t, j, buf)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(durable, buf) {
		t.Fatal("OnDurable did not see the items")
	}
	var got []byte
	j = open(t, path, Options{Format: items, Lazy: true, CloseIdle: true}, func(_, _ int64, p []byte) error {
		got = append(got, p...)
		return nil
	})
	defer j.Close()
	if !bytes.Equal(got, buf) {
		t.Fatalf("read back %d bytes; want %d", len(got), len(buf))
	}
	if st, _ := os.Stat(path); st.Size() != int64(len(buf)+3*HeaderSize) {
		t.Fatalf("file is %d bytes, want 3 frames", st.Size())
	}
}

// TestBadAppends: what does not fit the format is refused.
func TestBadAppends(t *testing.T) {
	j := open(t, filepath.Join(t.TempDir(), "j"), Options{Format: items}, nil)
	defer j.Close()
	for _, p := range [][]byte{nil, make([]byte, 15), make([]byte, 17)} {
		if _, _, err := j.Append(p); !errors.Is(err, ErrNotItems) {
			t.Errorf("append of %d bytes: %v", len(p), err)
		}
	}
	r := open(t, filepath.Join(t.TempDir(), "j"), Options{Format: Format{MaxCount: 4}}, nil)
	defer r.Close()
	if _, _, err := r.Append(make([]byte, 5)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("append over MaxCount: %v", err)
	}
}

// TestLazy: a lazy journal creates neither its directory nor its file
// until the first write, and then makes both durable.
func TestLazy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ev")
	path := filepath.Join(dir, "x.members")
	prepared := 0
	j := open(t, path, Options{Format: items, Lazy: true, CloseIdle: true,
		Prepare: func() error { prepared++; return os.Mkdir(dir, 0o700) }}, nil)
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open created the directory: %v", err)
	}
	appendWait(t, j, make([]byte, 16))
	appendWait(t, j, make([]byte, 16))
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Size() != 2*(HeaderSize+16) || prepared != 1 {
		t.Fatalf("file %v, %v; Prepare ran %d times", st, err, prepared)
	}
	if _, err := Open(filepath.Join(dir, "y"), 8, Options{Format: items, Lazy: true, Syncers: syncers(t)}, nil); err == nil {
		t.Fatal("a missing file opened past its start")
	}
}

// TestTornTail cuts the file at every byte of its last frame, and puts
// damaged copies of a frame after the good ones, as a crash during a
// write would: Open keeps every good frame, cuts the rest, and appends
// carry on after the good frames.
func TestTornTail(t *testing.T) {
	for name, format := range map[string]Format{"records": records, "items": items} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "j")
			j := open(t, path, Options{Format: format}, nil)
			first, second := bytes.Repeat([]byte{'a'}, 16), bytes.Repeat([]byte{'b'}, 32)
			good := appendWait(t, j, first)
			appendWait(t, j, second)
			j.Close()
			full, _ := os.ReadFile(path)
			last := append([]byte(nil), full[good:]...)
			tails := map[string][]byte{
				"partial header": last[:5],
				"partial body":   last[:HeaderSize+10],
				"bad checksum":   append(append([]byte(nil), last[:len(last)-1]...), last[len(last)-1]^1),
				"zeros":          make([]byte, len(last)),
				"huge count":     append([]byte{0xff}, last[1:]...),
			}
			for cut := 0; cut < len(last); cut++ {
				tails[fmt.Sprint("cut ", cut)] = last[:cut]
			}
			for tname, tail := range tails {
				if format == records && tname == "zeros" {
					continue // an empty record is a record
				}
				os.WriteFile(path, append(full[:good:good], tail...), 0o600)
				var got [][]byte
				j := open(t, path, Options{Format: format}, func(_, _ int64, p []byte) error {
					got = append(got, append([]byte(nil), p...))
					return nil
				})
				if len(got) != 1 || !bytes.Equal(got[0], first) {
					t.Fatalf("%s: replayed %q", tname, got)
				}
				if st, _ := os.Stat(path); st.Size() != good {
					t.Fatalf("%s: the tail was not cut: %d bytes, want %d", tname, st.Size(), good)
				}
				if end := appendWait(t, j, second); end != int64(len(full)) {
					t.Fatalf("%s: appended up to %d, want %d", tname, end, len(full))
				}
				j.Close()
				if b, _ := os.ReadFile(path); !bytes.Equal(b, full) {
					t.Fatalf("%s: after appending past a cut tail:\n%x\nwant\n%x", tname, b, full)
				}
			}
		})
	}
}

// TestStart: Open reads from a snapshot's offset on, and refuses one past
// the end of the file.
func TestStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j := open(t, path, Options{Format: records}, nil)
	mid := appendWait(t, j, []byte("covered"))
	appendWait(t, j, []byte("replayed"))
	j.Close()
	var got []string
	j, err := Open(path, mid, Options{Format: records, Syncers: syncers(t)}, func(off, _ int64, p []byte) error {
		if off != mid {
			t.Errorf("offset %d, want %d", off, mid)
		}
		got = append(got, string(p))
		return nil
	})
	if err != nil || len(got) != 1 || got[0] != "replayed" {
		t.Fatalf("%q, %v", got, err)
	}
	j.Close()
	if _, err := Open(path, 1<<20, Options{Format: records, Syncers: syncers(t)}, nil); err == nil {
		t.Fatal("opened with a start past the end")
	}
	stop := errors.New("stop")
	if _, err := Open(path, 0, Options{Format: records, Syncers: syncers(t)}, func(int64, int64, []byte) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("replay error: %v", err)
	}
}

// TestReadFrom reads the durable frames from each offset, and refuses an
// offset inside a frame.
func TestReadFrom(t *testing.T) {
	j := open(t, filepath.Join(t.TempDir(), "j"), Options{Format: records}, nil)
	defer j.Close()
	var ends []int64
	for i := range 5 {
		ends = append(ends, appendWait(t, j, []byte(fmt.Sprint("record ", i))))
	}
	var got []string
	if err := j.ReadFrom(ends[1], func(end int64, p []byte) bool {
		got = append(got, fmt.Sprint(end, " ", string(p)))
		return len(got) < 2
	}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint([]string{fmt.Sprint(ends[2], " record 2"), fmt.Sprint(ends[3], " record 3")}); fmt.Sprint(got) != want {
		t.Fatalf("%q, want %q", got, want)
	}
	for _, off := range []int64{-1, ends[0] + 1, ends[4] + 1} {
		if err := j.ReadFrom(off, func(int64, []byte) bool { return true }); !errors.Is(err, ErrBadOffset) {
			t.Errorf("offset %d: %v", off, err)
		}
	}
	if err := j.ReadFrom(ends[4], func(int64, []byte) bool { t.Fatal("read past the end"); return true }); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentAppends: appends from many goroutines are each durable
// when their wait returns, land in the file once each, in the order of
// their end offsets, and OnDurable sees them in file order.
func TestConcurrentAppends(t *testing.T) {
	for name, format := range map[string]Format{"records": records, "items": {ItemSize: 16, MaxCount: 7}} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "j")
			var seen []byte
			j := open(t, path, Options{Format: format, CloseIdle: name == "items",
				OnDurable: func(p []byte) { seen = append(seen, p...) }}, nil)
			const workers, each = 8, 50
			var mu sync.Mutex
			ends := map[int64][]byte{}
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range each {
						p := []byte(fmt.Sprintf("worker %2d rec %3d", w, i))[:16]
						b, end, err := j.Append(p)
						if err != nil {
							t.Error(err)
							return
						}
						if err := b.Wait(context.Background()); err != nil {
							t.Error(err)
							return
						}
						if j.Durable() < end {
							t.Errorf("acknowledged at %d, durable only to %d", end, j.Durable())
						}
						mu.Lock()
						ends[end] = p
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			var all []byte
			var prev int64
			for len(ends) > 0 {
				next := int64(-1)
				for e := range ends {
					if e > prev && (next < 0 || e < next) {
						next = e
					}
				}
				all = append(all, ends[next]...)
				delete(ends, next)
				prev = next
			}
			if !bytes.Equal(seen, all) {
				t.Fatal("OnDurable's order is not the order of the end offsets")
			}
			var got []byte
			j = open(t, path, Options{Format: format}, func(_, _ int64, p []byte) error { got = append(got, p...); return nil })
			defer j.Close()
			if !bytes.Equal(got, all) {
				t.Fatalf("file holds %d bytes of payload, want %d in append order", len(got), len(all))
			}
		})
	}
}

// TestFailureIsSticky: after a failed write the batch reports it, and
// every later append, barrier and Close does too.
func TestFailureIsSticky(t *testing.T) {
	wrapped := errors.New("store down")
	j := open(t, filepath.Join(t.TempDir(), "j"), Options{Format: records,
		WrapError: func(err error) error { return fmt.Errorf("%w: %w", wrapped, err) }}, nil)
	appendWait(t, j, []byte("kept"))
	BreakWrites(j)
	b, _, err := j.Append([]byte("lost"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(context.Background()); !errors.Is(err, wrapped) {
		t.Fatalf("failed write: %v", err)
	}
	if _, _, err := j.Append([]byte("after")); !errors.Is(err, wrapped) {
		t.Fatalf("append after a failure: %v", err)
	}
	if !errors.Is(j.Err(), wrapped) {
		t.Fatal("Err after a failure is nil")
	}
	if err := j.Close(); !errors.Is(err, wrapped) {
		t.Fatalf("Close after a failure: %v", err)
	}
}

// TestBarrierAfterFailedWrite: when the committer has already taken a
// record's batch, failed to write it and finished, the barrier a writer
// waits on must still report the failure, not "nothing pending" (moved
// from inventory/memstore, where it acknowledged a hold that was never
// written, about once in 300 runs of TestJournalFailureIsSticky).
func TestBarrierAfterFailedWrite(t *testing.T) {
	j := open(t, filepath.Join(t.TempDir(), "journal"), Options{Format: records}, nil)
	BreakWrites(j) // the next write fails
	b, _, err := j.Append([]byte("record"))
	if err != nil {
		t.Fatal(err)
	}
	<-b.done // the committer took the batch, failed, and cleared inflight
	if b.err == nil {
		t.Fatal("the write to a closed file succeeded")
	}
	if err := j.Barrier().Wait(context.Background()); err == nil {
		t.Fatal("the barrier after a failed write reports nothing pending")
	}
	if err := j.Close(); err == nil {
		t.Error("close after a failed write reports no error")
	}
}

// TestClose: Close writes what is pending, later appends get ErrClosed
// (or the store's own error), and nothing is left running.
func TestClose(t *testing.T) {
	mine := errors.New("mine")
	for _, closed := range []error{nil, mine} {
		path := filepath.Join(t.TempDir(), "j")
		j := open(t, path, Options{Format: records, ErrClosed: closed}, nil)
		b, end, _ := j.Append([]byte("pending"))
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		if err := b.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(path); st.Size() != end {
			t.Fatalf("Close left %d bytes, want %d", st.Size(), end)
		}
		want := closed
		if want == nil {
			want = ErrClosed
		}
		if _, _, err := j.Append([]byte("late")); !errors.Is(err, want) {
			t.Fatalf("append after Close: %v", err)
		}
		if err := j.ReadFrom(0, func(int64, []byte) bool { return true }); !errors.Is(err, want) {
			t.Fatalf("ReadFrom after Close: %v", err)
		}
	}
}

// TestWaitContext: a waiter can stop waiting; the write goes ahead.
func TestWaitContext(t *testing.T) {
	j := open(t, filepath.Join(t.TempDir(), "j"), Options{Format: records}, nil)
	defer j.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b, end, _ := j.Append([]byte("x"))
	if err := b.Wait(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if err := j.Barrier().Wait(context.Background()); err != nil || j.Durable() != end {
		t.Fatalf("%v, durable %d, want %d", err, j.Durable(), end)
	}
	if j.Barrier() != nil {
		t.Fatal("a barrier with nothing pending")
	}
}

func TestOpenNeedsFormat(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "j"), 0, Options{Syncers: syncers(t)}, nil); err == nil {
		t.Fatal("opened without a format")
	}
}
