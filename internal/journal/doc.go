// Package journal is the append-only, group-committed log file that the
// embedded stores (admission/memstore, inventory/memstore) make their
// changes durable with.
//
// A journal file is a sequence of frames:
//
//	[4-byte big-endian count][4-byte big-endian CRC-32C of the payload][payload]
//
// Two record codecs share this framing (see Format): a log of records,
// where the count is the payload's length in bytes and every append is one
// frame (inventory/memstore's journal), and a log of fixed-size items,
// where the count is a number of items and the appends of one batch share
// frames (admission/memstore's member files). Both read exactly the files
// the stores wrote before this package existed.
//
// Appends go into the current batch; one committer goroutine writes a
// batch with one write and one fdatasync (group commit) and only then
// releases its waiters, so nothing is acknowledged before it is on disk.
// A crash can leave a torn last frame; it fails its count or CRC check and
// Open cuts it off: it was never acknowledged. A failed write or sync is
// sticky: the journal accepts nothing more, because what is on disk can no
// longer be told, and the store recovers from the file when reopened.
//
// Concurrency: every method of Journal may be called from any goroutine
// at any time. After Close, Append fails and a ReadFrom that overlaps or
// follows Close fails with an error. Records land in the file in the
// order of their Append calls; a caller that needs them in the order its
// changes were applied appends while holding the lock it applies them
// under. Batch.Wait may be called by any number of goroutines.
//
// It is not a database: it has no index, no compaction and no snapshots;
// the stores own their record contents and their snapshots.
package journal
