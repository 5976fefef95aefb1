// Package cleanup stops what a benchmark started when it ends on a fatal
// error or a signal. The benchmarks start servers and browsers in process
// groups of their own, which outlive the benchmark unless stopped, and
// log.Fatal would skip main's defers: so every stop function is
// registered with AtExit as well, and fatal errors go through Fatalf.
package cleanup
