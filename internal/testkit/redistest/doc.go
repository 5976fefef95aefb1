// Package redistest starts real redis-server processes (single nodes and
// small clusters) on free loopback ports for tests, and can kill and
// restart them for crash tests: a restart that finds the AOF torn by the
// kill repairs it with redis-check-aof --fix, as an operator would, and
// TearLastBlock tears one on purpose. It never uses a Redis someone else
// started. A missing redis-server fails the test rather than skipping it.
//
// It is for tests only.
package redistest
