package main

import (
	"fmt"
	"log"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
)

// The benchmark starts servers in their own process groups, which outlive
// it unless stopped. log.Fatal would skip main's defers, so every process
// and the temporary directory are registered here as well, and fatal
// errors go through fatalf, which stops them before exiting.
var exits struct {
	sync.Mutex
	fs []func()
}

// atExit registers f to run when the benchmark ends on a fatal error.
// Functions run last registered first; each must be safe to run after it
// already ran (stop functions are).
func atExit(f func()) {
	exits.Lock()
	exits.fs = append(exits.fs, f)
	exits.Unlock()
}

// fatalf prints the error, stops everything the benchmark started, and
// exits with status 1. When several goroutines fail at once (stopping the
// servers makes the running part fail too), the first stops everything
// and the others wait for it to exit, quietly.
func fatalf(format string, args ...any) {
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

var (
	stopping atomic.Bool
	exiting  sync.Once // never returns: its function exits
)

// fatal is fatalf of its arguments printed as log.Print does.
func fatal(args ...any) { fatalf("%s", fmt.Sprint(args...)) }

// stopOnSignal makes an interrupt (Ctrl-C) or a SIGTERM stop everything
// too: the servers are in process groups of their own, which a terminal's
// Ctrl-C does not reach.
func stopOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() { fatalf("%v: stopping the servers", <-ch) }()
}
