// Package chaos is the flash crowd of issue 17 run end to end with
// faults: three `waitroom serve` replicas and a seat-hold sidecar on a
// local Redis Cluster of three masters with a replica each, a counting
// origin (waitroom-load origin), and the crowd of `waitroom-load http`
// spread over the replicas. During the sale it kills -9 one waitroom
// replica, then the Redis master that holds the event, then restarts
// both. It asserts the invariants — no acknowledged join missing from its
// draw, no seat sold twice, the origin never holding more visitors at once
// than max_active plus one tick's admissions — and logs the figures:
// joins/s, polls/s, admitted/min, the longest gap in admissions and the
// share of visitors admitted before their shown eta_high. It asserts no
// durations.
//
// The package is its test: `go test ./bench/chaos` runs the short
// scenario (a small crowd, well under a minute of sale), part of
// `make test`; `make chaos` runs the long one (go test -run TestChaos
// -chaos.long -v ./bench/chaos). It is not a benchmark of throughput
// (bench/proxy is) nor of the controller (bench/controller is).
package chaos
