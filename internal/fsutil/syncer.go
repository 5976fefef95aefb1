package fsutil

import "os"

// A DataSyncer makes the data written to a file durable, like Datasync,
// for a committer goroutine that syncs again and again (a journal's group
// commit).
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
// A DataSyncer is not safe for concurrent use: one goroutine syncs at a
// time, any file. Setting one up costs about 0.1 ms and closing it tens of
// milliseconds (the kernel retires the context), so a committer that comes
// and goes takes one from a SyncerPool instead of making its own.
type DataSyncer struct {
	aio *aioSync // nil: plain Datasync
}

// NewDataSyncer returns a DataSyncer. Close it when done.
func NewDataSyncer() *DataSyncer {
	return &DataSyncer{aio: newAIOSync()}
}

// Sync makes every write to f completed before the call durable, as
// fdatasync does, and returns its error.
func (s *DataSyncer) Sync(f *os.File) error {
	if s.aio != nil {
		supported, err := s.aio.sync(f)
		if supported {
			return err
		}
		s.aio.close()
		s.aio = nil
	}
	return Datasync(f)
}

// Async reports whether syncs are submitted asynchronously (and the
// calling goroutine parks while the disk works) rather than through a
// blocking fdatasync.
func (s *DataSyncer) Async() bool { return s.aio != nil }

// Close releases the kernel resources of asynchronous syncs, waiting for
// one in flight.
func (s *DataSyncer) Close() error {
	if s.aio == nil {
		return nil
	}
	err := s.aio.close()
	s.aio = nil
	return err
}

// A SyncerPool keeps up to a fixed number of idle DataSyncers for
// committers that start and stop (one per busy file), so that setting up
// and retiring kernel contexts stays off their path. It is safe for
// concurrent use.
type SyncerPool struct {
	idle chan *DataSyncer
}

// NewSyncerPool returns a pool that keeps at most idle syncers.
func NewSyncerPool(idle int) *SyncerPool {
	return &SyncerPool{idle: make(chan *DataSyncer, idle)}
}

// Get returns an idle syncer, or a new one.
func (p *SyncerPool) Get() *DataSyncer {
	select {
	case s := <-p.idle:
		return s
	default:
		return NewDataSyncer()
	}
}

// Put gives back a syncer that is no longer syncing; one beyond the pool's
// size is closed.
func (p *SyncerPool) Put(s *DataSyncer) {
	select {
	case p.idle <- s:
	default:
		s.Close()
	}
}

// Close closes the idle syncers. Syncers given back later are kept until
// the pool is full, then closed by Put.
func (p *SyncerPool) Close() error {
	var first error
	for {
		select {
		case s := <-p.idle:
			if err := s.Close(); err != nil && first == nil {
				first = err
			}
		default:
			return first
		}
	}
}
