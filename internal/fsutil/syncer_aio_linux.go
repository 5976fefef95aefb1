//go:build linux && (amd64 || arm64)

package fsutil

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// iocb is the kernel's struct iocb (include/uapi/linux/aio_abi.h) on a
// little-endian 64-bit machine, where aio_key comes before aio_rw_flags.
// An fdsync request sets only the named fields; the blank ones keep the
// layout, and since Go cannot write a blank field they stay zero.
type iocb struct {
	_      uint64 // aio_data
	_      uint32 // aio_key
	_      int32  // aio_rw_flags
	opcode uint16 // aio_lio_opcode
	_      int16  // aio_reqprio
	fildes uint32 // aio_fildes
	_      uint64 // aio_buf
	_      uint64 // aio_nbytes
	_      int64  // aio_offset
	_      uint64 // aio_reserved2
	flags  uint32 // aio_flags
	resfd  uint32 // aio_resfd
}

// ioEvent is the kernel's struct io_event.
type ioEvent struct {
	data, obj uint64
	res, res2 int64
}

// The layouts must match the kernel's byte for byte.
var (
	_ [64]byte = [unsafe.Sizeof(iocb{})]byte{}
	_ [32]byte = [unsafe.Sizeof(ioEvent{})]byte{}
)

const (
	iocbCmdFdsync = 3      // IOCB_CMD_FDSYNC
	iocbFlagResfd = 1 << 0 // IOCB_FLAG_RESFD: signal resfd (an eventfd) on completion
)

// aioSync is one AIO context with room for one request, and the eventfd
// its completions are signalled on.
type aioSync struct {
	ctx    uint64   // aio_context_t
	ev     *os.File // the eventfd, non-blocking, in the network poller
	evfd   int
	cb     iocb
	cbs    [1]*iocb
	events [1]ioEvent
	buf    [8]byte
	broken error // a wait that failed with the request in flight: nothing more
}

// newAIOSync sets up an AIO context and its eventfd, or returns nil when
// the kernel does not allow it.
func newAIOSync() *aioSync {
	a := &aioSync{}
	if _, _, e := unix.Syscall(unix.SYS_IO_SETUP, 1, uintptr(unsafe.Pointer(&a.ctx)), 0); e != 0 {
		return nil
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Syscall(unix.SYS_IO_DESTROY, uintptr(a.ctx), 0, 0)
		return nil
	}
	// A non-blocking descriptor joins the network poller: a Read that
	// would block parks the goroutine and frees its P.
	a.ev, a.evfd = os.NewFile(uintptr(efd), "fsutil-aio-eventfd"), efd
	a.cbs[0] = &a.cb
	return a
}

// sync submits an fdatasync of f and waits for it. supported is false
// when the kernel refuses the request kind for this file, so the caller
// falls back to fdatasync(2) (which then reports the same refusal if the
// file cannot be synced at all).
func (a *aioSync) sync(f *os.File) (supported bool, err error) {
	if a.broken != nil {
		return true, a.broken
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return true, err
	}
	var errno syscall.Errno
	// Control holds the descriptor open while the request is submitted;
	// after that the kernel holds its own reference to the file.
	if err := rc.Control(func(fd uintptr) {
		a.cb = iocb{opcode: iocbCmdFdsync, fildes: uint32(fd), flags: iocbFlagResfd, resfd: uint32(a.evfd)}
		_, _, errno = unix.Syscall(unix.SYS_IO_SUBMIT, uintptr(a.ctx), 1, uintptr(unsafe.Pointer(&a.cbs[0])))
	}); err != nil {
		return true, err
	}
	switch errno {
	case 0:
	case unix.EINVAL, unix.ENOSYS, unix.EOPNOTSUPP, unix.EPERM:
		return false, nil
	default:
		return true, fmt.Errorf("fsutil: submitting fdatasync: %w", errno)
	}
	// Park until the kernel signals the completion.
	if _, err := a.ev.Read(a.buf[:]); err != nil {
		a.broken = fmt.Errorf("fsutil: waiting for fdatasync: %w", err)
		return true, a.broken
	}
	n, _, errno := unix.Syscall6(unix.SYS_IO_GETEVENTS, uintptr(a.ctx), 1, 1,
		uintptr(unsafe.Pointer(&a.events[0])), 0, 0)
	switch {
	case errno != 0:
		a.broken = fmt.Errorf("fsutil: reading fdatasync's completion: %w", errno)
		return true, a.broken
	case n != 1:
		a.broken = errors.New("fsutil: fdatasync's completion is missing")
		return true, a.broken
	case a.events[0].res < 0:
		return true, fmt.Errorf("fsutil: fdatasync: %w", syscall.Errno(-a.events[0].res))
	}
	return true, nil
}

// close waits for a request in flight (io_destroy does) and releases the
// context and the eventfd.
func (a *aioSync) close() error {
	_, _, e := unix.Syscall(unix.SYS_IO_DESTROY, uintptr(a.ctx), 0, 0)
	err := a.ev.Close()
	if e != 0 {
		return fmt.Errorf("fsutil: io_destroy: %w", e)
	}
	return err
}
