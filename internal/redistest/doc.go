// Package redistest starts real redis-server processes (single nodes and
// small clusters) on free loopback ports for tests, and can kill and
// restart them for crash tests. It never uses a Redis someone else
// started. A missing redis-server fails the test rather than skipping it.
//
// It is for tests only.
package redistest
