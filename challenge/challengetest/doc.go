// Package challengetest is the conformance suite for challenge.ReplayGuard:
// the behaviours every replay guard must show, run by each guard's tests
// with Run, including a linearizability check (a porcupine model of a
// set of redeemed ids) under concurrent clients.
//
// It is for tests only; nothing in a waitroom binary imports it.
package challengetest
