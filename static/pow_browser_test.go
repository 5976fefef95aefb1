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

// powServer serves the solver's scripts from pages under /_wr/static/ and
// a page that loads pow.js: /pow with pages' CSP, /pow-strict with a
// policy that refuses workers.
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
		"/pow":        pages.CSP(),
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
	Millis     float64   `json:"ms"`
}

// solveIn runs waitroomSolve(c, …, opts) in the tab (opts is a JavaScript
// expression, before is run first) and waits for it to settle.
func solveIn(t *testing.T, ctx context.Context, c challenge, opts, before string) powResult {
	t.Helper()
	cj, _ := json.Marshal(c)
	expr := `(function () {
		` + before + `
		var progress = [];
		var t0 = performance.now();
		function done(r) {
			r.progress = progress;
			r.main_thread = !!window.waitroomPow;
			r.ms = performance.now() - t0;
			return r;
		}
		return waitroomSolve(` + string(cj) + `, function (f, info) {
			if (typeof info.solved !== "number" || info.puzzles !== ` + string(mustJSON(c.Puzzles)) + `) throw new Error("bad info");
			progress.push(f);
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
	pages, err := static.New(nil)
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
		ctx := open(t, "/pow")
		browsertest.Eval[bool](t, ctx, `window.Worker = undefined, true`)
		load := solveIn(t, ctx, newChallenge(t, 0, 1, time.Minute), workerURL, "")
		if !load.MainThread {
			t.Fatal("pow-worker.js not loaded as a script")
		}
		seed := make([]byte, 16)
		rand.Read(seed)
		for _, start := range []uint64{1<<32 - 40, 3<<32 - 7, 1<<53 - 1<<32 - 9, 1<<52 + 1<<32 - 1} {
			for _, i := range []uint32{0, 1<<32 - 1} {
				got := browsertest.Eval[[]float64](t, ctx, `(function () {
					var p = waitroomPow.puzzle(`+string(mustJSON(hex.EncodeToString(seed)))+`, `+string(mustJSON(i))+`, 7, `+string(mustJSON(start))+`);
					var found = p.run(1 << 20);
					return [found ? p.nonce : -1, p.hashes];
				})()`)
				want := firstNonceFrom(seed, i, 7, start)
				if got[0] != float64(want) || got[1] != float64(want-start+1) {
					t.Errorf("sub-puzzle %d from %d: nonce %v after %v hashes; want %d after %d", i, start, got[0], got[1], want, want-start+1)
				}
			}
		}
		msg := browsertest.Eval[string](t, ctx, `(function () {
			var p = waitroomPow.puzzle("00112233445566778899aabbccddeeff", 0, 64, 9007199254740989);
			try { p.run(10); return "no error"; } catch (err) { return err.message; }
		})()`)
		if msg != "pow: no nonce below 2^53" {
			t.Errorf("searching past 2^53: %q", msg)
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
		if !r.MainThread {
			t.Error("no main-thread search")
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
