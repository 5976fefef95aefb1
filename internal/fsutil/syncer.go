package fsutil

import "os"

// A DataSyncer makes the data written to one file durable, like Datasync,
// for a committer goroutine that syncs the same file again and again (a
// journal's group commit).
//
// It exists because of how the Go scheduler treats a blocking system call.
// A goroutine in fdatasync(2) keeps its P until the runtime's sysmon
// thread notices and hands the P on, and in a busy process sysmon looks
// only every few milliseconds (up to 10). With GOMAXPROCS=1, which is what
// Go picks on a one-CPU machine or container, nothing else runs meanwhile:
// every request of the process waits for the disk. Measured with the
// proxy on one CPU and 64 connections of joins, that was 5,300 joins/s
// with a 13 ms median. A second P is no way out: two threads on one CPU
// make the kernel time-slice them, and the proxy's p99 went from 2 ms to
// 24 ms.
//
// On Linux (amd64, arm64) a DataSyncer therefore submits the sync through
// the kernel's native asynchronous I/O (io_submit with IOCB_CMD_FDSYNC,
// which a kernel worker carries out as fdatasync) and waits for its
// completion on an eventfd through the network poller: the goroutine
// parks, and the P serves requests while the disk works. Where that is not
// available (an old kernel, a seccomp profile without io_setup, a file
// system without fsync, another platform) it calls fdatasync like
// Datasync, and Async reports false.
//
// A DataSyncer is not safe for concurrent use: one goroutine syncs.
type DataSyncer struct {
	f   *os.File
	aio *aioSync // nil: plain Datasync
}

// NewDataSyncer returns a DataSyncer for f. It does not own f: close the
// DataSyncer, then f.
func NewDataSyncer(f *os.File) *DataSyncer {
	return &DataSyncer{f: f, aio: newAIOSync()}
}

// Sync makes every write to the file completed before the call durable,
// as fdatasync does, and returns its error.
func (s *DataSyncer) Sync() error {
	if s.aio != nil {
		supported, err := s.aio.sync(s.f)
		if supported {
			return err
		}
		s.aio.close()
		s.aio = nil
	}
	return Datasync(s.f)
}

// Async reports whether syncs are submitted asynchronously (and the
// calling goroutine parks while the disk works) rather than through a
// blocking fdatasync.
func (s *DataSyncer) Async() bool { return s.aio != nil }

// Close releases the kernel resources of asynchronous syncs; it does not
// close the file.
func (s *DataSyncer) Close() error {
	if s.aio == nil {
		return nil
	}
	err := s.aio.close()
	s.aio = nil
	return err
}
