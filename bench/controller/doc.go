// Command controller measures waitroom's admission controller from the
// outside, with real HTTP on 127.0.0.1: a flash crowd queues in a
// `waitroom serve` in front of an origin of known capacity, and the
// origin's own per-second figures show how well admission fills it
// without flooding it. It is the proof harness of issue 15.
//
// Each run starts, fresh, three things:
//
//  1. The origin (this program again, with -serve-origin): -capacity
//     requests served at once (default 20), each taking -latency (200 ms:
//     100 requests a second), up to -queue more waiting in line (60),
//     503 with Retry-After: 1 past that. Its capacity drops to
//     -brownout-factor of itself (0.5) from -brownout-start to
//     -brownout-end after the on-sale. It records every second: pages
//     answered, 503s, p50 and p95 latency (arrival to answer, the wait in
//     line included), the longest line, and the slots in use and on offer
//     (utilisation: busy slots / slots on offer, integrated over the
//     second). Checkout pages answer X-Waitroom-Complete: 1.
//  2. bin/waitroom serve (config from waitroom.yaml.tmpl, embedded store):
//     one event in mode always gating /gated/, no challenge, on sale a few
//     seconds after the start, no API rate limits.
//  3. The crowd: -shoppers (1200) arriving evenly over -arrive (10 s) from
//     the on-sale, each an HTTP client with its own cookie jar: the gated
//     page, POST /_wr/api/join, GET /_wr/api/status at the
//     refresh_seconds it is told, spread by ±20 % as the room's page does
//     (-poll-conns of those in flight at most),
//     and once admitted -pages (7) gated pages and GET /gated/checkout,
//     one after the other with -think between them, a 503 retried after
//     its Retry-After. A share -noshow takes the pass and never comes
//     back; -late-share of those come back -late after their admission.
//
// The contenders, each against its own origin and waitroom, one after the
// other, in the same run: the controller (waitroom's defaults, or
// -initial-active, -min-active) and three fixed rates, caps
// .max_new_per_minute at the rate that fills the origin (capacity ÷
// latency ÷ (pages + 1) a second, ÷ (1 − noshow)), twice it and half it,
// with the controller's limit pinned out of the way (initial_active and
// min_active 1,000,000). Every run lasts -duration after the on-sale;
// checkouts are counted within it, so a contender that admits too slowly
// completes fewer.
//
// Per contender it prints: convergence (from the first admission to the
// first second at ≥ 85 % utilisation), utilisation in the first minute,
// settled utilisation, overloaded seconds (p95 above 2 × the base latency,
// or any 503) and 503s, the brown-out (from the drop to the end of its
// last overloaded second, "never" when one of its last 3 is; utilisation
// of the reduced capacity; from the restore to ≥ 85 % of the full
// capacity in use), the
// completions, and the controller against the best fixed rate; the issue's
// targets with PASS or MISS beside the controller's figures. "Settled" is
// from -settle after the first admission to the last admission, less the
// brown-out and -settle after it; the demand lasts past the last
// admission while the origin still has a line. With -rounds > 1 the figures are
// medians. A per-second CSV per contender and round (origin figures,
// admissions seen by the crowd, checkouts, active shoppers, and from
// /metrics the controller's limit, the serving counter and the passes
// issued), a plot of it (SVG: the limit, active shoppers, utilisation and
// origin p95 over time, the brown-out shaded) and the report go to -out.
//
// With -sim the same scenario (the same flags) runs in the simulator
// instead, admission/sim: the real admission engine on a fake clock,
// ticked every second as `waitroom serve` ticks it, measured by a model of
// proxy/meter, in front of this origin and this crowd in simulated time
// (with the client round trips and the origin's overhead the real runs
// measure). A contender takes about a second instead of three minutes and
// prints the same table, CSV and plot, so that a change to the controller
// can be tried in seconds; admission/sim's tests pin the simulation to
// the real run's figures. The figures themselves, and the table, are
// defined once, in admission/sim/figures, for both. The crowd reports the
// client round trips it measured (join, status, gated page, and the pause
// from "admitted" to the first page), which the simulation's model takes.
//
// The default is short (about 7 minutes in all); -full runs the issue's
// scenario (2000 shoppers over 20 s, brown-out from 60 s to 120 s, runs of
// 180 s, which the demand outlasts, so that completions measure throughput;
// about 13 minutes). Run it with `make bench-controller`
// (BENCH_FLAGS="-full" for the scenario), or:
//
//	go run ./bench/controller -bin bin/waitroom [-full] [-rounds 3] [-noshow 0.3] [-only controller,fixed]
//	go run ./bench/controller -sim [-full] [-rounds 3] [-noshow 0.3] [-only controller,fixed]
package main
