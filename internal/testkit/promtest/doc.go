// Package promtest runs a real Prometheus server (Debian's prometheus
// package, installed by `make deps`) for a test: on a free loopback port,
// with a configuration the test writes and its own storage directory, and
// asks it queries through its HTTP API. CheckRules runs promtool on a
// rules file.
//
// It is for tests only and knows nothing of waitroom's metrics.
package promtest
