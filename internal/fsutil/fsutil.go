package fsutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// SyncDir makes a directory's entries (new or renamed files) durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if e := d.Close(); err == nil {
		err = e
	}
	return err
}

// ErrLocked is what LockDir's error wraps when another process holds the
// lock.
var ErrLocked = errors.New("in use by another process")

// LockDir takes an exclusive lock on dir (a LOCK file in it), so that two
// processes never write the same files; the lock is released by calling
// the returned function or when the process ends.
func LockDir(dir string) (func() error, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("data directory %s is %w", dir, ErrLocked)
	}
	return f.Close, nil
}
