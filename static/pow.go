package static

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
)

// The proof-of-work solver's scripts, served by Asset under
// content-hashed names like the room's script and stylesheet:
//
//   - web/pow.js (pow.<hash>.js) defines one global function,
//     waitroomSolve(challenge, onProgress, options) → Promise<number[]>.
//     challenge is the server's {token, seed, bits, puzzles, expires_at};
//     the nonces it resolves to answer sub-puzzles 0..puzzles-1 in order.
//     onProgress(fraction, {solved, puzzles, hashes}) gets a fraction
//     from 0 to 1 that never goes back. options is the worker's URL, or
//     {worker, skew, threads, signal}. The file's head comment has the
//     details and the error codes.
//   - web/pow-worker.js (pow-worker.<hash>.js) is the Web Worker that
//     searches: a SHA-256 written out for the puzzle's single 28-byte
//     block. pow.js also loads it as a plain script to search in the main
//     thread when Workers are missing or refused.
//
// pow.<hash>.js also carries web/client.js, the page's report of the
// browser for the join (waitroomClient(), see that file).
//
// A room page gets both URLs (Prefix/static/<name>) as ScriptConfig.PowJS
// and PowWorker (pow_js and pow_worker in #wr-config) and as TemplateData.
// PowJSURL and PowWorkerURL; the script loads pow.js with a <script>
// element (CSP script-src 'self') and passes the worker URL to
// waitroomSolve, which starts it as a Worker (CSP worker-src 'self').
// Neither is inlined: a Worker needs a URL of its own, and pow.js is only
// needed when the server asks for a proof of work.
//
// The worker hashes with WebAssembly when it can: web/pow-simd.wasm
// (pow-simd.<hash>.wasm, 128-bit SIMD, four nonces per pass) or, where
// the browser's WebAssembly has no SIMD, web/pow-scalar.wasm
// (pow-scalar.<hash>.wasm), served as application/wasm; it finds them
// next to its own URL. Without WebAssembly (or refused by a
// Content-Security-Policy without 'wasm-unsafe-eval') it hashes in
// JavaScript. pow_wasmgen_test.go writes both modules (go test ./static
// -run TestPowWasm -update), and pow_gen_test.go the JavaScript hash
// loop, SHA-256's rounds 7..63 written out with the constants folded in
// (go test ./static -run TestPowWorkerRounds -update); both tests fail
// when the committed files differ from what they write. go run
// ./bench/powcal measures the engines' hash rates against a plain Go loop
// and the solve times per difficulty in headless Chromium.

// powScripts are the solver's two scripts, compacted, its two
// WebAssembly modules, and their content-hashed names.
type powScripts struct {
	solver, worker, simd, scalar                 []byte
	solverName, workerName, simdName, scalarName string
}

// loadPow names the scripts and modules with one hash of the four
// (powHash), so that a page never pairs a pow.js with a pow-worker.js or
// a module of another version (during a rolling deployment, say): they
// speak a message protocol and a memory layout of their own, and the
// worker derives the modules' names from its own. The shared hash also
// compresses away in the page's configuration.
func loadPow(read func(name string) []byte) powScripts {
	// client.js (the page's report of the browser, waitroomClient) rides
	// in the solver's file: it is needed when the solver is.
	solver := slices.Concat(read("pow.js"), []byte("\n"), read("client.js"))
	p := powScripts{solver: compactJS(solver), worker: compactJS(read("pow-worker.js")),
		simd: read("pow-simd.wasm"), scalar: read("pow-scalar.wasm")}
	h := powHash(p.solver, p.worker, p.simd, p.scalar)
	p.solverName = "pow." + h + ".js"
	p.workerName = "pow-worker." + h + ".js"
	p.simdName = "pow-simd." + h + ".wasm"
	p.scalarName = "pow-scalar." + h + ".wasm"
	return p
}

// powHash is the first 16 hex digits of the SHA-256 of files, each
// preceded by its length.
func powHash(files ...[]byte) string {
	h := sha256.New()
	for _, b := range files {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// PowAssets returns the names under which Asset serves the proof-of-work
// solver (pow.js) and its Web Worker (pow-worker.js): pow.<hash>.js and
// pow-worker.<hash>.js with the same hash of both, to be requested as
// Prefix/static/<name>. Room
// pages have the same in their script configuration (ScriptConfig.PowJS,
// PowWorker). Asset also serves the worker's WebAssembly modules,
// pow-simd.<hash>.wasm and pow-scalar.<hash>.wasm (see PowWasmAssets).
func (p *Pages) PowAssets() (solver, worker string) {
	return p.pow.solverName, p.pow.workerName
}

// PowWasmAssets returns the names under which Asset serves the worker's
// WebAssembly modules (Content-Type application/wasm):
// pow-simd.<hash>.wasm and pow-scalar.<hash>.wasm, with PowAssets' hash.
// The worker requests them next to its own URL; nothing else needs them.
func (p *Pages) PowWasmAssets() (simd, scalar string) {
	return p.pow.simdName, p.pow.scalarName
}
