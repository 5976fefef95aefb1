package admission

import (
	"testing"
	"time"
)

// Run with: go test -run '^$' -bench 'Pass|Ticket' -benchmem ./admission/

func benchVerifyPass(b *testing.B, key Key) {
	ring := mustRing(b, key, hsKey("old-hs"), edPublic("old-ed"))
	p := samplePass()
	tok := mustSign(b)(ring.SignPass(p))
	now := tokenT0.Add(time.Minute)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := ring.VerifyPass(tok, p.Event, p.Binding, now); err != nil {
			b.Fatal(err)
		}
	}
}

func benchSignPass(b *testing.B, key Key) {
	ring := mustRing(b, key)
	p := samplePass()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := ring.SignPass(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyPassHS256(b *testing.B) { benchVerifyPass(b, hsKey("k1")) }
func BenchmarkVerifyPassEdDSA(b *testing.B) { benchVerifyPass(b, edKey("k1")) }
func BenchmarkSignPassHS256(b *testing.B)   { benchSignPass(b, hsKey("k1")) }
func BenchmarkSignPassEdDSA(b *testing.B)   { benchSignPass(b, edKey("k1")) }

func BenchmarkVerifyTicketHS256(b *testing.B) {
	ring := mustRing(b, hsKey("k1"))
	tk := sampleTicket()
	tok := mustSign(b)(ring.SignTicket(tk))
	now := tokenT0.Add(time.Minute)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := ring.VerifyTicket(tok, tk.Event, tk.Binding, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyPassGarbage is what a flood of bad cookies costs.
func BenchmarkVerifyPassGarbage(b *testing.B) {
	ring := mustRing(b, hsKey("k1"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ring.VerifyPass("eyJhbGciOiJIUzI1NiJ9.e30.c2ln", "ev", "", tokenT0); err == nil {
			b.Fatal("garbage accepted")
		}
	}
}
