package freeport

import (
	"errors"
	"net"
	"sync"
)

var (
	mu     sync.Mutex
	handed = map[int]bool{}
)

// Get returns a TCP port on 127.0.0.1 that was free a moment ago and that
// this process has not handed out before.
func Get() (int, error) {
	mu.Lock()
	defer mu.Unlock()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if !handed[port] {
			handed[port] = true
			return port, nil
		}
	}
	return 0, errors.New("freeport: the kernel keeps offering ports already handed out")
}
