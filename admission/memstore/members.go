package memstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/waitroom/waitroom/internal/fsutil"
	"github.com/waitroom/waitroom/internal/journal"

	"github.com/waitroom/waitroom/admission"
)

// A member file is internal/journal's log of fixed-size items, the
// format this store has always written: a sequence of frames, one or more
// per batch of appends,
//
//	[4-byte big-endian id count][4-byte CRC-32C of the ids][count × 16-byte visitor id]
//
// The ids are stored raw; the frame only lets the torn tail of a crash be
// told from acknowledged members and cut off when the file is loaded.
// Frames are only ever appended, each made durable (fdatasync) before the
// appends in it are acknowledged.
const (
	idSize      = len(admission.VisitorID{})
	frameHeader = journal.HeaderSize
	maxFrameIDs = 1 << 16 // ids per frame: 1 MiB
)

// memberLog is one tranche's members: the durable ones in memory (ids)
// and in the file (j). Ids enter the list only once the journal has made
// them durable, so a draw can never number a visitor that a crash could
// still take away. An idle tranche holds no file descriptor and no
// goroutine (the journal closes its file when nothing is pending).
type memberLog struct {
	j   *journal.Journal
	mu  sync.Mutex
	ids idList // durable members, in file order
}

// openMemberLog opens a tranche's member file at path: it loads the
// members the file has, cutting a torn tail left by a crash (never
// acknowledged). A missing file is created, after ensure (which creates
// the event's directory durably), by the first append.
func openMemberLog(path string, ensure func() error, syncers *fsutil.SyncerPool) (*memberLog, error) {
	l := &memberLog{}
	j, err := journal.Open(path, 0, journal.Options{
		Format:    journal.Format{ItemSize: idSize, MaxCount: maxFrameIDs},
		Syncers:   syncers,
		Lazy:      true,
		Prepare:   ensure,
		CloseIdle: true,
		OnDurable: l.durable,
		ErrClosed: errClosed,
		WrapError: func(err error) error {
			return fmt.Errorf("memstore: %w: members file %s: %w", admission.ErrStoreDown, path, err)
		},
	}, func(_, _ int64, ids []byte) error {
		l.ids.append(ids)
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.j = j
	return l, nil
}

// durable takes ids the journal has made durable.
func (l *memberLog) durable(ids []byte) {
	l.mu.Lock()
	l.ids.append(ids)
	l.mu.Unlock()
}

// append queues v for the next write and waits until it is durable.
func (l *memberLog) append(ctx context.Context, v admission.VisitorID) error {
	b, _, err := l.j.Append(v[:])
	if err != nil {
		return err
	}
	return b.Wait(ctx)
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

// close waits for the journal to write what is pending.
func (l *memberLog) close() error { return l.j.Close() }

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
