// Command powcal calibrates the waiting room's proof of work: how long the
// page's solver (static/web/pow.js and pow-worker.js, exactly the bytes
// the server embeds) takes in a real browser on this machine, per
// difficulty.
//
//	go run ./bench/powcal [-k 16] [-n 7] [-bits 12-20] [-threads 0]
//
// It starts Debian's headless Chromium (with internal/browsertest's path
// and switches, a fresh profile) on a page served from 127.0.0.1 with the
// pages' own Content-Security-Policy, then measures:
//
//  1. The hash rate of the pure-JavaScript search: in the page's main
//     thread, in one Web Worker, and in as many workers as waitroomSolve
//     starts (min(hardwareConcurrency, 4, K)).
//  2. WebCrypto's rate on the same 28-byte message, one
//     crypto.subtle.digest call per hash: awaited one at a time, and in
//     batches of 256 promises. This is the comparison behind the
//     pure-JavaScript SHA-256 (a promise per digest costs far more than
//     the hash of one block).
//  3. The start-up cost of a solve (bits 0: the workers start, load the
//     script and answer at once).
//  4. For each difficulty, -n solves of a fresh random challenge of -k
//     sub-puzzles with waitroomSolve as the page calls it: median, 10th
//     and 90th percentile solve times (linear interpolation between the
//     ordered samples) and the hash rate (all hashes the workers tried,
//     over the solve time).
//
// It prints a Markdown table "bits | expected hashes | median solve | p10
// | p90 | hashes/s" and recommends as the default light difficulty the
// bits whose median is closest to one second. Expected work is
// K·2^bits hashes; with K sub-puzzles the solve time's relative spread is
// about 1/sqrt(K). The report also goes to -out (bench/out).
//
// The numbers are this machine's: a phone is several times slower than a
// desktop, and other processes compete for the same cores (the report
// gives the load average before and after).
//
// It is not a test: nothing here fails on slow results.
package main
