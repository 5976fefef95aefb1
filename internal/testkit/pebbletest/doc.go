// Package pebbletest starts a real ACME CA for tests: Debian's pebble,
// Let's Encrypt's test server, on free loopback ports in a directory of
// its own, with pebble-challtestsrv as its DNS server answering every
// name with 127.0.0.1, so that pebble's validation authority connects to
// the server under test. Pebble's own HTTPS uses a certificate made here
// (Roots verifies it); the CA it issues from is created at each start
// and read back from its management API (Roots, Intermediates).
//
// A missing pebble fails the test rather than skipping it (`make deps`
// installs it). It is for tests only.
package pebbletest
