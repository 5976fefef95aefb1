package journal

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/waitroom/waitroom/internal/fsutil"
)

// HeaderSize is the size of a frame's header: count and CRC.
const HeaderSize = 8

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// Errors.
var (
	// ErrClosed is what Append returns after Close unless
	// Options.ErrClosed says otherwise.
	ErrClosed = errors.New("journal: closed")
	// ErrBadOffset is what ReadFrom returns for an offset that is not the
	// start of a durable frame.
	ErrBadOffset = errors.New("journal: not the offset of a record")
	// ErrTooLarge is what Append returns for a payload that does not fit
	// the format.
	ErrTooLarge = errors.New("journal: record too large")
	// ErrNotItems is what Append returns, in a log of items, for a payload
	// that is not a whole, non-zero number of items.
	ErrNotItems = errors.New("journal: not a whole number of items")
)

// Format is a journal's record codec: what a frame's count counts.
type Format struct {
	// ItemSize, when above zero, makes the journal a log of fixed-size
	// items: a frame's count is a number of items, an append is one or
	// more whole items, the appends of one batch share frames, and a
	// frame of no items marks a torn tail. At zero every append is one
	// frame whose count is the payload's length in bytes (an empty
	// payload is a record).
	ItemSize int
	// MaxCount bounds a frame's count: a header with a larger one marks a
	// torn tail. In a log of records it bounds a record's length; in a log
	// of items a larger append is split over several frames.
	MaxCount uint32
}

// size is the payload size of a frame whose header says n.
func (f Format) size(n uint32) int64 {
	if f.ItemSize > 0 {
		return int64(n) * int64(f.ItemSize)
	}
	return int64(n)
}

// valid reports whether a header's count can be a written frame's.
func (f Format) valid(n uint32) bool {
	return n <= f.MaxCount && (n > 0 || f.ItemSize == 0)
}

// Options configure a Journal.
type Options struct {
	// Format is the record codec; MaxCount must be set.
	Format Format
	// Syncers make the batches durable; one is taken per batch. Required.
	Syncers *fsutil.SyncerPool
	// Lazy leaves a missing file to the first write instead of creating it
	// in Open: Prepare runs first (to create the directory, say), and the
	// directory is fsynced after the file's first write so that its name
	// is as durable as its records.
	Lazy    bool
	Prepare func() error
	// CloseIdle closes the file whenever nothing is waiting to be written,
	// and ends the committer goroutine, so that an idle journal holds no
	// file descriptor. Otherwise the file stays open until Close.
	CloseIdle bool
	// OnDurable, if set, is called by the committer with each frame's
	// payload once its batch is durable and before the batch's waiters are
	// released, in file order. The payload is only valid during the call.
	OnDurable func(payload []byte)
	// ErrClosed replaces ErrClosed as what Append returns after Close.
	ErrClosed error
	// WrapError, if set, turns a failed write or sync into the sticky
	// error every later call returns.
	WrapError func(error) error
}

// Batch is a group of appends made durable by one write and one sync. It
// is safe for concurrent use.
type Batch struct {
	buf  []byte
	end  int64
	done chan struct{}
	err  error
}

// Wait blocks until the batch is durable (nil) or failed, or until ctx is
// done; the write goes ahead either way. A nil Batch is durable.
func (b *Batch) Wait(ctx context.Context) error {
	if b == nil {
		return nil
	}
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Journal is one journal file. It is safe for concurrent use (see the
// package documentation for what Close ends).
type Journal struct {
	path string
	opts Options

	mu       sync.Mutex
	cur      *Batch // collecting appends
	inflight *Batch // being written
	frame    int    // offset in cur.buf of its open item frame, or -1
	end      int64  // offset after the last append
	err      error  // sticky: after a failed write or sync nothing more is accepted
	closed   bool
	writing  bool     // a committer goroutine runs
	f        *os.File // kept between committers unless CloseIdle
	spare    []byte   // a written batch's buffer, for the next one
	wg       sync.WaitGroup

	onDisk  bool // the file and its name are durable (committers only, one at a time)
	durable atomic.Int64
	broken  atomic.Bool // BreakWrites

	rmu     sync.Mutex
	rf      *os.File // reads of the durable prefix, opened by the first ReadFrom
	rclosed bool     // Close has run: ReadFrom opens nothing more
}

// Open opens the journal at path: it checks every frame from offset start
// on (the part a snapshot already covers is not read), calls replay with
// each good frame's offsets and payload (valid only during the call), and
// cuts a torn tail left by a crash. A replay error stops Open and is
// returned. Without Options.Lazy a missing file is created.
func Open(path string, start int64, opts Options, replay func(off, end int64, payload []byte) error) (*Journal, error) {
	if opts.Format.MaxCount == 0 || opts.Format.ItemSize < 0 || opts.Syncers == nil {
		return nil, errors.New("journal: Options need a Format with MaxCount and Syncers")
	}
	if opts.ErrClosed == nil {
		opts.ErrClosed = ErrClosed
	}
	j := &Journal{path: path, opts: opts, frame: -1}
	flag := os.O_RDWR
	if !opts.Lazy {
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flag, 0o600)
	switch {
	case err == nil:
		j.onDisk = true
		end, err := repair(f, path, start, opts.Format, replay)
		if err != nil {
			f.Close()
			return nil, err
		}
		j.end = end
		if opts.CloseIdle {
			if err := f.Close(); err != nil {
				return nil, err
			}
		} else {
			j.f = f
		}
	case opts.Lazy && errors.Is(err, os.ErrNotExist) && start == 0:
	default:
		return nil, err
	}
	j.durable.Store(j.end)
	return j, nil
}

// repair scans f from start, cuts what follows the last good frame and
// leaves f positioned at the end.
func repair(f *os.File, path string, start int64, format Format, replay func(off, end int64, payload []byte) error) (int64, error) {
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	if start > size {
		return 0, fmt.Errorf("journal: %s is %d bytes but its snapshot covers %d", path, size, start)
	}
	end, err := Scan(io.NewSectionReader(f, start, size-start), start, format, replay)
	if err != nil {
		return 0, err
	}
	if end < size {
		// A torn write from a crash: never acknowledged, safe to drop.
		if err := f.Truncate(end); err != nil {
			return 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, err
		}
		if _, err := f.Seek(end, io.SeekStart); err != nil {
			return 0, err
		}
	}
	return end, nil
}

// Scan reads frames from r, whose first byte is at offset off of the
// file, and calls fn with each good frame's offsets and payload (valid
// only during the call) until the end of r or the first frame that is
// incomplete or fails its checks. It returns the offset after the last
// good frame, or fn's error.
func Scan(r io.Reader, off int64, format Format, fn func(off, end int64, payload []byte) error) (int64, error) {
	return scan(bufio.NewReaderSize(r, 1<<20), off, format, fn)
}

// errStop ends a scan early without an error.
var errStop = errors.New("journal: stop")

func scan(br *bufio.Reader, off int64, format Format, fn func(off, end int64, payload []byte) error) (int64, error) {
	var hdr [HeaderSize]byte
	var payload []byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return off, nil
		}
		n := binary.BigEndian.Uint32(hdr[:4])
		if !format.valid(n) {
			return off, nil
		}
		size := format.size(n)
		// Grow step by step: a torn header's count must not make the
		// buffer larger than what the file holds.
		payload = payload[:0]
		for int64(len(payload)) < size {
			k := min(size-int64(len(payload)), 1<<20)
			payload = append(payload, make([]byte, k)...)
			if _, err := io.ReadFull(br, payload[int64(len(payload))-k:]); err != nil {
				return off, nil
			}
		}
		if crc32.Checksum(payload, crcTable) != binary.BigEndian.Uint32(hdr[4:]) {
			return off, nil
		}
		end := off + HeaderSize + size
		if fn != nil {
			if err := fn(off, end, payload); err != nil {
				return off, err
			}
		}
		off = end
	}
}

// Append adds payload to the current batch (it is copied) and returns the
// batch, to wait on, and the offset after payload's bytes in the file.
func (j *Journal) Append(payload []byte) (*Batch, int64, error) {
	format := j.opts.Format
	if format.ItemSize > 0 {
		if len(payload) == 0 || len(payload)%format.ItemSize != 0 {
			return nil, 0, ErrNotItems
		}
	} else if uint64(len(payload)) > uint64(format.MaxCount) {
		return nil, 0, ErrTooLarge
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return nil, 0, j.err
	}
	if j.closed {
		return nil, 0, j.opts.ErrClosed
	}
	if j.cur == nil {
		j.cur = &Batch{buf: j.spare, done: make(chan struct{})}
		j.spare = nil
	}
	b := j.cur
	before := len(b.buf)
	if format.ItemSize == 0 {
		b.buf = binary.BigEndian.AppendUint32(b.buf, uint32(len(payload)))
		b.buf = append(b.buf, 0, 0, 0, 0) // the committer writes the CRC
		b.buf = append(b.buf, payload...)
	} else {
		for len(payload) > 0 {
			if j.frame < 0 || binary.BigEndian.Uint32(b.buf[j.frame:]) == format.MaxCount {
				j.frame = len(b.buf)
				b.buf = append(b.buf, 0, 0, 0, 0, 0, 0, 0, 0)
			}
			n := binary.BigEndian.Uint32(b.buf[j.frame:])
			k := min(int(format.MaxCount-n), len(payload)/format.ItemSize)
			binary.BigEndian.PutUint32(b.buf[j.frame:], n+uint32(k))
			b.buf = append(b.buf, payload[:k*format.ItemSize]...)
			payload = payload[k*format.ItemSize:]
		}
	}
	j.end += int64(len(b.buf) - before)
	b.end = j.end
	if !j.writing {
		j.writing = true
		j.wg.Add(1)
		go j.commit()
	}
	return b, j.end, nil
}

// Barrier returns the newest batch that is not durable yet, or nil when
// everything appended is durable. A reader waits on it so that it never
// answers from a change that could still be lost, and a writer so that it
// never acknowledges one. Once a write has failed it returns a finished
// batch carrying that error: the committer may have taken the caller's
// append, failed, and finished before the caller got here, and nil would
// then acknowledge a change that is not on disk.
func (j *Journal) Barrier() *Batch {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.cur != nil:
		return j.cur
	case j.inflight != nil:
		return j.inflight
	case j.err != nil:
		done := make(chan struct{})
		close(done)
		return &Batch{done: done, err: j.err}
	}
	return nil
}

// Err returns the sticky write error, if any.
func (j *Journal) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// End returns the offset after the last append.
func (j *Journal) End() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.end
}

// Durable returns the offset up to which the file is durable.
func (j *Journal) Durable() int64 { return j.durable.Load() }

// commit writes batches until there are none, then ends (closing the file
// with Options.CloseIdle). After a failure it fails what is collected
// without writing it.
func (j *Journal) commit() {
	defer j.wg.Done()
	j.mu.Lock()
	f := j.f
	j.mu.Unlock()
	for {
		j.mu.Lock()
		b := j.cur
		if b == nil || j.err != nil {
			if b != nil {
				j.cur, j.frame = nil, -1
				b.err = j.err
				close(b.done)
			}
			if !j.opts.CloseIdle {
				j.f = f
			}
			j.writing = false
			j.mu.Unlock()
			if j.opts.CloseIdle && f != nil {
				f.Close()
			}
			return
		}
		j.cur, j.inflight, j.frame = nil, b, -1
		j.mu.Unlock()

		err := j.write(&f, b.buf)
		if err == nil && j.opts.OnDurable != nil {
			frames(b.buf, j.opts.Format, func(_, p []byte) { j.opts.OnDurable(p) })
		}

		j.mu.Lock()
		if err != nil && j.err == nil {
			if j.opts.WrapError != nil {
				err = j.opts.WrapError(err)
			}
			j.err = err
		}
		if j.err == nil {
			j.durable.Store(b.end)
		}
		b.err = j.err
		j.inflight = nil
		if cap(b.buf) <= 1<<20 && j.spare == nil {
			j.spare = b.buf[:0]
		}
		b.buf = nil
		j.mu.Unlock()
		close(b.done)
	}
}

// write seals buf's frames (their CRCs) and appends them to the file,
// durably, opening (and with Options.Lazy creating) the file first when
// the committer has none open.
func (j *Journal) write(f **os.File, buf []byte) error {
	if j.broken.Load() {
		return os.ErrClosed
	}
	if *f == nil {
		if !j.onDisk && j.opts.Prepare != nil {
			if err := j.opts.Prepare(); err != nil {
				return err
			}
		}
		nf, err := os.OpenFile(j.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		*f = nf
	}
	frames(buf, j.opts.Format, func(hdr, p []byte) {
		binary.BigEndian.PutUint32(hdr[4:], crc32.Checksum(p, crcTable))
	})
	if _, err := (*f).Write(buf); err != nil {
		return err
	}
	sy := j.opts.Syncers.Get()
	err := sy.Sync(*f)
	j.opts.Syncers.Put(sy)
	if err != nil {
		return err
	}
	if !j.onDisk {
		// The first write created the file: make its name durable too.
		if err := fsutil.SyncDir(filepath.Dir(j.path)); err != nil {
			return err
		}
		j.onDisk = true
	}
	return nil
}

// frames calls fn with the header and the payload of each frame in buf.
func frames(buf []byte, format Format, fn func(hdr, payload []byte)) {
	for off := 0; off < len(buf); {
		n := binary.BigEndian.Uint32(buf[off:])
		p := buf[off+HeaderSize : off+HeaderSize+int(format.size(n))]
		fn(buf[off:off+HeaderSize], p)
		off += HeaderSize + len(p)
	}
}

// ReadFrom calls fn with the end offset and payload (valid only during
// the call) of each durable frame from offset off on, until fn returns
// false. It returns ErrBadOffset when off is not the start of a frame.
func (j *Journal) ReadFrom(off int64, fn func(end int64, payload []byte) bool) error {
	durable := j.durable.Load()
	if off < 0 || off > durable {
		return ErrBadOffset
	}
	if off == durable {
		return nil
	}
	j.rmu.Lock()
	if j.rclosed {
		j.rmu.Unlock()
		return j.opts.ErrClosed
	}
	if j.rf == nil {
		rf, err := os.Open(j.path)
		if err != nil {
			j.rmu.Unlock()
			return err
		}
		j.rf = rf
	}
	rf := j.rf
	j.rmu.Unlock()
	// Everything up to durable was written whole, so a frame that does
	// not check out means off was not the start of one.
	stopped := false
	end, err := scan(bufio.NewReaderSize(io.NewSectionReader(rf, off, durable-off), 64<<10), off, j.opts.Format,
		func(_, end int64, payload []byte) error {
			if !fn(end, payload) {
				stopped = true
				return errStop
			}
			return nil
		})
	switch {
	case stopped:
		return nil
	case err != nil:
		return err
	case end != durable:
		return ErrBadOffset
	}
	return nil
}

// Close waits until everything appended is written (or failed), then
// closes the file. It returns the sticky write error, if any, or the
// error of closing the file.
func (j *Journal) Close() error {
	j.mu.Lock()
	j.closed = true
	j.mu.Unlock()
	j.wg.Wait()
	j.mu.Lock()
	err, f := j.err, j.f
	j.f = nil
	j.mu.Unlock()
	if f != nil {
		if e := f.Close(); err == nil {
			err = e
		}
	}
	j.rmu.Lock()
	if j.rf != nil {
		if e := j.rf.Close(); err == nil {
			err = e
		}
		j.rf = nil
	}
	j.rclosed = true
	j.rmu.Unlock()
	return err
}

// BreakWrites makes every later write fail as a full or broken disk's
// would, so that tests of a store can check what it does after a failed
// write. Nothing else calls it.
func BreakWrites(j *Journal) { j.broken.Store(true) }
