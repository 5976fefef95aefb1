// Package memstore is the embedded inventory store, waitroom's default: one
// process, no dependencies, every event's state in memory.
//
// Durability comes from a per-event append-only journal (internal/journal,
// as a log of length-prefixed records). Each change is
// decided under the event's lock, appended as a record of its effect, and
// acknowledged only after a committer goroutine has written and fsynced the
// batch holding it (group commit), so an acknowledged hold, confirm,
// release or cancel survives kill -9. Readers also wait for the batch they
// observed, so no answer is ever based on a change that could be lost.
// Periodic snapshots (replaced atomically by fsutil.WriteFile) shorten
// recovery; the journal is never rewritten and doubles as the event's
// audit stream.
//
// Expired holds are expired (and journaled) at the start of every
// operation, so correctness never depends on the reaper.
//
// It is not for sharing state between several waitroom processes: use
// redisstore for that. The data directory is locked against a second
// process.
package memstore
