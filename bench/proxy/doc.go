// Command proxy benchmarks waitroom's front server against its
// competitors in one run on one machine, all on 127.0.0.1, driven by wrk:
//
//  1. Admitted pass-through: wrk sends every request with a valid pass
//     cookie (signed by the benchmark with the configured HS256 secret) to
//     a gated route; waitroom checks the pass and forwards to a bare
//     fasthttp origin answering 1 KiB. In the same run, nginx as a plain
//     reverse proxy (worker_processes 1, an upstream block with keepalive
//     64, proxy_http_version 1.1, Connection "") forwards the same
//     request to the same origin, and wrk hits the origin directly.
//     Throughput ratios waitroom/nginx and waitroom/direct, and p50/p99 of
//     each, are reported. That every request reached the origin is
//     checked three ways: wrk's Non-2xx count must be 0, the origin's own
//     request count must cover wrk's, and waitroom's /metrics must show
//     the requests forwarded with a 2xx and none sent to the waiting room.
//  2. Status polls: GET {prefix}/api/status?event=bench with a drawn
//     ticket of a visitor who is still waiting (the O(1) path: the ticket
//     from its cookie, the engine's in-memory serving counter), against a
//     bare fasthttp hello-world server of the same process shape. The
//     status body is printed once before measuring, and the count of
//     passes issued must not change while measuring (no pass is signed).
//  3. Joins per second: POST {prefix}/api/join without a cookie, so that
//     each request is a new visitor, with the embedded admission store
//     and with Redis (appendfsync always, and everysec, labelled). The
//     event's queue is open and its sale an hour away: every join lands
//     in the pre-queue, as in the minutes before a flash sale. Side by
//     side, each store again with the bot defence on ("+ PoW"): every
//     join carries a solved proof-of-work challenge, which waitroom
//     verifies (one SHA-256 per puzzle and one HMAC) and redeems once
//     (in memory with the embedded store, SET NX in Redis with Redis)
//     before joining; the ratio with/without is printed per store. The
//     light work is 2 bits × 16 puzzles: production's 16 puzzles, so
//     production's verification work, which does not depend on the bits,
//     and few bits, so that solving stays cheap. The event has no risk
//     signals (bot_defence.signals: []), so every challenge is the light
//     one. Before each wrk run, outside its time and CPU figures, the
//     benchmark fetches challenges from the waitroom with the User-Agent
//     wrk sends, Host then User-Agent as join_pow.lua writes them (a
//     challenge is bound to the client's address, User-Agent and header
//     order; a refused run names the refusals' reasons),
//     solves them in parallel and writes one join body a line; wrk
//     (join_pow.lua, one thread) sends each line once. It fetches twice
//     what the fastest run so far of the same store, with or without the
//     work, would have used (for the first run, of any store without
//     it); should wrk run out all the same, the script sends joins without
//     a solution, waitroom refuses them, and the run fails as invalid
//     rather than replay a challenge. Afterwards waitroom's /metrics must
//     show every challenge fetched issued as the light work, every join
//     wrk completed counted as joined, none refused by the bot defence
//     (waitroom_challenge_refusals_total) and none shadowed.
//
// API rate limits are off and nothing binds passes to a device
// (serve.binding: []), so that one cookie serves every wrk connection.
//
// # Fair use of two cores
//
// The machine the numbers come from has 2 cores and three kinds of
// process: the load generator, the server under test, and the backends
// (the origin behind a proxy, Redis). With taskset available (default,
// -pin), the server under test — waitroom, nginx (master and its one
// worker), the origin hit directly, the hello-world server — runs alone
// on CPU 1, and wrk (one thread, -t1) shares CPU 0 with the backends.
// Every contender of a comparison therefore gets exactly the same: one
// core to itself, the same generator and the same origin on the other.
// Go servers run with GOMAXPROCS=1, nginx with one worker. The CPU time
// each process used is read from /proc and printed, so a reader can see
// which side was the limit (a server at ~100% of its core is the
// bottleneck; a CPU 0 near 100% means the generator side limited the
// run). Without -pin the scheduler places everything.
//
// nginx gets keepalive_requests 1000000 on both sides, so that it never
// closes a keep-alive connection during a run (waitroom does not either).
//
// Run it with `make bench-proxy` (which builds bin/waitroom and installs wrk,
// nginx and redis-server when missing), or:
//
//	go run ./bench/proxy -bin bin/waitroom [-duration 10s] [-rounds 3] [-only passthrough,status,join]
//
// The origin and the hello-world server are this same program, started
// again with -serve-origin; they are not meant to be run by hand.
package main
