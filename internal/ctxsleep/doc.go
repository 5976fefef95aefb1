// Package ctxsleep waits a while unless a context ends first: the one
// copy of the timer-and-select that retries, crowds and load generators
// each wrote for themselves.
//
// It is not a clock abstraction: tests that need simulated time use
// internal/testkit/fakeclock.
package ctxsleep
