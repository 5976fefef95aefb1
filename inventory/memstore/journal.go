package memstore

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/waitroom/waitroom/internal/fsutil"
)

// The journal is an append-only file of framed records:
//
//	[4-byte big-endian payload length][4-byte CRC-32C of payload][payload]
//
// Records are appended in the order their changes were applied and made
// durable by one committer goroutine that writes and fsyncs whole batches
// (group commit). A torn tail left by a crash fails its length or CRC
// check and is cut off on open. The journal is never rewritten, so it is
// also the event's audit stream: a record's end offset is its cursor.

const frameHeader = 8

// maxRecord bounds one record; a definition of the largest event fits.
const maxRecord = 64 << 20

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// batch is a group of records made durable by one write and fsync.
type batch struct {
	buf  []byte
	end  int64
	done chan struct{}
	err  error
}

// wait blocks until the batch is durable or failed.
func (b *batch) wait(ctx context.Context) error {
	if b == nil {
		return nil
	}
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		// The change is applied and will be made durable (or the store
		// fails); the caller just stops waiting for the answer.
		return ctx.Err()
	}
}

type journal struct {
	f       *os.File           // appends
	rf      *os.File           // reads of the durable prefix
	syncers *fsutil.SyncerPool // the store's; one is taken per batch

	mu       sync.Mutex
	cond     *sync.Cond
	cur      *batch // collecting records
	inflight *batch // being written
	end      int64  // offset after the last appended record
	err      error  // sticky: once a write or fsync fails, nothing more is accepted
	closing  bool
	stopped  chan struct{}

	durable atomic.Int64
}

// openJournal opens path, checks every record from start on, cuts a torn
// tail and calls replay for each good record. start is the offset a
// snapshot already covers.
func openJournal(path string, start int64, syncers *fsutil.SyncerPool, replay func(off, end int64, payload []byte) error) (*journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, err
	}
	if start > size {
		f.Close()
		return nil, fmt.Errorf("memstore: journal %s is %d bytes but its snapshot covers %d", path, size, start)
	}
	end, err := scan(f, start, size, replay)
	if err != nil {
		f.Close()
		return nil, err
	}
	if end < size {
		// A torn write from a crash: never acknowledged, safe to drop.
		if err := f.Truncate(end); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, err
		}
	}
	if _, err := f.Seek(end, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	rf, err := os.Open(path)
	if err != nil {
		f.Close()
		return nil, err
	}
	j := &journal{f: f, rf: rf, syncers: syncers, end: end, stopped: make(chan struct{})}
	j.cond = sync.NewCond(&j.mu)
	j.durable.Store(end)
	go j.run()
	return j, nil
}

// scan reads records from start and returns the offset after the last
// good one.
func scan(f *os.File, start, size int64, fn func(off, end int64, payload []byte) error) (int64, error) {
	r := bufio.NewReaderSize(io.NewSectionReader(f, start, size-start), 1<<20)
	off := start
	var hdr [frameHeader]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return off, nil
		}
		n := binary.BigEndian.Uint32(hdr[:4])
		if n > maxRecord {
			return off, nil
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return off, nil
		}
		if crc32.Checksum(payload, crcTable) != binary.BigEndian.Uint32(hdr[4:]) {
			return off, nil
		}
		end := off + frameHeader + int64(n)
		if fn != nil {
			if err := fn(off, end, payload); err != nil {
				return off, err
			}
		}
		off = end
	}
}

// append frames payload into the current batch and returns the batch and
// the record's end offset. Callers append in the order they applied their
// changes (they hold the event's lock).
func (j *journal) append(payload []byte) (*batch, int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return nil, 0, j.err
	}
	if j.closing {
		return nil, 0, errClosed
	}
	if j.cur == nil {
		j.cur = &batch{done: make(chan struct{})}
	}
	var hdr [frameHeader]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(payload)))
	binary.BigEndian.PutUint32(hdr[4:], crc32.Checksum(payload, crcTable))
	j.cur.buf = append(j.cur.buf, hdr[:]...)
	j.cur.buf = append(j.cur.buf, payload...)
	j.end += frameHeader + int64(len(payload))
	j.cur.end = j.end
	j.cond.Signal()
	return j.cur, j.end, nil
}

// barrier returns the newest batch that is not durable yet, or nil when
// everything appended is durable. A reader waits on it so that it never
// answers from a change that could still be lost, and a writer so that it
// never acknowledges one. Once a write has failed it returns a finished
// batch carrying that error: the committer may have taken the caller's
// record, failed, and cleared inflight before the caller got here, and
// nil would then acknowledge a change that is not on disk.
func (j *journal) barrier() *batch {
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
		return &batch{done: done, err: j.err}
	}
	return nil
}

// failed returns the sticky write error, if any.
func (j *journal) failed() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

func (j *journal) run() {
	defer close(j.stopped)
	for {
		j.mu.Lock()
		for j.cur == nil && !j.closing {
			j.cond.Wait()
		}
		if j.cur == nil {
			j.mu.Unlock()
			return
		}
		b := j.cur
		j.cur, j.inflight = nil, b
		j.mu.Unlock()

		_, err := j.f.Write(b.buf)
		if err == nil {
			sy := j.syncers.Get()
			err = sy.Sync(j.f)
			j.syncers.Put(sy)
		}
		j.mu.Lock()
		if err != nil && j.err == nil {
			j.err = fmt.Errorf("memstore: journal write failed: %w", err)
		}
		if err == nil {
			j.durable.Store(b.end)
		}
		b.err = j.err
		j.inflight = nil
		j.mu.Unlock()
		b.buf = nil
		close(b.done)
	}
}

// close makes every appended record durable and closes the files.
func (j *journal) close() error {
	j.mu.Lock()
	j.closing = true
	j.cond.Signal()
	j.mu.Unlock()
	<-j.stopped
	err := j.failed()
	if e := j.f.Close(); err == nil {
		err = e
	}
	if e := j.rf.Close(); err == nil {
		err = e
	}
	return err
}

// readFrom calls fn for each durable record from off on until fn returns
// false. It fails when off is not the start of a record.
func (j *journal) readFrom(off int64, fn func(end int64, payload []byte) bool) error {
	durable := j.durable.Load()
	if off < 0 || off > durable {
		return errBadCursor
	}
	r := bufio.NewReaderSize(io.NewSectionReader(j.rf, off, durable-off), 64<<10)
	var hdr [frameHeader]byte
	for off < durable {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return errBadCursor
		}
		n := binary.BigEndian.Uint32(hdr[:4])
		if n > maxRecord || off+frameHeader+int64(n) > durable {
			return errBadCursor
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(r, payload); err != nil {
			return errBadCursor
		}
		if crc32.Checksum(payload, crcTable) != binary.BigEndian.Uint32(hdr[4:]) {
			return errBadCursor
		}
		off += frameHeader + int64(n)
		if !fn(off, payload) {
			return nil
		}
	}
	return nil
}

var (
	errClosed    = errors.New("memstore: store closed")
	errBadCursor = errors.New("memstore: not an audit cursor")
)

// appended returns the offset after the last appended record.
func (j *journal) appended() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.end
}
