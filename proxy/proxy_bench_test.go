package proxy

import "testing"

// BenchmarkProxiedRequest is one admitted request through the gate to a
// real fasthttp origin on loopback (the origin's work included): pass
// lookup, binding, revocation check, header rewriting, forwarding,
// measuring.
func BenchmarkProxiedRequest(b *testing.B) {
	run := proxiedRequest(b)
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
}

// BenchmarkStatus is one status poll of a drawn ticket: cached ticket,
// engine counters, JSON.
func BenchmarkStatus(b *testing.B) {
	run := statusPoll(b)
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
}
