// Package proctest runs a server process that a test or benchmark starts
// (nginx, Caddy, redis-server): in its own process group, so stopping it
// ends its workers too, and counted as started only once it is known to
// be ours and listening. A port from internal/freeport was free a moment
// ago, but another test's server may have taken it since: a connection
// alone could reach that stranger while our process gives up on "address
// in use", so Start also waits for the process's pid file to name it.
// OnFreePorts retries a start on a new port; LogTail puts the end of a
// server's log into an error.
//
// It is for tests and benchmarks only, and knows nothing of any one
// server: its configuration, binary and health checks stay with the
// helper that runs it (nginxtest, caddytest, redistest).
package proctest
