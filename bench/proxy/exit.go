package main

import "github.com/waitroom/waitroom/bench/internal/cleanup"

// The benchmark's exits go through bench/internal/cleanup, which stops
// every process it started (see there).
var (
	atExit       = cleanup.AtExit
	fatalf       = cleanup.Fatalf
	fatal        = cleanup.Fatal
	stopOnSignal = cleanup.StopOnSignal
)
