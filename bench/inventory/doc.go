// Command inventory benchmarks the seat-hold sidecar against its
// competitors in one run on one machine:
//
//  1. Throughput: single-seat holds per second through the sidecar's HTTP
//     API (embedded store, and Redis store) driven by wrk, side by side
//     with redis-benchmark running an equivalent bare hold script with
//     EVALSHA against the same Redis. Several rounds, order rotated;
//     medians and ratios are printed.
//  2. Hot seats: 1,000 concurrent clients fighting over 100 seats through
//     the API; p50/p99 hold latency for each store.
//  3. Memory of a 100,000-seat event, sold out in 4-seat holds: Redis
//     used_memory growth and the embedded store's heap growth.
//
// Run it with `make bench-inventory` (which builds bin/waitroom and installs
// redis-server, redis-benchmark and wrk when missing).
package main
