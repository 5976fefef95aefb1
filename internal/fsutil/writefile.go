package fsutil

import (
	"io"
	"os"
	"path/filepath"
)

// TempSuffix ends the name of the temporary file WriteFile writes before
// it renames it: name+TempSuffix in the same directory. A crash can leave
// it behind; the next WriteFile of name overwrites it, and a store may
// remove it when it loads.
const TempSuffix = ".tmp"

// WriteFile atomically replaces dir/name with what write writes to it:
// the data goes to a temporary file (name+TempSuffix, mode 0600), which
// is fsynced, closed, renamed over dir/name, and then the directory is
// fsynced, so a crash at any point leaves either the old file or the
// complete new one, durably. When anything fails, dir/name is untouched
// and the temporary file is removed.
//
// Two concurrent WriteFile calls for the same dir/name share the
// temporary file and must not overlap; the stores write each file from
// one goroutine at a time.
func WriteFile(dir, name string, write func(w io.Writer) error) (err error) {
	tmp := filepath.Join(dir, name+TempSuffix)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return SyncDir(dir)
}
