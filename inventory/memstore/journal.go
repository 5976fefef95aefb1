package memstore

import (
	"errors"
	"fmt"

	"github.com/waitroom/waitroom/internal/fsutil"
	"github.com/waitroom/waitroom/internal/journal"
)

// Each event's journal is an append-only file of framed records
// (internal/journal's log of records, the format this store has always
// written):
//
//	[4-byte big-endian payload length][4-byte CRC-32C of payload][payload]
//
// Records are appended in the order their changes were applied (under the
// event's lock) and made durable by the journal's group commit. A torn
// tail left by a crash fails its length or CRC check and is cut off on
// open. The journal is never rewritten, so it is also the event's audit
// stream: a record's end offset is its cursor.

// maxRecord bounds one record; a definition of the largest event fits.
const maxRecord = 64 << 20

var (
	errClosed    = errors.New("memstore: store closed")
	errBadCursor = journal.ErrBadOffset
)

// openJournal opens an event's journal at path, checks every record from
// start on (the offset a snapshot already covers), cuts a torn tail and
// calls replay for each good record.
func openJournal(path string, start int64, syncers *fsutil.SyncerPool, replay func(off, end int64, payload []byte) error) (*journal.Journal, error) {
	return journal.Open(path, start, journal.Options{
		Format:    journal.Format{MaxCount: maxRecord},
		Syncers:   syncers,
		ErrClosed: errClosed,
		WrapError: func(err error) error { return fmt.Errorf("memstore: journal write failed: %w", err) },
	}, replay)
}
