// Package fsutil holds the few file-system steps the embedded stores share
// to be durable and alone: fsync of a directory's entries, fdatasync of a
// file (Datasync, and DataSyncer for a group-commit loop, which on Linux
// waits for the disk without holding a scheduler P), an atomic replace of
// a whole file (WriteFile), and an exclusive lock on a data directory.
//
// Every function may be called concurrently, except two WriteFile calls
// for the same file; DataSyncer and SyncerPool say what they allow.
//
// It is not a storage engine; the stores own their file formats.
package fsutil
