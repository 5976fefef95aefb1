// Command powcal calibrates the waiting room's proof of work: how fast the
// page's solver (static/web/pow.js, pow-worker.js and its WebAssembly
// modules, exactly the bytes the server embeds) hashes in a real browser
// on this machine, against a plain Go loop, and how long it takes per
// difficulty.
//
//	go run ./bench/powcal [-k 16] [-n 7] [-bits 16-22] [-threads 0] [-rate-time 2s]
//
// It starts Debian's headless Chromium (with internal/browsertest's path
// and switches, a fresh profile) on a page served from 127.0.0.1 with the
// room page's own Content-Security-Policy, then measures:
//
//  1. Hashes per CPU-second of a plain Go loop (crypto/sha256.Sum256 of
//     the same 28-byte block, one goroutine) and of the page's solver
//     with each of its engines in one Web Worker
//     (JavaScript, WebAssembly scalar, WebAssembly SIMD), then SIMD in as
//     many workers as waitroomSolve starts (min(hardwareConcurrency, 4,
//     K)), JavaScript and SIMD in the page's main thread, and WebCrypto's
//     digest (one crypto.subtle.digest call per hash: awaited one at a
//     time, and in batches of 256 promises; this is the comparison behind
//     the solver's own SHA-256: a promise per digest costs far more than
//     the hash of one block). Each runs -rate-time after half a second of
//     warming up. CPU time is utime+stime from /proc/<pid>/stat: for the
//     browser, summed over every Chromium process (the browser, renderer,
//     GPU and utility processes: the worker's thread, the page's main
//     thread that receives its messages and whatever else Chromium does
//     meanwhile), for Go, this process's (idle but for the loop); the
//     rate per CPU-second is the hashes per wall-clock second over the
//     CPU-seconds used per wall-clock second (/proc counts in ticks of
//     10 ms: ±1% when a core is busy for the default 2 s, more when the
//     machine is shared). The report prints each engine's ratio to the
//     Go loop (the target is 0.5× or more). Per
//     CPU-second, not per wall-clock second, because the machine is
//     shared: what other processes take from the cores slows the wall
//     clock but not the CPU time a hash costs.
//  2. The start-up cost of a solve (bits 0: the workers start, load the
//     script and the module and answer at once).
//  3. For each difficulty, -n solves of a fresh random challenge of -k
//     sub-puzzles with waitroomSolve as the page calls it (the fastest
//     engine): median, 10th and 90th percentile solve times (linear
//     interpolation between the ordered samples) and the hash rate (all
//     hashes the workers tried, over the solve time). These are wall-clock
//     times: on a shared machine they grow with the load. So the table
//     also has the CPU-seconds of a solve (every Chromium process, median)
//     and that over the workers: the solve time when each worker has a
//     core to itself.
//
// It prints a Markdown table "bits | expected hashes | median solve | p10
// | p90 | hashes/s | CPU-s | CPU-s / workers" and recommends as the
// default light difficulty the bits whose median is closest to -target
// (one second), and the bits whose CPU-seconds over the workers are.
// Expected work is
// K·2^bits hashes; with K sub-puzzles the solve time's relative spread is
// about 1/sqrt(K). The report also goes to -out (bench/out).
//
// The numbers are this machine's: a phone is several times slower than a
// desktop, and other processes compete for the same cores (the report
// gives the load average before and after).
//
// It is not a test: nothing here fails on slow results.
package main
