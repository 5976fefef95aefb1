// Package bench holds whole-system benchmarks that run waitroom side by side
// with its competitors (redis-benchmark, wrk against the real binary) in one
// run and print ratios. Each benchmark is a main package in a subdirectory:
//
//	go run ./bench/inventory -bin bin/waitroom   (or: make bench-inventory)
//	go run ./bench/proxy -bin bin/waitroom       (or: make bench-proxy)
//	go run ./bench/controller -bin bin/waitroom  (or: make bench-controller)
//	go run ./bench/bots -bin bin/waitroom        (or: make bench-bots)
//
// make bench runs the inventory, proxy, challenge and bots benchmarks.
//
// Micro-benchmarks of single functions live beside the code in
// *_bench_test.go files instead.
package bench
