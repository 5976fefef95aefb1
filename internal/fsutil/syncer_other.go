//go:build !linux || !(amd64 || arm64)

package fsutil

import "os"

// aioSync is not available here: DataSyncer calls Datasync.
type aioSync struct{}

func newAIOSync() *aioSync                   { return nil }
func (*aioSync) sync(*os.File) (bool, error) { return false, nil }
func (*aioSync) close() error                { return nil }
