package cleanup

import (
	"fmt"
	"log"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
)

var exits struct {
	sync.Mutex
	fs []func()
}

var (
	stopping atomic.Bool
	exiting  sync.Once // never returns: its function exits
)

// AtExit registers f to run when the benchmark ends on a fatal error.
// Functions run last registered first; each must be safe to run after it
// already ran (stop functions are).
func AtExit(f func()) {
	exits.Lock()
	exits.fs = append(exits.fs, f)
	exits.Unlock()
}

// Fatalf prints the error, runs the registered functions, and exits with
// status 1. When several goroutines fail at once (stopping the servers
// makes the running part fail too), the first stops everything and the
// others wait for it to exit, quietly.
func Fatalf(format string, args ...any) {
	if !stopping.Swap(true) {
		log.Printf(format, args...)
	}
	exiting.Do(func() {
		exits.Lock()
		fs := exits.fs
		exits.Unlock()
		for i := len(fs) - 1; i >= 0; i-- {
			fs[i]()
		}
		os.Exit(1)
	})
}

// Fatal is Fatalf of its arguments printed as log.Print does.
func Fatal(args ...any) { Fatalf("%s", fmt.Sprint(args...)) }

// StopOnSignal makes an interrupt (Ctrl-C) or a SIGTERM stop everything
// too: processes in groups of their own are not reached by a terminal's
// Ctrl-C.
func StopOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() { Fatalf("%v: stopping the servers", <-ch) }()
}
