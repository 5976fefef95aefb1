package app

import (
	"log/slog"
	"runtime"
)

// minProcsForJournal is the fewest Ps a process with an embedded store
// runs with.
//
// An embedded store acknowledges a write after its committer goroutine's
// fdatasync returns. A goroutine in a blocking system call keeps its P
// until the runtime's sysmon thread takes it back, and in a busy process
// sysmon naps for up to 10 ms between looks. With GOMAXPROCS=1 — the
// default in a one-CPU container since Go 1.25 — no other goroutine, and
// so no request, runs meanwhile: measured here with 64 connections of
// joins on one CPU, 5,300 joins/s with a 13 ms median against 21,000/s
// and 2.8 ms with two Ps. The second P only lets the network go on while
// the disk works; the process still gets the CPUs it was given.
const minProcsForJournal = 2

// ensureProcsForJournal raises GOMAXPROCS to minProcsForJournal when it is
// lower, and says so. It is called where an embedded store is opened.
func ensureProcsForJournal(log *slog.Logger, store string) {
	if n := runtime.GOMAXPROCS(0); n < minProcsForJournal {
		runtime.GOMAXPROCS(minProcsForJournal)
		log.Info("GOMAXPROCS raised so that the journal's fsync does not stall requests",
			"store", store, "from", n, "to", minProcsForJournal)
	}
}
