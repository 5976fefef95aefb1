package static_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math/bits"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/internal/testkit/browsertest"
	"github.com/waitroom/waitroom/static"
)

// powEvent is the event of the pages the solver's tests make.
const powEvent = "pow"

// powServer serves the solver's scripts and modules from pages under
// /_wr/static/ and a page that loads pow.js: /pow with the room page's
// CSP (powEvent's), /pow-nowasm with the other pages' (no WebAssembly),
// /pow-strict with a policy that refuses workers and WebAssembly.
func powServer(t *testing.T, pages *static.Pages) *httptest.Server {
	solver, _ := pages.PowAssets()
	page := `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>pow</title>` +
		`<script src="/_wr/static/` + solver + `"></script></head><body><p>pow</p></body></html>`
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_wr/static/{name}", func(w http.ResponseWriter, r *http.Request) {
		body, ct, ok := pages.Asset([]byte(r.PathValue("name")))
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", ct)
		w.Write(body)
	})
	for path, csp := range map[string]string{
		"/pow":        pages.RoomCSP(powEvent),
		"/pow-nowasm": pages.CSP(),
		"/pow-strict": "default-src 'none'; script-src 'self'; worker-src 'none'",
	} {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", static.ContentTypeHTML)
			w.Header().Set("Content-Security-Policy", csp)
			w.Write([]byte(page))
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// challenge is the server's challenge JSON.
type challenge struct {
	Token     string `json:"token"`
	Seed      string `json:"seed"`
	Bits      int    `json:"bits"`
	Puzzles   int    `json:"puzzles"`
	ExpiresAt string `json:"expires_at"`
}

func newChallenge(t *testing.T, bits, puzzles int, ttl time.Duration) challenge {
	seed := make([]byte, 16)
	rand.Read(seed)
	return challenge{Token: "t", Seed: hex.EncodeToString(seed), Bits: bits, Puzzles: puzzles,
		ExpiresAt: time.Now().Add(ttl).UTC().Format(time.RFC3339)}
}

// powResult is what solveIn reports of one waitroomSolve call.
type powResult struct {
	Nonces     []uint64  `json:"nonces"`
	Code       string    `json:"code"`
	Message    string    `json:"message"`
	Progress   []float64 `json:"progress"`
	MainThread bool      `json:"main_thread"`
	Engine     string    `json:"engine"` // onProgress's info.engine, the last time
	Millis     float64   `json:"ms"`
}

// solveIn runs waitroomSolve(c, …, opts) in the tab (opts is a JavaScript
// expression, before is run first) and waits for it to settle.
func solveIn(t *testing.T, ctx context.Context, c challenge, opts, before string) powResult {
	t.Helper()
	cj, _ := json.Marshal(c)
	expr := `(function () {
		` + before + `
		var progress = [], engine = "";
		var t0 = performance.now();
		function done(r) {
			r.progress = progress;
			r.engine = engine;
			r.main_thread = !!window.waitroomPow;
			r.ms = performance.now() - t0;
			return r;
		}
		return waitroomSolve(` + string(cj) + `, function (f, info) {
			if (typeof info.solved !== "number" || info.puzzles !== ` + string(mustJSON(c.Puzzles)) + `) throw new Error("bad info");
			progress.push(f);
			engine = info.engine;
		}, ` + opts + `).then(function (nonces) {
			return done({nonces: nonces});
		}, function (err) {
			return done({code: String(err.code), message: String(err.message)});
		});
	})()`
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	r, err := chromedp.Run(tctx, chromedp.Evaluate[powResult](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("waitroomSolve: %v", err)
	}
	return r
}

// powEngines are the solver's engines, fastest first.
var powEngines = []string{"simd", "scalar", "js"}

// evalAwait evaluates expr in the tab and awaits the promise it returns.
func evalAwait[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	r, err := chromedp.Run(tctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %.200s: %v", expr, err)
	}
	return r
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// powDigest is SHA-256(seed || i || n), the block a nonce n solves.
func powDigest(seed []byte, i uint32, n uint64) [32]byte {
	var msg [28]byte
	copy(msg[:], seed)
	binary.BigEndian.PutUint32(msg[16:], i)
	binary.BigEndian.PutUint64(msg[20:], n)
	return sha256.Sum256(msg[:])
}

func leadingZeros(sum [32]byte) int {
	n := 0
	for _, b := range sum {
		n += bits.LeadingZeros8(b)
		if b != 0 {
			break
		}
	}
	return n
}

// firstNonce is the smallest nonce that solves sub-puzzle i.
func firstNonce(seed []byte, i uint32, b int) uint64 { return firstNonceFrom(seed, i, b, 0) }

// firstNonceFrom is the smallest nonce from start on that solves
// sub-puzzle i.
func firstNonceFrom(seed []byte, i uint32, b int, start uint64) uint64 {
	for n := start; ; n++ {
		if leadingZeros(powDigest(seed, i, n)) >= b {
			return n
		}
	}
}

// checkSolved verifies every nonce with crypto/sha256, and the progress
// reports.
func checkSolved(t *testing.T, c challenge, r powResult) {
	t.Helper()
	if r.Code != "" {
		t.Fatalf("waitroomSolve failed: %s: %s", r.Code, r.Message)
	}
	if len(r.Nonces) != c.Puzzles {
		t.Fatalf("%d nonces; want %d", len(r.Nonces), c.Puzzles)
	}
	seed, _ := hex.DecodeString(c.Seed)
	for i, n := range r.Nonces {
		if n >= 1<<53 {
			t.Errorf("nonce %d = %d: not below 2^53", i, n)
		}
		if z := leadingZeros(powDigest(seed, uint32(i), n)); z < c.Bits {
			t.Errorf("nonce %d = %d: %d leading zero bits; want %d", i, n, z, c.Bits)
		}
	}
	if len(r.Progress) < 2 || r.Progress[len(r.Progress)-1] != 1 {
		t.Errorf("progress %v does not end at 1", r.Progress)
	}
	for i := 1; i < len(r.Progress); i++ {
		if r.Progress[i] < r.Progress[i-1] || r.Progress[i] > 1 {
			t.Errorf("progress goes from %v to %v", r.Progress[i-1], r.Progress[i])
		}
	}
	t.Logf("%d sub-puzzles of %d bits in %.0f ms, %d progress reports, main thread: %v", c.Puzzles, c.Bits, r.Millis, len(r.Progress), r.MainThread)
}

// checkFirst checks that every nonce is the smallest solution, as a
// single search from 0 finds.
func checkFirst(t *testing.T, c challenge, r powResult) {
	t.Helper()
	seed, _ := hex.DecodeString(c.Seed)
	for i, n := range r.Nonces {
		if want := firstNonce(seed, uint32(i), c.Bits); n != want {
			t.Errorf("nonce %d = %d; the first solution is %d", i, n, want)
		}
	}
}

func TestPowInChromium(t *testing.T) {
	pages, err := static.New([]static.PageConfig{{Event: powEvent}})
	if err != nil {
		t.Fatal(err)
	}
	_, worker := pages.PowAssets()
	workerURL := string(mustJSON("/_wr/static/" + worker))
	srv := powServer(t, pages)
	b := browsertest.Start(t)
	open := func(t *testing.T, path string) context.Context {
		ctx := b.NewTab(t)
		browsertest.Navigate(t, ctx, srv.URL+path)
		browsertest.WaitFor(t, ctx, "pow.js", `typeof window.waitroomSolve === "function"`)
		return ctx
	}

	t.Run("workers", func(t *testing.T) {
		ctx := open(t, "/pow")
		c := newChallenge(t, 8, 16, time.Minute)
		r := solveIn(t, ctx, c, workerURL, "")
		checkSolved(t, c, r)
		if r.MainThread {
			t.Error("the search fell back to the main thread; the CSP or the worker failed")
		}
		if r.Engine != "simd" {
			t.Errorf("the workers hashed with %q; want simd", r.Engine)
		}
	})

	t.Run("one worker finds the first solutions", func(t *testing.T) {
		ctx := open(t, "/pow")
		c := newChallenge(t, 10, 6, time.Minute)
		r := solveIn(t, ctx, c, `{worker: `+workerURL+`, threads: 1}`, "")
		checkSolved(t, c, r)
		checkFirst(t, c, r)
	})

	t.Run("helpers on the last sub-puzzle", func(t *testing.T) {
		// Three workers on one sub-puzzle: two start at 2^40 and 2^41,
		// and the first to find a nonce calls the others off.
		ctx := open(t, "/pow")
		for range 4 {
			c := newChallenge(t, 14, 1, time.Minute)
			checkSolved(t, c, solveIn(t, ctx, c, `{worker: `+workerURL+`, threads: 3}`, ""))
		}
	})

	t.Run("helpers called off", func(t *testing.T) {
		// Three workers, two sub-puzzles: the third helps with one and,
		// when that is solved, is called off and helps with the other.
		ctx := open(t, "/pow")
		for range 4 {
			c := newChallenge(t, 13, 2, time.Minute)
			checkSolved(t, c, solveIn(t, ctx, c, `{worker: `+workerURL+`, threads: 3}`, ""))
		}
	})

	t.Run("worker protocol", func(t *testing.T) {
		// A cancel reaches a worker in the middle of a search it would
		// never finish (64 bits), and the next work runs.
		ctx := open(t, "/pow")
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]map[string]any](`new Promise(function (resolve) {
			var w = new Worker(`+workerURL+`), seen = [];
			var seed = "00112233445566778899aabbccddeeff";
			w.onmessage = function (ev) {
				seen.push(ev.data);
				if (ev.data.type === "progress" && ev.data.index === 7 && seen.length === 3) {
					w.postMessage({cancel: [7]});
					w.postMessage({seed: seed, bits: 4, puzzles: [8, 9], start: 5});
				}
				if (ev.data.type === "solved" && ev.data.index === 9 || ev.data.type === "error") {
					w.terminate();
					resolve(seen.filter(function (m) { return m.type !== "progress" || m.index !== 7; }));
				}
			};
			w.postMessage({seed: seed, bits: 64, puzzles: [7]});
		})`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		seed, _ := hex.DecodeString("00112233445566778899aabbccddeeff")
		if len(got) != 2 || got[0]["type"] != "solved" || got[0]["index"] != 8.0 || got[1]["index"] != 9.0 {
			t.Fatalf("messages after the cancel: %v; want solved 8, solved 9", got)
		}
		for _, m := range got {
			i, n := uint32(m["index"].(float64)), uint64(m["nonce"].(float64))
			if want := firstNonceFrom(seed, i, 4, 5); n != want || m["hashes"] != float64(n-5+1) {
				t.Errorf("sub-puzzle %d: nonce %d after %v hashes; want %d after %d", i, n, m["hashes"], want, want-5+1)
			}
		}
	})

	t.Run("nonces across the halves", func(t *testing.T) {
		// The search keeps a nonce in two 32-bit halves: start just below
		// a carry into the high half, and near 2^53, where it must stop.
		// Each engine, in the page's main thread; the WebAssembly ones
		// search in batches that end at a carry, in lanes of four (simd)
		// whose extra lanes past a batch's end must not count.
		ctx := open(t, "/pow")
		browsertest.Eval[bool](t, ctx, `window.Worker = undefined, true`)
		load := solveIn(t, ctx, newChallenge(t, 0, 1, time.Minute), workerURL, "")
		if !load.MainThread {
			t.Fatal("pow-worker.js not loaded as a script")
		}
		for _, engine := range powEngines {
			t.Run(engine, func(t *testing.T) {
				if got := evalAwait[string](t, ctx, `waitroomPow.load(`+string(mustJSON(engine))+`)`); got != engine {
					t.Fatalf("waitroomPow.load(%q) = %q", engine, got)
				}
				seed := make([]byte, 16)
				rand.Read(seed)
				for _, c := range []struct {
					start uint64
					bits  int
					step  int // nonces per run call
				}{
					{1<<32 - 40, 7, 1 << 20}, {3<<32 - 7, 7, 1 << 20}, {1<<53 - 1<<32 - 9, 7, 1 << 20}, {1<<52 + 1<<32 - 1, 7, 1 << 20},
					{0, 0, 1}, {5, 1, 1}, {1<<32 - 1, 2, 1 << 20}, {1<<32 - 2, 2, 1 << 20}, {1<<32 - 3, 3, 1 << 20},
					{1<<32 - 5, 6, 3}, {12345, 9, 5}, {1<<32 - 1000, 10, 7},
				} {
					for _, i := range []uint32{0, 1<<32 - 1} {
						got := browsertest.Eval[[]float64](t, ctx, `(function () {
							var p = waitroomPow.puzzle(`+string(mustJSON(hex.EncodeToString(seed)))+`, `+string(mustJSON(i))+`, `+string(mustJSON(c.bits))+`, `+string(mustJSON(c.start))+`, `+string(mustJSON(engine))+`);
							for (var n = 0; n < (1 << 22); n += `+string(mustJSON(c.step))+`) {
								if (p.run(`+string(mustJSON(c.step))+`)) return [p.nonce, p.hashes];
							}
							return [-1, p.hashes];
						})()`)
						want := firstNonceFrom(seed, i, c.bits, c.start)
						if got[0] != float64(want) || got[1] != float64(want-c.start+1) {
							t.Errorf("sub-puzzle %d, %d bits, from %d in steps of %d: nonce %v after %v hashes; want %d after %d",
								i, c.bits, c.start, c.step, got[0], got[1], want, want-c.start+1)
						}
					}
				}
				// A search that finds nothing counts every nonce (a
				// digest of 40 zero bits is not among 2^18).
				got := browsertest.Eval[[]float64](t, ctx, `(function () {
					var p = waitroomPow.puzzle("00112233445566778899aabbccddeeff", 3, 40, 4294967295 - 70000, `+string(mustJSON(engine))+`);
					return [p.run(1 << 18) ? p.nonce : -1, p.hashes];
				})()`)
				if got[0] != -1 || got[1] != 1<<18 {
					t.Errorf("40 bits: nonce %v after %v hashes; want none after %d", got[0], got[1], 1<<18)
				}
				msg := browsertest.Eval[string](t, ctx, `(function () {
					var p = waitroomPow.puzzle("00112233445566778899aabbccddeeff", 0, 64, 9007199254740989, `+string(mustJSON(engine))+`);
					try { p.run(10); return "no error"; } catch (err) { return err.message; }
				})()`)
				if msg != "pow: no nonce below 2^53" {
					t.Errorf("searching past 2^53: %q", msg)
				}
			})
		}
	})

	t.Run("engines in a worker", func(t *testing.T) {
		// The worker protocol with each engine asked for: sub-puzzles of
		// several seeds, difficulties, indices and starts, one at a time,
		// against crypto/sha256; every message names the engine.
		ctx := open(t, "/pow")
		type work struct {
			Seed    string   `json:"seed"`
			Bits    int      `json:"bits"`
			Puzzles []uint32 `json:"puzzles"`
			Start   uint64   `json:"start"`
			Engine  string   `json:"engine"`
		}
		type answer struct {
			Type    string  `json:"type"`
			Nonce   float64 `json:"nonce"`
			Hashes  float64 `json:"hashes"`
			Engines string  `json:"engines"`
			Message string  `json:"message"`
		}
		for _, engine := range powEngines {
			t.Run(engine, func(t *testing.T) {
				var ws []work
				for range 3 {
					seed := make([]byte, 16)
					rand.Read(seed)
					sh := hex.EncodeToString(seed)
					for _, c := range []struct {
						index uint32
						bits  int
						start uint64
					}{
						{0, 12, 0}, {1<<32 - 1, 10, 1<<32 - 3}, {5, 2, 1<<32 - 1}, {6, 1, 1<<32 - 2}, {7, 9, 3<<32 - 1},
						{8, 11, 1<<52 + 1<<32 - 2}, {9, 0, 12345}, {10, 14, 77},
					} {
						ws = append(ws, work{Seed: sh, Bits: c.bits, Puzzles: []uint32{c.index}, Start: c.start, Engine: engine})
					}
				}
				got := evalAwait[[]answer](t, ctx, `(async function (url, ws) {
					var w = new Worker(url), out = [];
					for (var i = 0; i < ws.length; i++) {
						out.push(await new Promise(function (resolve) {
							var hashes = 0, engines = {};
							w.onmessage = function (ev) {
								var m = ev.data;
								hashes += m.hashes || 0;
								engines[m.engine] = true;
								if (m.type !== "progress") {
									resolve({type: m.type, nonce: m.nonce, hashes: hashes, engines: Object.keys(engines).join(","), message: m.message});
								}
							};
							w.postMessage(ws[i]);
						}));
					}
					w.terminate();
					return out;
				})(`+workerURL+`, `+string(mustJSON(ws))+`)`)
				if len(got) != len(ws) {
					t.Fatalf("%d answers to %d sub-puzzles", len(got), len(ws))
				}
				for i, a := range got {
					w := ws[i]
					seed, _ := hex.DecodeString(w.Seed)
					want := firstNonceFrom(seed, w.Puzzles[0], w.Bits, w.Start)
					if a.Type != "solved" || a.Nonce != float64(want) || a.Hashes != float64(want-w.Start+1) || a.Engines != engine {
						t.Errorf("sub-puzzle %d of %s, %d bits, from %d: %+v; want solved by %s: nonce %d after %d hashes",
							w.Puzzles[0], w.Seed, w.Bits, w.Start, a, engine, want, want-w.Start+1)
					}
				}
			})
		}
	})

	t.Run("engines in waitroomSolve", func(t *testing.T) {
		// Each engine through pow.js, in a worker and in the main
		// thread: the first solutions, and info.engine says who found
		// them.
		ctx := open(t, "/pow")
		for _, engine := range powEngines {
			c := newChallenge(t, 10, 6, time.Minute)
			r := solveIn(t, ctx, c, `{worker: `+workerURL+`, threads: 1, engine: `+string(mustJSON(engine))+`}`, "")
			checkSolved(t, c, r)
			checkFirst(t, c, r)
			if r.Engine != engine || r.MainThread {
				t.Errorf("%s: solved by %q, main thread %v", engine, r.Engine, r.MainThread)
			}
		}
		main := open(t, "/pow")
		for _, engine := range powEngines {
			c := newChallenge(t, 10, 6, time.Minute)
			r := solveIn(t, main, c, `{worker: `+workerURL+`, engine: `+string(mustJSON(engine))+`}`, `window.Worker = undefined;`)
			checkSolved(t, c, r)
			checkFirst(t, c, r)
			if r.Engine != engine || !r.MainThread {
				t.Errorf("%s in the main thread: solved by %q, main thread %v", engine, r.Engine, r.MainThread)
			}
		}
		c := newChallenge(t, 8, 1, time.Minute)
		if r := solveIn(t, ctx, c, `{worker: `+workerURL+`, engine: "gpu"}`, ""); r.Code != "invalid" {
			t.Errorf("engine gpu: result %+v; want code invalid", r)
		}
	})

	t.Run("WebAssembly refused in the page", func(t *testing.T) {
		// The other pages' policy has no 'wasm-unsafe-eval': a worker
		// (its script served without a policy) still runs WebAssembly,
		// the main thread falls back to JavaScript.
		ctx := open(t, "/pow-nowasm")
		c := newChallenge(t, 8, 4, time.Minute)
		r := solveIn(t, ctx, c, workerURL, "")
		checkSolved(t, c, r)
		if r.Engine != "simd" || r.MainThread {
			t.Errorf("workers: solved by %q, main thread %v; want simd in workers", r.Engine, r.MainThread)
		}
		r = solveIn(t, ctx, c, workerURL, `window.Worker = undefined;`)
		checkSolved(t, c, r)
		checkFirst(t, c, r)
		if r.Engine != "js" || !r.MainThread {
			t.Errorf("main thread: solved by %q, main thread %v; want js", r.Engine, r.MainThread)
		}
	})

	t.Run("no Worker", func(t *testing.T) {
		ctx := open(t, "/pow")
		c := newChallenge(t, 8, 16, time.Minute)
		r := solveIn(t, ctx, c, workerURL, `window.Worker = undefined;`)
		checkSolved(t, c, r)
		checkFirst(t, c, r)
		if !r.MainThread {
			t.Error("no main-thread search")
		}
		// A longer search yields to timers between slices.
		c = newChallenge(t, 14, 16, time.Minute)
		r = solveIn(t, ctx, c, workerURL, `window.ticks = 0; window.iv = setInterval(function () { window.ticks++; }, 5);`)
		checkSolved(t, c, r)
		ticks := browsertest.Eval[int](t, ctx, `clearInterval(window.iv), window.ticks`)
		// A search that never yields runs no timer at all. How often a
		// 5 ms interval gets its turn depends on how busy the machine is,
		// so only the count a yielding search is sure to reach is asked:
		// one in a search over 100 ms, two over 300 ms.
		if (ticks < 1 && r.Millis > 100) || (ticks < 2 && r.Millis > 300) {
			t.Errorf("a timer ran %d times during a %.0f ms main-thread search", ticks, r.Millis)
		}
		t.Logf("timer ran %d times", ticks)
	})

	t.Run("workers refused by the page's CSP", func(t *testing.T) {
		ctx := open(t, "/pow-strict")
		c := newChallenge(t, 8, 16, time.Minute)
		r := solveIn(t, ctx, c, workerURL, "")
		checkSolved(t, c, r)
		if !r.MainThread || r.Engine != "js" {
			t.Errorf("main thread %v, engine %q; want the main thread in JavaScript (the policy refuses WebAssembly too)", r.MainThread, r.Engine)
		}
	})

	t.Run("expired", func(t *testing.T) {
		ctx := open(t, "/pow")
		c := newChallenge(t, 48, 4, 1500*time.Millisecond)
		r := solveIn(t, ctx, c, workerURL, "")
		if r.Code != "expired" || r.Millis > 10000 {
			t.Errorf("result %+v; want code expired after about 1.5 s", r)
		}
		// expires_at read on the server's clock, 59 s ahead of the page's.
		c = newChallenge(t, 48, 4, 60*time.Second)
		r = solveIn(t, ctx, c, `{worker: `+workerURL+`, skew: 59000}`, "")
		if r.Code != "expired" || r.Millis > 10000 {
			t.Errorf("with skew: result %+v; want code expired", r)
		}
	})

	t.Run("aborted", func(t *testing.T) {
		ctx := open(t, "/pow")
		c := newChallenge(t, 48, 4, time.Minute)
		r := solveIn(t, ctx, c, `{worker: `+workerURL+`, signal: ac.signal}`,
			`var ac = new AbortController(); setTimeout(function () { ac.abort(); }, 300);`)
		if r.Code != "aborted" {
			t.Errorf("result %+v; want code aborted", r)
		}
	})

	t.Run("invalid", func(t *testing.T) {
		ctx := open(t, "/pow")
		for _, c := range []challenge{
			{Seed: "xyz", Bits: 8, Puzzles: 1, ExpiresAt: time.Now().Add(time.Minute).Format(time.RFC3339)},
			{Seed: "00112233445566778899aabbccddeeff", Bits: 65, Puzzles: 1, ExpiresAt: time.Now().Add(time.Minute).Format(time.RFC3339)},
			{Seed: "00112233445566778899aabbccddeeff", Bits: 8, Puzzles: 0, ExpiresAt: time.Now().Add(time.Minute).Format(time.RFC3339)},
			{Seed: "00112233445566778899aabbccddeeff", Bits: 8, Puzzles: 1, ExpiresAt: "soon"},
		} {
			if r := solveIn(t, ctx, c, workerURL, ""); r.Code != "invalid" {
				t.Errorf("%+v: result %+v; want code invalid", c, r)
			}
		}
		c := newChallenge(t, 8, 1, time.Minute)
		if r := solveIn(t, ctx, c, "undefined", ""); r.Code != "invalid" {
			t.Errorf("no worker URL: result %+v; want code invalid", r)
		}
	})

	t.Run("missing scripts", func(t *testing.T) {
		ctx := open(t, "/pow")
		c := newChallenge(t, 8, 4, time.Minute)
		if r := solveIn(t, ctx, c, `"/_wr/static/pow-worker.0000000000000000.js"`, ""); r.Code != "unavailable" {
			t.Errorf("result %+v; want code unavailable", r)
		}
	})
}
