// Package caddytest starts a real Caddy on a free loopback port for tests:
// the forward_auth deployment's attack test. Each server runs in its own
// directory (Caddyfile, pid file, log, Caddy's data and config folders) in
// the foreground, with the admin endpoint, automatic HTTPS and HTTP/3 off
// and its listener bound to 127.0.0.1, so it never touches a system Caddy
// or the network. A missing caddy fails the test rather than skipping it.
//
// It is for tests only.
package caddytest
