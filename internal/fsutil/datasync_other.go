//go:build !linux

package fsutil

import "os"

// Datasync makes f's data durable.
func Datasync(f *os.File) error { return f.Sync() }
