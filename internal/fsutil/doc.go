// Package fsutil holds the few file-system steps the embedded stores share
// to be durable and alone: fsync of a directory's entries, fdatasync of a
// file, and an exclusive lock on a data directory.
//
// It is not a storage engine; the stores own their file formats.
package fsutil
