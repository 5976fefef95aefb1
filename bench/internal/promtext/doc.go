// Package promtext reads samples out of Prometheus text exposition, which
// the benchmarks fetch from waitroom's admin /metrics to check what the
// server saw (decisions, joins, refusals) beside what the client saw.
package promtext
