// Package freeport hands out loopback TCP ports for servers that a test or
// benchmark starts as separate processes (redis-server, nginx, the
// sidecar), which must be told their port rather than pick one.
//
// A port is free when handed out, not when the server binds it: callers
// still check that what answers on it is their own process. Within one
// process a port is never handed out twice, so concurrent tests of one
// package do not race each other for it.
package freeport
