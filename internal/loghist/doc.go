// Package loghist is the log-linear latency histogram of proxy/meter:
// which bucket a latency falls in, the value a bucket is reported as, and
// percentiles and means over (weighted) bucket counts. It holds no
// counters itself: the meter keeps atomic ones, and admission/sim, which
// models the meter in simulated time, keeps plain ones over the same
// buckets, so that both report the very same figures.
//
// Everything here is pure functions and constants, safe for concurrent
// use.
package loghist
