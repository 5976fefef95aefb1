package static

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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
// A room page gets both URLs (Prefix/static/<name>) as ScriptConfig.PowJS
// and PowWorker (pow_js and pow_worker in #wr-config) and as TemplateData.
// PowJSURL and PowWorkerURL; the script loads pow.js with a <script>
// element (CSP script-src 'self') and passes the worker URL to
// waitroomSolve, which starts it as a Worker (CSP worker-src 'self').
// Neither is inlined: a Worker needs a URL of its own, and pow.js is only
// needed when the server asks for a proof of work.
//
// The worker's hash loop has SHA-256's rounds 7..63 written out with the
// constants folded in; pow_gen_test.go writes them (go test ./static -run
// TestPowWorkerRounds -update) and checks the script has them. go run
// ./bench/powcal measures the solve times per difficulty in headless
// Chromium, and the pure-JavaScript SHA-256 against WebCrypto's.

// powScripts are the solver's two scripts, compacted, and their
// content-hashed names.
type powScripts struct {
	solver, worker         []byte
	solverName, workerName string
}

// loadPow names both scripts with one hash of the two (powHash), so that
// a page never pairs a pow.js with a pow-worker.js of another version
// (during a rolling deployment, say): they speak a message protocol of
// their own. The shared hash also compresses away in the page's
// configuration.
func loadPow(read func(name string) []byte) powScripts {
	p := powScripts{solver: compactJS(read("pow.js")), worker: compactJS(read("pow-worker.js"))}
	h := powHash(p.solver, p.worker)
	p.solverName = "pow." + h + ".js"
	p.workerName = "pow-worker." + h + ".js"
	return p
}

// powHash is the first 16 hex digits of the SHA-256 of both scripts,
// each preceded by its length.
func powHash(solver, worker []byte) string {
	h := sha256.New()
	for _, b := range [][]byte{solver, worker} {
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
// PowWorker).
func (p *Pages) PowAssets() (solver, worker string) {
	return p.pow.solverName, p.pow.workerName
}
