package memstore

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"github.com/waitroom/waitroom/internal/fsutil"

	"github.com/waitroom/waitroom/admission"
)

// A member file is a sequence of frames, one per batch of appends:
//
//	[4-byte big-endian id count][4-byte CRC-32C of the ids][count × 16-byte visitor id]
//
// The ids are stored raw; the frame only lets the torn tail of a crash be
// told from acknowledged members and cut off when the file is loaded.
// Frames are only ever appended, each made durable (fdatasync) before the
// appends in it are acknowledged.
const (
	idSize      = len(admission.VisitorID{})
	frameHeader = 8
	maxFrameIDs = 1 << 16 // ids per frame: 1 MiB
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// round is one group commit: everyone who joined it waits for one write.
type round struct {
	done chan struct{}
	err  error
}

func newRound() *round { return &round{done: make(chan struct{})} }

func (r *round) wait(ctx context.Context) error {
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		// The write goes ahead; the caller only stops waiting for it.
		return ctx.Err()
	}
}

// memberLog is one tranche's members: the durable ones in memory (ids)
// and in the file, the ones waiting for the next write in pending. Only
// durable members are ever read, so a draw can never number a visitor
// that a crash could still take away.
type memberLog struct {
	path     string
	dirPath  string       // the event's directory
	ensure   func() error // creates the event's directory, durably
	syncers  *fsutil.SyncerPool
	mu       sync.Mutex
	ids      idList // durable members, in append order
	pending  []byte // appended, not yet written
	spare    []byte // a written batch's buffer, for the next one
	round    *round // the waiters of pending
	writing  bool   // a committer goroutine is running
	closed   bool
	err      error // sticky: after a failed write or fsync nothing more is accepted
	wg       sync.WaitGroup
	onDisk   bool   // the file exists and its directory entry is durable (committer only)
	frameBuf []byte // committer only
}

// append queues v for the next write and waits until it is durable.
func (l *memberLog) append(ctx context.Context, v admission.VisitorID) error {
	l.mu.Lock()
	if l.err != nil {
		l.mu.Unlock()
		return l.err
	}
	if l.closed {
		l.mu.Unlock()
		return errClosed
	}
	if l.round == nil {
		l.round = newRound()
	}
	r := l.round
	l.pending = append(l.pending, v[:]...)
	if !l.writing {
		l.writing = true
		l.wg.Add(1)
		go l.commit()
	}
	l.mu.Unlock()
	return r.wait(ctx)
}

// commit writes pending batches until there are none, then closes the
// file and exits: an idle tranche holds no file descriptor and no
// goroutine.
func (l *memberLog) commit() {
	defer l.wg.Done()
	var f *os.File
	sy := l.syncers.Get()
	defer func() {
		l.syncers.Put(sy)
		if f != nil {
			f.Close()
		}
	}()
	for {
		l.mu.Lock()
		if len(l.pending) == 0 || l.err != nil {
			if r := l.round; r != nil { // only after a failure
				r.err = l.err
				close(r.done)
			}
			l.pending, l.round, l.writing = nil, nil, false
			l.mu.Unlock()
			return
		}
		buf, r := l.pending, l.round
		l.pending, l.round, l.spare = l.spare, nil, nil
		l.mu.Unlock()

		err := l.write(&f, sy, buf)
		l.mu.Lock()
		if err != nil {
			l.err = fmt.Errorf("memstore: %w: members file %s: %w", admission.ErrStoreDown, l.path, err)
			err = l.err
		} else {
			l.ids.append(buf)
		}
		if cap(buf) <= 1<<20 {
			l.spare = buf[:0]
		}
		l.mu.Unlock()
		r.err = err
		close(r.done)
	}
}

// write appends buf to the file as frames and makes it durable with sy,
// opening the file first when the committer has none open.
func (l *memberLog) write(f **os.File, sy *fsutil.DataSyncer, buf []byte) error {
	if *f == nil {
		if !l.onDisk {
			if err := l.ensure(); err != nil {
				return err
			}
		}
		nf, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		*f = nf
	}
	b := l.frameBuf[:0]
	for off := 0; off < len(buf); off += maxFrameIDs * idSize {
		ids := buf[off:min(off+maxFrameIDs*idSize, len(buf))]
		b = binary.BigEndian.AppendUint32(b, uint32(len(ids)/idSize))
		b = binary.BigEndian.AppendUint32(b, crc32.Checksum(ids, crcTable))
		b = append(b, ids...)
	}
	if cap(b) <= 4<<20 {
		l.frameBuf = b
	}
	if _, err := (*f).Write(b); err != nil {
		return err
	}
	if err := sy.Sync(*f); err != nil {
		return err
	}
	if !l.onDisk {
		// The first write created the file: make its name durable too.
		if err := fsutil.SyncDir(l.dirPath); err != nil {
			return err
		}
		l.onDisk = true
	}
	return nil
}

// members copies the durable members.
func (l *memberLog) members() []admission.VisitorID {
	l.mu.Lock()
	chunks := l.ids.view()
	l.mu.Unlock()
	return chunks.copy()
}

func (l *memberLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ids.n / idSize
}

// close waits for the committer to write what is pending.
func (l *memberLog) close() error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// loadMembers reads a member file's good frames, cuts a torn tail left
// by a crash (never acknowledged) and returns the ids.
func loadMembers(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	ids := make([]byte, 0, size) // exactly what the ids need, plus the frame headers
	r := bufio.NewReaderSize(f, 1<<20)
	var good int64
	var hdr [frameHeader]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			break
		}
		n := binary.BigEndian.Uint32(hdr[:4])
		need := int64(n) * int64(idSize)
		if n == 0 || n > maxFrameIDs || good+frameHeader+need > size {
			break
		}
		start := len(ids)
		ids = ids[:start+int(need)]
		if _, err := io.ReadFull(r, ids[start:]); err != nil || crc32.Checksum(ids[start:], crcTable) != binary.BigEndian.Uint32(hdr[4:]) {
			ids = ids[:start]
			break
		}
		good += frameHeader + need
	}
	if good < size {
		if err := f.Truncate(good); err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// idList holds visitor ids, idSize bytes each, in chunks that are filled
// and never moved: appending never copies what is there (a single slice
// grown by append leaves every outgrown copy to the garbage collector,
// and the process's resident set keeps them for a while: four times the
// ids' size at ten million visitors). Chunks double from 256 bytes to
// 1 MiB, then stay at 1 MiB, so a small tranche costs little and a big
// one at most 1 MiB more than its ids.
type idList struct {
	chunks [][]byte
	n      int // bytes
}

const (
	minChunk = 256
	maxChunk = 1 << 20
)

// append adds ids (a multiple of idSize bytes).
func (l *idList) append(ids []byte) {
	for len(ids) > 0 {
		if len(l.chunks) == 0 || len(l.chunks[len(l.chunks)-1]) == cap(l.chunks[len(l.chunks)-1]) {
			l.chunks = append(l.chunks, make([]byte, 0, min(max(l.n, minChunk), maxChunk)))
		}
		last := &l.chunks[len(l.chunks)-1]
		k := min(cap(*last)-len(*last), len(ids))
		*last = append(*last, ids[:k]...)
		ids = ids[k:]
		l.n += k
	}
}

// view returns the chunks as they are now. Bytes already in a chunk are
// never written again, so the view can be read without the lock that
// guards appends.
func (l *idList) view() idList {
	v := idList{chunks: make([][]byte, len(l.chunks)), n: l.n}
	for i, c := range l.chunks {
		v.chunks[i] = c[:len(c):len(c)]
	}
	return v
}

// copy returns the ids as visitor ids.
func (l idList) copy() []admission.VisitorID {
	out := make([]admission.VisitorID, 0, l.n/idSize)
	for _, c := range l.chunks {
		for i := 0; i+idSize <= len(c); i += idSize {
			out = append(out, admission.VisitorID(c[i:i+idSize]))
		}
	}
	return out
}
