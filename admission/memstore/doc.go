// Package memstore is the embedded admission store, waitroom's default:
// one process, no dependencies, every event's queue state in memory and
// on local disk.
//
// The members of each (event, lane, tranche) live in an append-only file
// of raw 16-byte visitor ids, written in CRC-checked batches by a
// committer goroutine that fsyncs each batch before it acknowledges the
// appends in it (group commit: concurrent appends share one fsync); the
// file is internal/journal's log of fixed-size items. In
// memory a tranche's ids are raw bytes too, in chunks that are filled and
// never copied, so ten million queued visitors take about 160 MB (17 B of
// RSS per visitor, measured by TestMemory10M). Only durable members are
// ever read back; Members returns a copy.
//
// Everything else — seeds, draw records, serving counters, claims, pass
// uses, revocations, visitor bars, invite uses, operator control and controller
// state — is small: it is kept in memory and written whole to one state
// file per event, replaced atomically by fsutil.WriteFile (temporary
// file, fsync, rename, fsync of the directory). Seed, RecordDraw, Advance, Revoke, BarVisitors,
// UseInvite and SetControl return once a state file holding their change
// is on disk; concurrent ones share a write. Claim, MarkUsed and
// SaveController only mark the state dirty:
// a background goroutine writes it every second, and Close writes it.
//
// Layout of the data directory:
//
//	LOCK                              flock against a second process
//	events/<event>/state              the event's state (JSON)
//	events/<event>/<lane>.<n>.members the members of tranche n of a lane
//
// (names escaped: anything outside [A-Za-z0-9_-] becomes %XX).
//
// It is not for sharing a queue between several waitroom processes (its
// Lease always grants leadership, as the only process leads): use
// redisstore for that. The data directory is locked against a second
// process.
package memstore
