// Package haproxytest starts a real HAProxy on a free loopback port for
// tests: the deployment behind HAProxy (PROXY protocol v2 to waitroom, the
// HTTP check of /readyz, TLS and HTTP/2 to visitors). Each server runs in
// its own directory (configuration, log) in the foreground (-db), with
// the configuration the test gives, its listener on the port chosen here,
// so it never touches a system HAProxy. A missing haproxy fails the test
// rather than skipping it.
//
// It is for tests only.
package haproxytest
