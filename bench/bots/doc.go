// Command bots measures what a place in the queue costs a bot and what it
// costs a fan, against the shipped example configuration
// (configs/single-node.yaml: its signals, bands, work, rate limits and
// binding, unmodified) with waitroom terminating TLS, so that the JA4 of
// every client counts as it would in production.
//
// Run it with `make bench-bots` (which builds bin/waitroom and installs
// chromium, xvfb, curl and python3 when missing), or:
//
//	go run ./bench/bots -bin bin/waitroom [-n 3] [-rounds 3] [-only curl,go-chrome] [-max-solve 20s] [-xvfb=false]
//
// # Set-up
//
// The benchmark writes a copy of the configuration in which only what
// must differ on this machine is changed, and prints each change: the
// listeners (loopback, free ports), a self-signed certificate for
// 127.0.0.1 made in a temporary directory, the data directories, the
// origin's address (a recording origin on loopback, which counts what
// reaches it), the CAPTCHA provider's verify_url and script_url (a local
// stub that speaks the providers' wire format, serves a widget script
// that renders a box, and refuses every token, since no bot here solves
// CAPTCHAs: the CAPTCHA band is a real outcome, a visitor sent there is
// stuck), the webhook sink's URL (a local receiver), and — when the
// example's sale dates are in the future, as they are — the event's
// dates, moved so that the queue opened a minute ago and the sale is in an
// hour (a queue that is not open takes no joins). Secrets the file takes
// from the environment are random.
//
// Every strategy, in every round, comes from a loopback address in a /24
// of its own (127.S.R.1), so that one strategy's joins never count in
// another's rate signals; Chromium, which cannot choose its source
// address, goes through a CONNECT proxy that dials from that address
// (the tunnel carries the browser's TLS and requests untouched).
//
// # Strategies
//
// Each does -n places per round, each place a new visitor: GET
// {prefix}/api/challenge?event=E, then POST {prefix}/api/join with the
// solution (docs/visitor-api.md).
//
//   - fan: Debian's Chromium with a fresh, normal profile, headful under
//     Xvfb when Xvfb is installed (else headless, said in the output),
//     loading the event's real page, which solves the work in its own
//     solver and joins. It is started as a person's Chrome is: without
//     the automation switch chromedp's connection implies
//     (browsertest.AsPerson), so its page reports navigator.webdriver
//     false; each round prints the client report its pages made. Its cost per place is the CPU time of Chromium's
//     processes (/proc: utime+stime, reaped helpers included) from opening
//     a fresh browser context to the page's join answer.
//   - curl: the curl binary, once per request; the proof of work solved
//     by the native solver.
//   - python: python3 with http.client, sending python-requests' headers
//     in their order, one process and kept-alive connection per round.
//   - go: Go's net/http default client.
//   - go-chrome: Go writing HTTP/1.1 by hand with exactly the header
//     lines (order, case and values) that Chromium of the fan's kind sends
//     for the challenge and the join, and copying the join body's extra
//     fields (a "client" object, when the page sends one). These are
//     captured in the same run: before the strategies, a Chromium started
//     like the fan's loads the real page through a recorder that
//     terminates TLS and forwards to waitroom. The recorder speaks Go's
//     TLS under Chromium's header lines, which the consistency and ja4
//     signals see; when its visit gets more than the light work the page
//     is not waited for, and the join is sent by hand from the page (its
//     fetch options and referrer, and the client report of the page's
//     solver after the measured solve below).
//   - hybrid-go: a Chromium started like the fan's, from the bot's
//     address, holds a page of the waiting room's origin and fetches each
//     challenge with fetch() (the page's own fetch options); the native
//     solver solves; the join goes from Go with the captured header lines.
//     Its Chromium keeps the automation switch (a driven browser); the
//     join carries the fan's captured client report.
//   - hybrid-browser: the same, but the join is sent from the page.
//   - hybrid-browser-12: hybrid-browser taking 12 places a round (the
//     example's rate hard limit for an address in a minute) from one
//     address, as a bot with few addresses must. Reported.
//   - headless: headless Chromium (internal/testkit/browsertest's
//     switches), its default user agent, running the real page.
//   - headless-ua: the same with --user-agent set to the fan's desktop
//     user agent. Reported, without a target.
//
// The native solver is challenge.Solve's loop shared over every core, in
// an agent process (this program with -agent) whose rusage is the bot's.
// A scripted bot's cost is the CPU time of all its processes over the
// round (curl's, python3's, the agent's, and for the hybrids Chromium's)
// divided by the places it got in the real queue: refused joins, CAPTCHA
// dead ends and shadowed places cost without counting. Work whose native
// solve would take more than -max-solve CPU time is not solved but
// priced from the measured hash rate (marked "~ (priced)"); that place's
// join is not sent, and it counts as a real place unless the operator's
// counters show the challenge was a shadow decision.
//
// The browsers are priced the same way: the page's own solver (pow.js
// and its WebAssembly workers) is measured once, in the capture's
// Chromium, on a made-up challenge of the light work's size, as hashes
// over the CPU time of all Chromium's processes. A page whose challenge
// would take more than -max-solve at that rate is not waited for (the
// heavy work takes a browser minutes): the visit costs the CPU it used
// until then plus the priced work.
//
// # What is reported
//
// For each place: the action, from what the visitor sees (the
// challenge's answer and bits, the join's status and error code) and
// from what the operator sees in waitroom's /metrics on the admin
// listener (waitroom_challenge_decisions_total by applied action,
// waitroom_joins_total by result): a shadowed join answers like any
// other, and only the operator's counters tell it apart. For each
// strategy: the actions of all its places, the median over rounds of
// its CPU-seconds per real place, and the ratio to the fan's median.
// Targets (issue 16): every bot strategy pays at least 100× the fan per
// place or gets no place (CAPTCHA, shadow, block, refused): PASS or
// FAIL; the fan gets the light work on every place (no false positive).
// Strategies whose tool is missing are reported as skipped. The report
// also goes to -out (bench/out).
//
// It is a measurement, not a test: it exits 0 whatever the verdicts.
package main
