// Package procstat reads processes' CPU time from /proc, for the benchmarks
// that charge each contender with the CPU its own processes used: a process
// group (a server started with Setpgid) or a process tree (a browser and
// its helpers). Linux only; clock ticks are taken as 1/100 s.
package procstat
