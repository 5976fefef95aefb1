package proxy

import (
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/challenge"
)

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

// BenchmarkStatusWaiting is one status poll of a drawn ticket waiting
// while the sale runs, as bench/proxy polls it.
func BenchmarkStatusWaiting(b *testing.B) {
	run := waitingPoll(b)
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
}

// BenchmarkBareProxiedRequest is BenchmarkProxiedRequest's request through
// a bare fasthttp.HostClient to the same kind of origin: the floor the
// gate's own work is measured against (compare the two ns/op).
func BenchmarkBareProxiedRequest(b *testing.B) {
	o := startOrigin(b)
	o.silent.Store(true)
	hc := &fasthttp.HostClient{Addr: o.addr, MaxConns: 512, ReadBufferSize: 32 << 10}
	tmpl := wireRequest(b, "GET /show/seats?x=1 HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: Mozilla/5.0 alloc\r\n"+
		"Accept: text/html\r\nCookie: theme=dark; wr_pass_show=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef; lang=en\r\n")
	ctx := requestCtx(tmpl)
	b.ReportAllocs()
	for b.Loop() {
		tmpl.CopyTo(&ctx.Request)
		ctx.Response.Reset()
		if err := hc.Do(&ctx.Request, &ctx.Response); err != nil || ctx.Response.StatusCode() != 200 {
			b.Fatalf("got %d %v", ctx.Response.StatusCode(), err)
		}
	}
}

// BenchmarkJoin is one join of a new visitor through Handle: the body
// parsed, a visitor minted and recorded in the (embedded, journaled)
// store, a ticket signed and set, the status JSON.
func BenchmarkJoin(b *testing.B) {
	benchmarkJoin(b, false)
}

// BenchmarkJoinPoW is BenchmarkJoin with the bot defence on: each join
// carries a solved challenge of production's puzzle count (2 bits, so
// that solving them before the timer is cheap; verifying costs the same
// whatever the bits), verified, rescored and redeemed. Compare its ns/op
// with BenchmarkJoin's: the difference is what the defence costs a join.
func BenchmarkJoinPoW(b *testing.B) {
	benchmarkJoin(b, true)
}

func benchmarkJoin(b *testing.B, pow bool) {
	var opts []rigOption
	if pow {
		// As bench/proxy runs it: no risk signals, every challenge the
		// light work.
		sc, err := challenge.NewScorer(nil, challenge.ScorerOptions{})
		if err != nil {
			b.Fatal(err)
		}
		opts = append(opts, withDefence(b, challenge.Bands{HeavyPoW: 70, Block: 95}), func(o *Options) {
			o.Defence.Scorer = sc
			for i := range o.Events {
				o.Events[i].Challenge.Light = Work{Bits: 2, Puzzles: challenge.DefaultPuzzles}
			}
		})
	}
	r := newRig(b, opts...)
	head := "Host: shop.example\r\nUser-Agent: " + chromeUA + "\r\n"
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = []byte(`{"event":"show"}`)
		if pow {
			bodies[i] = joinBodyPoW(b, r, head)
		}
	}
	tmpl := wireRequest(b, "POST /_wr/api/join HTTP/1.1\r\n"+head+"Content-Type: application/json\r\n")
	ctx := requestCtx(tmpl)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		tmpl.CopyTo(&ctx.Request)
		ctx.Request.SetBodyRaw(bodies[i])
		ctx.Response.Reset()
		r.p.Handle(ctx)
		if ctx.Response.StatusCode() != 200 {
			b.Fatalf("join: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
}

// joinBodyPoW fetches a challenge through Handle with the request head
// head and returns the join body carrying its solution.
func joinBodyPoW(b *testing.B, r *rig, head string) []byte {
	ctx := requestCtx(wireRequest(b, "GET /_wr/api/challenge?event=show HTTP/1.1\r\n"+head))
	r.p.Handle(ctx)
	var a challengeAnswer
	if err := json.Unmarshal(ctx.Response.Body(), &a); err != nil || a.PoW == nil {
		b.Fatalf("challenge: %d %s %v", ctx.Response.StatusCode(), ctx.Response.Body(), err)
	}
	var seed [16]byte
	if _, err := hex.Decode(seed[:], []byte(a.PoW.Seed)); err != nil {
		b.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{"event": "show",
		"pow": map[string]any{"token": a.PoW.Token, "nonces": challenge.Solve(seed, a.PoW.Bits, a.PoW.Puzzles)}})
	if err != nil {
		b.Fatal(err)
	}
	return body
}
