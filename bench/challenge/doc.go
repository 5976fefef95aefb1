// Command challenge measures proof-of-work verification on one core, the
// cost the waiting room pays for each join that carries a solution, and
// sets it beside its floor in the same run:
//
//   - verify: challenge.PoW.Verify of a good solution: base64url decode,
//     AES-256-GCM opening of the token's sealed part (buffers pooled),
//     K SHA-256 hashes of 28 bytes, checks; K = 8, 16 and 32. Its cost
//     does not depend on bits, so the challenges use bits 1 and take no
//     time to prepare. 1,024 tokens are verified in turn.
//   - verify+redeem: K=16 Verify, then Redeem in a memstore replay guard
//     (default sizing, window 5m, a fresh guard each round, its exact set
//     filled first), with a fresh challenge id each time: a whole join's
//     check. Ids refused as bloom false positives are counted.
//   - floor: the competitor, a bare loop of the same work with nothing
//     around it: K sha256.Sum256 calls on 28-byte messages and one
//     AES-256-GCM Open (one cipher.AEAD) of a token's sealed part.
//     verify/floor is what decoding, checking and pooling cost.
//
// The process runs with GOMAXPROCS=1 and its main goroutine locked to its
// thread, so every figure is one core's. Each contender runs -duration per
// round, -rounds rounds, in an order rotated each round; medians are
// reported, with the ratio to the target of 200,000 verifications per
// second per core (stated for K=16) and PASS or MISS.
//
//	go run ./bench/challenge [-rounds 5] [-duration 2s] [-out bench/out]
//
// Micro-benchmarks of the same code: go test -bench . ./challenge/ and
// ./challenge/memstore/.
package main
