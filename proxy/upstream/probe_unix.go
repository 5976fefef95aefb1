//go:build unix

package upstream

import (
	"errors"
	"net"
	"syscall"
)

// peekAlive does one non-blocking read on c's socket: EAGAIN means the
// peer has sent nothing, so the connection is still usable.
func peekAlive(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true // not a socket (a pipe in tests): nothing to probe
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	live := false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, err := syscall.Read(int(fd), buf[:])
		live = n < 0 && errors.Is(err, syscall.EAGAIN)
		return true // never wait
	})
	return err == nil && live
}
