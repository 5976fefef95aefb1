// Package challenge is waitroom's bot defence at join: it makes every
// queue place cost real work, and makes that cost grow with suspicion.
//
//   - Risk scoring: Signals (header order and consistency, the TLS
//     fingerprint JA4, a browser's claim against its TLS and headers,
//     the page's report of the browser, request rates, known-bad lists,
//     and whatever the plugins add) each judge a Request; a Scorer weighs
//     their findings into a score from 0 to 100 and keeps the reasons.
//   - Fingerprint data: fingerprints.json, embedded, holds the JA4 (and
//     default header fingerprint) of common HTTP tools and of the
//     Chromium the tests drive, recorded by running them
//     (TestFingerprintData -update); DefaultFingerprints and
//     ParseFingerprints read it and operators' files.
//   - Actions: a Policy maps the score to light or heavy proof of work, a
//     CAPTCHA, the shadow queue or a block, or in dry run only logs what
//     it would do.
//   - Proof of work: PoW issues SHA-256 challenges split into independent
//     sub-puzzles, signed with HMAC over an unambiguous encoding and bound
//     to the device, and verifies solutions for a few hashes and one HMAC.
//   - Replay: a ReplayGuard (memstore in one process, redisstore shared by
//     replicas, each registered in ReplayStores under its admission
//     store's name) lets each challenge be redeemed exactly once, by an
//     atomic check-and-set.
//   - CAPTCHA: the Provider interface the plugins implement, with the
//     Widget the page shows and the WidgetScript (a ScriptedProvider's)
//     that says how the page drives it.
//
// It is not the HTTP layer (package proxy asks it and answers visitors),
// nor where plugins are configured (package plugins builds them).
package challenge
