// Package fsutil holds the few file-system steps the embedded stores share
// to be durable and alone: fsync of a directory's entries, fdatasync of a
// file (Datasync, and DataSyncer for a group-commit loop, which on Linux
// waits for the disk without holding a scheduler P), and an exclusive lock
// on a data directory.
//
// It is not a storage engine; the stores own their file formats.
package fsutil
