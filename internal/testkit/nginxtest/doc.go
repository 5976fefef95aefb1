// Package nginxtest starts a real nginx on a free loopback port for tests
// and benchmarks: the auth_request deployment's integration test and the
// proxy benchmark's competitor. Each server runs in its own directory
// (configuration, pid, logs, temporary files) in the foreground, so it
// never touches a system nginx. A missing nginx fails the test rather
// than skipping it.
//
// It is for tests and benchmarks only.
package nginxtest
