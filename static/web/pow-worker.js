// The waiting room's proof-of-work search: a Web Worker, and the same code
// as a plain script for pow.js's main-thread fallback.
//
// Why one file: the same file is the Web Worker (pow.js starts it by its
// URL, pow-worker.<hash>.js, which worker-src 'self' allows) and, loaded by
// a <script> element, the main-thread fallback. Split, the worker would
// need importScripts for its parts (more requests before the first hash,
// each a hashed name to keep in step with the others across a rolling
// deployment) and the page more <script> elements. Most of its length is
// rounds 7..63 written out in Puzzle.prototype.run, which pow_gen_test.go
// generates and checks (go test ./static -run TestPowWorkerRounds
// -update); only the code around them is written by hand.
//
// A challenge has a 16-byte seed, a difficulty of bits leading zero bits
// and K sub-puzzles. The answer to sub-puzzle i is a nonce n, an integer
// with 0 <= n < 2^53, such that
//
//   SHA-256(seed (16 bytes) || i (uint32 big-endian) || n (uint64 big-endian))
//
// starts with at least bits zero bits. The message is 28 bytes, one
// SHA-256 block after padding, so the search hashes one block per nonce
// with a SHA-256 specialised for it (WebCrypto's crypto.subtle.digest
// costs a promise per call, which is several times slower for 28 bytes:
// go run ./bench/powcal measures both). Of the block's sixteen words only
// the nonce's two change, and the high one only every 2^32 nonces, so
// rounds 0..4 are computed once per sub-puzzle, round 5 and most of round
// 6 once per high word, and a hash starts at round 7 from a precomputed
// state with the low word added to two of its words. Rounds 7..63 are
// written out on local variables; nothing is allocated per hash.
//
// The hashing itself has three engines, tried in this order:
//
//   simd    pow-simd.<hash>.wasm, WebAssembly with 128-bit SIMD: four
//           nonces per pass in i32x4 lanes, about three times the
//           pure-JavaScript rate;
//   scalar  pow-scalar.<hash>.wasm, plain WebAssembly, for browsers
//           whose WebAssembly has no SIMD (WebAssembly.validate says);
//   js      rounds 7..63 in JavaScript, below, when WebAssembly is
//           missing, refused (a Content-Security-Policy without
//           'wasm-unsafe-eval') or its module does not load.
//
// The modules are generated (go test ./static -run TestPowWasm -update,
// static/pow_wasmgen_test.go has their layout) and take the same
// precomputed state as the JavaScript rounds; their URLs are this
// script's with pow-worker.<hash>.js replaced (one hash names all four
// files of the solver). A script of another name searches in JavaScript.
//
// As a worker it is given work with postMessage:
//
//   {seed: "<32 hex digits>", bits: B, puzzles: [i, ...], start: n,
//    engine: "simd" | "scalar" | "js"}
//     queues sub-puzzles i, each searched upwards from nonce n (0 when
//     absent), in order, with the first engine that loads from engine
//     on in the order above (from simd when absent);
//   {cancel: [i, ...]}
//     drops those sub-puzzles, the one being searched included.
//
// Messages are handled in the order they came, each once the engine it
// asks for has loaded or failed to. It answers with
//
//   {type: "progress", index: i, hashes: h, engine: e} every chunk,
//   {type: "solved", index: i, nonce: n, hashes: h, engine: e} for each
//     sub-puzzle,
//   {type: "error", message: "..."} for work it cannot do,
//
// hashes being those done on sub-puzzle i since the previous message about
// it and engine the one that did them. It searches in chunks (2^16 hashes
// in JavaScript, 2^18 in WebAssembly: a few tens of ms either way) and
// yields in between, so that a cancel is seen within a chunk.
//
// Loaded by a <script> element it defines window.waitroomPow instead:
// waitroomPow.load(engine) returns a promise of the name of the engine
// that loaded (as above; "js" when none did), and
// waitroomPow.puzzle(seedHex, index, bits, start, engine) a search with
// run(limit) (true when it found a nonce within limit more hashes),
// nonce and hashes, in that engine (a loaded one; JavaScript when
// absent).
//
// Its sections, in order:
//
//   constants   SHA-256's round constants and IV, the block's fixed words
//   checks      the seed, the difficulty and the first nonce
//   SHA-256     the schedule's sigma functions and one round
//   search      Puzzle: the per-sub-puzzle precomputation, run (with the
//               generated rounds), the WebAssembly run, the next high
//               half; newPuzzle
//   engines     loading the WebAssembly modules
//   page        window.waitroomPow, when loaded by a <script> element
//   worker      the queue of searches, a chunk at a time, and its messages
(function (scope) {
  "use strict";

  // --- constants --------------------------------------------------------

  // Hashes per chunk of the worker's search, in JavaScript and in
  // WebAssembly.
  var CHUNK = 65536;
  var WASM_CHUNK = 262144;
  // The most nonces one call of a module's run tries. V8 first runs a
  // module with its baseline compiler (Liftoff: the scalar module about
  // ten times slower) and swaps in the optimized code only for the next
  // call, so calls are kept short (about a ms).
  var WASM_BATCH = 16384;
  // 2^32, to join the nonce's two 32-bit halves into one number.
  var TWO32 = 4294967296;
  // The highest high half of a nonce below 2^53.
  var MAX_HI = 0x1fffff;

  var K = new Int32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
  ]);
  var IV = new Int32Array([
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
  ]);
  // The fixed words of the block: the padding bit after 28 bytes and the
  // length in bits.
  var PAD = 0x80000000 | 0;
  var LENGTH = 224;
  var IV0 = IV[0], IV1 = IV[1];

  // --- checks -----------------------------------------------------------

  // parseSeed returns the 16-byte seed as four big-endian words, or null.
  function parseSeed(hex) {
    if (typeof hex !== "string" || !/^[0-9a-fA-F]{32}$/.test(hex)) {
      return null;
    }
    var w = new Int32Array(4);
    for (var i = 0; i < 4; i++) {
      w[i] = parseInt(hex.substr(i * 8, 8), 16) | 0;
    }
    return w;
  }

  // validBits reports whether b is a difficulty the search can check (the
  // first two state words: up to 64 bits).
  function validBits(b) {
    return typeof b === "number" && b >= 0 && b <= 64 && Math.floor(b) === b;
  }

  // validStart reports whether n can be the first nonce tried.
  function validStart(n) {
    return typeof n === "number" && n >= 0 && n < 9007199254740992 && Math.floor(n) === n;
  }

  // --- SHA-256 ----------------------------------------------------------

  function sig0(x) {
    return ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
  }

  function sig1(x) {
    return ((x >>> 17) | (x << 15)) ^ ((x >>> 19) | (x << 13)) ^ (x >>> 10);
  }

  // round applies one SHA-256 round with word kw (K[t] + W[t]) to the
  // state in st[0..7], in place. Only the per-sub-puzzle precomputation uses it;
  // run has the rounds written out.
  function round(st, kw) {
    var a = st[0], b = st[1], c = st[2], e = st[4], f = st[5], g = st[6];
    var t1 = (st[7] + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
      (g ^ (e & (f ^ g))) + kw) | 0;
    var t2 = ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
      ((a & b) | (c & (a | b)))) | 0;
    st[7] = g;
    st[6] = f;
    st[5] = e;
    st[4] = (st[3] + t1) | 0;
    st[3] = c;
    st[2] = b;
    st[1] = a;
    st[0] = (t1 + t2) | 0;
  }

  // --- search -----------------------------------------------------------

  // Puzzle is the search of sub-puzzle index of the seed (four words from
  // parseSeed), upwards from nonce start.
  function Puzzle(seed, index, bits, start, engine) {
    this.bits = bits;
    // The WebAssembly engine (see loadEngine), or null for JavaScript.
    this.engine = engine || null;
    // The largest first and second words of a digest that meet bits, as
    // int32 (the modules compare them unsigned).
    this.mask0 = bits >= 32 ? 0 : (-1 >>> bits) | 0;
    this.mask1 = bits <= 32 ? -1 : (-1 >>> (bits - 32)) | 0;
    // The nonce found (after run returned true) and the hashes done.
    this.nonce = -1;
    this.hashes = 0;
    // The next nonce to try, as two 32-bit halves.
    this.hi = Math.floor(start / TWO32);
    this.lo = (start % TWO32) | 0;
    // The message schedule W[0..22] as far as it does not depend on the
    // low half of the nonce (W[6]); setHi fills in W[5] and W[20].
    var w = new Int32Array(23);
    w[0] = seed[0];
    w[1] = seed[1];
    w[2] = seed[2];
    w[3] = seed[3];
    w[4] = index | 0;
    w[7] = PAD;
    w[15] = LENGTH;
    w[16] = (sig0(w[1]) + w[0]) | 0;
    w[17] = (sig1(w[15]) + sig0(w[2]) + w[1]) | 0;
    w[18] = (sig1(w[16]) + sig0(w[3]) + w[2]) | 0;
    w[19] = (sig1(w[17]) + sig0(w[4]) + w[3]) | 0;
    this.w = w;
    // The state after rounds 0..4, which see only the seed and index.
    this.mid = new Int32Array(IV);
    for (var t = 0; t < 5; t++) {
      round(this.mid, (K[t] + w[t]) | 0);
    }
    // What run needs of the current high half; see setHi.
    this.pre = new Int32Array(15);
    this.setHi(this.hi);
  }

  // setHi makes hi the nonce's high half, W[5], and computes this.pre:
  //
  //   pre[0..7]   the state after round 6 as far as it does not depend on
  //               the low half, W[6]. Round 6 adds W[6] to T1, and T1 only
  //               goes into the new a and e, so the state after round 6
  //               is pre[0..7] with the low half added to pre[0] and
  //               pre[4].
  //   pre[8..12]  W[16..20].
  //   pre[13..14] W[21] and W[22] but for their W[6] terms, sig0(W[6])
  //               and W[6].
  Puzzle.prototype.setHi = function (hi) {
    var w = this.w, pre = this.pre;
    this.hi = hi;
    w[5] = hi | 0;
    w[20] = (sig1(w[18]) + sig0(w[5]) + w[4]) | 0;
    pre.set(this.mid);
    round(pre, (K[5] + w[5]) | 0);
    round(pre, K[6]);
    pre.set(w.subarray(16, 21), 8);
    pre[13] = (sig1(w[19]) + w[5]) | 0;
    pre[14] = (sig1(w[20]) + w[15] + sig0(w[7])) | 0;
  };

  // run tries at most limit more nonces. It returns true when one meets
  // the difficulty (this.nonce) and false when none did; it throws when
  // the nonces below 2^53 are exhausted.
  //
  // Rounds 7..63 are written out with the constants folded in: the round
  // constants, the fixed words (the padding bit, the zeros, the length)
  // and the terms they make in the schedule. The eight state words are
  // renamed from round to round instead of moved: round t computes the
  // new e into the variable that held d and the new a into the one that
  // held h. Round 7 finds its a in b; after round 63 the names are back in
  // place.
  //
  // One flat loop, everything it needs of the high half read from pre on
  // each pass (setHi updates it in place when the low half wraps): in
  // Chromium 156 this reached V8's optimized code about twice as soon as
  // the same rounds in nested loops, and ran about 20% faster than rounds
  // 16..63 as a loop over sixteen rolling schedule words. For a search of
  // a second or two, the first second counts.
  Puzzle.prototype.run = function (limit) {
    if (this.engine) {
      return this.runWasm(limit);
    }
    var bits = this.bits;
    // Leading zero bits wanted of the digest's first word, and of its
    // second when bits > 32.
    var need0 = bits > 32 ? 32 : bits;
    var need1 = bits > 32 ? bits - 32 : 0;
    var pre = this.pre;
    var lo = this.lo;
    var a, b, c, d, e, f, g, h, t1;
    for (var n = 0; n < limit; n++) {
      // The state after round 6, named for round 7.
      b = (pre[0] + lo) | 0;
      c = pre[1];
      d = pre[2];
      e = pre[3];
      f = (pre[4] + lo) | 0;
      g = pre[5];
      h = pre[6];
      a = pre[7];
      var w16 = pre[8], w17 = pre[9], w18 = pre[10], w19 = pre[11], w20 = pre[12];
      var w21 = (pre[13] + (((lo >>> 7) | (lo << 25)) ^ ((lo >>> 18) | (lo << 14)) ^ (lo >>> 3))) | 0;
      var w22 = (pre[14] + lo) | 0;
      // Rounds 7..63: generated by go test ./static -run TestPowWorkerRounds -update
      // Round 7.
      t1 = (a + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) +
        (h ^ (f & (g ^ h))) + 0x2b1c5ed5) | 0;
      e = (e + t1) | 0;
      a = (t1 + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) +
        ((b & c) | (d & (b | c)))) | 0;
      // Round 8.
      t1 = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        (g ^ (e & (f ^ g))) + (0xd807aa98 | 0)) | 0;
      d = (d + t1) | 0;
      h = (t1 + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) | (c & (a | b)))) | 0;
      // Round 9.
      t1 = (g + (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7))) +
        (f ^ (d & (e ^ f))) + 0x12835b01) | 0;
      c = (c + t1) | 0;
      g = (t1 + (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10))) +
        ((h & a) | (b & (h | a)))) | 0;
      // Round 10.
      t1 = (f + (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7))) +
        (e ^ (c & (d ^ e))) + 0x243185be) | 0;
      b = (b + t1) | 0;
      f = (t1 + (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10))) +
        ((g & h) | (a & (g | h)))) | 0;
      // Round 11.
      t1 = (e + (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7))) +
        (d ^ (b & (c ^ d))) + 0x550c7dc3) | 0;
      a = (a + t1) | 0;
      e = (t1 + (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10))) +
        ((f & g) | (h & (f | g)))) | 0;
      // Round 12.
      t1 = (d + (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7))) +
        (c ^ (a & (b ^ c))) + 0x72be5d74) | 0;
      h = (h + t1) | 0;
      d = (t1 + (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10))) +
        ((e & f) | (g & (e | f)))) | 0;
      // Round 13.
      t1 = (c + (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7))) +
        (b ^ (h & (a ^ b))) + (0x80deb1fe | 0)) | 0;
      g = (g + t1) | 0;
      c = (t1 + (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10))) +
        ((d & e) | (f & (d | e)))) | 0;
      // Round 14.
      t1 = (b + (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7))) +
        (a ^ (g & (h ^ a))) + (0x9bdc06a7 | 0)) | 0;
      f = (f + t1) | 0;
      b = (t1 + (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10))) +
        ((c & d) | (e & (c | d)))) | 0;
      // Round 15.
      t1 = (a + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) +
        (h ^ (f & (g ^ h))) + (0xc19bf254 | 0)) | 0;
      e = (e + t1) | 0;
      a = (t1 + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) +
        ((b & c) | (d & (b | c)))) | 0;
      // Round 16.
      t1 = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        (g ^ (e & (f ^ g))) + (0xe49b69c1 | 0) + w16) | 0;
      d = (d + t1) | 0;
      h = (t1 + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) | (c & (a | b)))) | 0;
      // Round 17.
      t1 = (g + (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7))) +
        (f ^ (d & (e ^ f))) + (0xefbe4786 | 0) + w17) | 0;
      c = (c + t1) | 0;
      g = (t1 + (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10))) +
        ((h & a) | (b & (h | a)))) | 0;
      // Round 18.
      t1 = (f + (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7))) +
        (e ^ (c & (d ^ e))) + 0x0fc19dc6 + w18) | 0;
      b = (b + t1) | 0;
      f = (t1 + (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10))) +
        ((g & h) | (a & (g | h)))) | 0;
      // Round 19.
      t1 = (e + (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7))) +
        (d ^ (b & (c ^ d))) + 0x240ca1cc + w19) | 0;
      a = (a + t1) | 0;
      e = (t1 + (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10))) +
        ((f & g) | (h & (f | g)))) | 0;
      // Round 20.
      t1 = (d + (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7))) +
        (c ^ (a & (b ^ c))) + 0x2de92c6f + w20) | 0;
      h = (h + t1) | 0;
      d = (t1 + (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10))) +
        ((e & f) | (g & (e | f)))) | 0;
      // Round 21.
      t1 = (c + (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7))) +
        (b ^ (h & (a ^ b))) + 0x4a7484aa + w21) | 0;
      g = (g + t1) | 0;
      c = (t1 + (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10))) +
        ((d & e) | (f & (d | e)))) | 0;
      // Round 22.
      t1 = (b + (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7))) +
        (a ^ (g & (h ^ a))) + 0x5cb0a9dc + w22) | 0;
      f = (f + t1) | 0;
      b = (t1 + (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10))) +
        ((c & d) | (e & (c | d)))) | 0;
      // Round 23.
      var w23 = ((((w21 >>> 17) | (w21 << 15)) ^ ((w21 >>> 19) | (w21 << 13)) ^ (w21 >>> 10)) +
        w16 +
        (0x80000000 | 0)) | 0;
      t1 = (a + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) +
        (h ^ (f & (g ^ h))) + 0x76f988da + w23) | 0;
      e = (e + t1) | 0;
      a = (t1 + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) +
        ((b & c) | (d & (b | c)))) | 0;
      // Round 24.
      var w24 = ((((w22 >>> 17) | (w22 << 15)) ^ ((w22 >>> 19) | (w22 << 13)) ^ (w22 >>> 10)) +
        w17) | 0;
      t1 = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        (g ^ (e & (f ^ g))) + (0x983e5152 | 0) + w24) | 0;
      d = (d + t1) | 0;
      h = (t1 + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) | (c & (a | b)))) | 0;
      // Round 25.
      var w25 = ((((w23 >>> 17) | (w23 << 15)) ^ ((w23 >>> 19) | (w23 << 13)) ^ (w23 >>> 10)) +
        w18) | 0;
      t1 = (g + (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7))) +
        (f ^ (d & (e ^ f))) + (0xa831c66d | 0) + w25) | 0;
      c = (c + t1) | 0;
      g = (t1 + (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10))) +
        ((h & a) | (b & (h | a)))) | 0;
      // Round 26.
      var w26 = ((((w24 >>> 17) | (w24 << 15)) ^ ((w24 >>> 19) | (w24 << 13)) ^ (w24 >>> 10)) +
        w19) | 0;
      t1 = (f + (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7))) +
        (e ^ (c & (d ^ e))) + (0xb00327c8 | 0) + w26) | 0;
      b = (b + t1) | 0;
      f = (t1 + (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10))) +
        ((g & h) | (a & (g | h)))) | 0;
      // Round 27.
      var w27 = ((((w25 >>> 17) | (w25 << 15)) ^ ((w25 >>> 19) | (w25 << 13)) ^ (w25 >>> 10)) +
        w20) | 0;
      t1 = (e + (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7))) +
        (d ^ (b & (c ^ d))) + (0xbf597fc7 | 0) + w27) | 0;
      a = (a + t1) | 0;
      e = (t1 + (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10))) +
        ((f & g) | (h & (f | g)))) | 0;
      // Round 28.
      var w28 = ((((w26 >>> 17) | (w26 << 15)) ^ ((w26 >>> 19) | (w26 << 13)) ^ (w26 >>> 10)) +
        w21) | 0;
      t1 = (d + (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7))) +
        (c ^ (a & (b ^ c))) + (0xc6e00bf3 | 0) + w28) | 0;
      h = (h + t1) | 0;
      d = (t1 + (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10))) +
        ((e & f) | (g & (e | f)))) | 0;
      // Round 29.
      var w29 = ((((w27 >>> 17) | (w27 << 15)) ^ ((w27 >>> 19) | (w27 << 13)) ^ (w27 >>> 10)) +
        w22) | 0;
      t1 = (c + (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7))) +
        (b ^ (h & (a ^ b))) + (0xd5a79147 | 0) + w29) | 0;
      g = (g + t1) | 0;
      c = (t1 + (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10))) +
        ((d & e) | (f & (d | e)))) | 0;
      // Round 30.
      var w30 = ((((w28 >>> 17) | (w28 << 15)) ^ ((w28 >>> 19) | (w28 << 13)) ^ (w28 >>> 10)) +
        w23 +
        (0xc038001d | 0)) | 0;
      t1 = (b + (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7))) +
        (a ^ (g & (h ^ a))) + 0x06ca6351 + w30) | 0;
      f = (f + t1) | 0;
      b = (t1 + (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10))) +
        ((c & d) | (e & (c | d)))) | 0;
      // Round 31.
      var w31 = ((((w29 >>> 17) | (w29 << 15)) ^ ((w29 >>> 19) | (w29 << 13)) ^ (w29 >>> 10)) +
        w24 +
        (((w16 >>> 7) | (w16 << 25)) ^ ((w16 >>> 18) | (w16 << 14)) ^ (w16 >>> 3)) +
        0x000000e0) | 0;
      t1 = (a + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) +
        (h ^ (f & (g ^ h))) + 0x14292967 + w31) | 0;
      e = (e + t1) | 0;
      a = (t1 + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) +
        ((b & c) | (d & (b | c)))) | 0;
      // Round 32.
      var w32 = ((((w30 >>> 17) | (w30 << 15)) ^ ((w30 >>> 19) | (w30 << 13)) ^ (w30 >>> 10)) +
        w25 +
        (((w17 >>> 7) | (w17 << 25)) ^ ((w17 >>> 18) | (w17 << 14)) ^ (w17 >>> 3)) +
        w16) | 0;
      t1 = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        (g ^ (e & (f ^ g))) + 0x27b70a85 + w32) | 0;
      d = (d + t1) | 0;
      h = (t1 + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) | (c & (a | b)))) | 0;
      // Round 33.
      var w33 = ((((w31 >>> 17) | (w31 << 15)) ^ ((w31 >>> 19) | (w31 << 13)) ^ (w31 >>> 10)) +
        w26 +
        (((w18 >>> 7) | (w18 << 25)) ^ ((w18 >>> 18) | (w18 << 14)) ^ (w18 >>> 3)) +
        w17) | 0;
      t1 = (g + (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7))) +
        (f ^ (d & (e ^ f))) + 0x2e1b2138 + w33) | 0;
      c = (c + t1) | 0;
      g = (t1 + (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10))) +
        ((h & a) | (b & (h | a)))) | 0;
      // Round 34.
      var w34 = ((((w32 >>> 17) | (w32 << 15)) ^ ((w32 >>> 19) | (w32 << 13)) ^ (w32 >>> 10)) +
        w27 +
        (((w19 >>> 7) | (w19 << 25)) ^ ((w19 >>> 18) | (w19 << 14)) ^ (w19 >>> 3)) +
        w18) | 0;
      t1 = (f + (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7))) +
        (e ^ (c & (d ^ e))) + 0x4d2c6dfc + w34) | 0;
      b = (b + t1) | 0;
      f = (t1 + (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10))) +
        ((g & h) | (a & (g | h)))) | 0;
      // Round 35.
      var w35 = ((((w33 >>> 17) | (w33 << 15)) ^ ((w33 >>> 19) | (w33 << 13)) ^ (w33 >>> 10)) +
        w28 +
        (((w20 >>> 7) | (w20 << 25)) ^ ((w20 >>> 18) | (w20 << 14)) ^ (w20 >>> 3)) +
        w19) | 0;
      t1 = (e + (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7))) +
        (d ^ (b & (c ^ d))) + 0x53380d13 + w35) | 0;
      a = (a + t1) | 0;
      e = (t1 + (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10))) +
        ((f & g) | (h & (f | g)))) | 0;
      // Round 36.
      var w36 = ((((w34 >>> 17) | (w34 << 15)) ^ ((w34 >>> 19) | (w34 << 13)) ^ (w34 >>> 10)) +
        w29 +
        (((w21 >>> 7) | (w21 << 25)) ^ ((w21 >>> 18) | (w21 << 14)) ^ (w21 >>> 3)) +
        w20) | 0;
      t1 = (d + (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7))) +
        (c ^ (a & (b ^ c))) + 0x650a7354 + w36) | 0;
      h = (h + t1) | 0;
      d = (t1 + (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10))) +
        ((e & f) | (g & (e | f)))) | 0;
      // Round 37.
      var w37 = ((((w35 >>> 17) | (w35 << 15)) ^ ((w35 >>> 19) | (w35 << 13)) ^ (w35 >>> 10)) +
        w30 +
        (((w22 >>> 7) | (w22 << 25)) ^ ((w22 >>> 18) | (w22 << 14)) ^ (w22 >>> 3)) +
        w21) | 0;
      t1 = (c + (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7))) +
        (b ^ (h & (a ^ b))) + 0x766a0abb + w37) | 0;
      g = (g + t1) | 0;
      c = (t1 + (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10))) +
        ((d & e) | (f & (d | e)))) | 0;
      // Round 38.
      var w38 = ((((w36 >>> 17) | (w36 << 15)) ^ ((w36 >>> 19) | (w36 << 13)) ^ (w36 >>> 10)) +
        w31 +
        (((w23 >>> 7) | (w23 << 25)) ^ ((w23 >>> 18) | (w23 << 14)) ^ (w23 >>> 3)) +
        w22) | 0;
      t1 = (b + (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7))) +
        (a ^ (g & (h ^ a))) + (0x81c2c92e | 0) + w38) | 0;
      f = (f + t1) | 0;
      b = (t1 + (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10))) +
        ((c & d) | (e & (c | d)))) | 0;
      // Round 39.
      var w39 = ((((w37 >>> 17) | (w37 << 15)) ^ ((w37 >>> 19) | (w37 << 13)) ^ (w37 >>> 10)) +
        w32 +
        (((w24 >>> 7) | (w24 << 25)) ^ ((w24 >>> 18) | (w24 << 14)) ^ (w24 >>> 3)) +
        w23) | 0;
      t1 = (a + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) +
        (h ^ (f & (g ^ h))) + (0x92722c85 | 0) + w39) | 0;
      e = (e + t1) | 0;
      a = (t1 + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) +
        ((b & c) | (d & (b | c)))) | 0;
      // Round 40.
      var w40 = ((((w38 >>> 17) | (w38 << 15)) ^ ((w38 >>> 19) | (w38 << 13)) ^ (w38 >>> 10)) +
        w33 +
        (((w25 >>> 7) | (w25 << 25)) ^ ((w25 >>> 18) | (w25 << 14)) ^ (w25 >>> 3)) +
        w24) | 0;
      t1 = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        (g ^ (e & (f ^ g))) + (0xa2bfe8a1 | 0) + w40) | 0;
      d = (d + t1) | 0;
      h = (t1 + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) | (c & (a | b)))) | 0;
      // Round 41.
      var w41 = ((((w39 >>> 17) | (w39 << 15)) ^ ((w39 >>> 19) | (w39 << 13)) ^ (w39 >>> 10)) +
        w34 +
        (((w26 >>> 7) | (w26 << 25)) ^ ((w26 >>> 18) | (w26 << 14)) ^ (w26 >>> 3)) +
        w25) | 0;
      t1 = (g + (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7))) +
        (f ^ (d & (e ^ f))) + (0xa81a664b | 0) + w41) | 0;
      c = (c + t1) | 0;
      g = (t1 + (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10))) +
        ((h & a) | (b & (h | a)))) | 0;
      // Round 42.
      var w42 = ((((w40 >>> 17) | (w40 << 15)) ^ ((w40 >>> 19) | (w40 << 13)) ^ (w40 >>> 10)) +
        w35 +
        (((w27 >>> 7) | (w27 << 25)) ^ ((w27 >>> 18) | (w27 << 14)) ^ (w27 >>> 3)) +
        w26) | 0;
      t1 = (f + (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7))) +
        (e ^ (c & (d ^ e))) + (0xc24b8b70 | 0) + w42) | 0;
      b = (b + t1) | 0;
      f = (t1 + (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10))) +
        ((g & h) | (a & (g | h)))) | 0;
      // Round 43.
      var w43 = ((((w41 >>> 17) | (w41 << 15)) ^ ((w41 >>> 19) | (w41 << 13)) ^ (w41 >>> 10)) +
        w36 +
        (((w28 >>> 7) | (w28 << 25)) ^ ((w28 >>> 18) | (w28 << 14)) ^ (w28 >>> 3)) +
        w27) | 0;
      t1 = (e + (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7))) +
        (d ^ (b & (c ^ d))) + (0xc76c51a3 | 0) + w43) | 0;
      a = (a + t1) | 0;
      e = (t1 + (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10))) +
        ((f & g) | (h & (f | g)))) | 0;
      // Round 44.
      var w44 = ((((w42 >>> 17) | (w42 << 15)) ^ ((w42 >>> 19) | (w42 << 13)) ^ (w42 >>> 10)) +
        w37 +
        (((w29 >>> 7) | (w29 << 25)) ^ ((w29 >>> 18) | (w29 << 14)) ^ (w29 >>> 3)) +
        w28) | 0;
      t1 = (d + (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7))) +
        (c ^ (a & (b ^ c))) + (0xd192e819 | 0) + w44) | 0;
      h = (h + t1) | 0;
      d = (t1 + (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10))) +
        ((e & f) | (g & (e | f)))) | 0;
      // Round 45.
      var w45 = ((((w43 >>> 17) | (w43 << 15)) ^ ((w43 >>> 19) | (w43 << 13)) ^ (w43 >>> 10)) +
        w38 +
        (((w30 >>> 7) | (w30 << 25)) ^ ((w30 >>> 18) | (w30 << 14)) ^ (w30 >>> 3)) +
        w29) | 0;
      t1 = (c + (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7))) +
        (b ^ (h & (a ^ b))) + (0xd6990624 | 0) + w45) | 0;
      g = (g + t1) | 0;
      c = (t1 + (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10))) +
        ((d & e) | (f & (d | e)))) | 0;
      // Round 46.
      var w46 = ((((w44 >>> 17) | (w44 << 15)) ^ ((w44 >>> 19) | (w44 << 13)) ^ (w44 >>> 10)) +
        w39 +
        (((w31 >>> 7) | (w31 << 25)) ^ ((w31 >>> 18) | (w31 << 14)) ^ (w31 >>> 3)) +
        w30) | 0;
      t1 = (b + (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7))) +
        (a ^ (g & (h ^ a))) + (0xf40e3585 | 0) + w46) | 0;
      f = (f + t1) | 0;
      b = (t1 + (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10))) +
        ((c & d) | (e & (c | d)))) | 0;
      // Round 47.
      var w47 = ((((w45 >>> 17) | (w45 << 15)) ^ ((w45 >>> 19) | (w45 << 13)) ^ (w45 >>> 10)) +
        w40 +
        (((w32 >>> 7) | (w32 << 25)) ^ ((w32 >>> 18) | (w32 << 14)) ^ (w32 >>> 3)) +
        w31) | 0;
      t1 = (a + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) +
        (h ^ (f & (g ^ h))) + 0x106aa070 + w47) | 0;
      e = (e + t1) | 0;
      a = (t1 + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) +
        ((b & c) | (d & (b | c)))) | 0;
      // Round 48.
      var w48 = ((((w46 >>> 17) | (w46 << 15)) ^ ((w46 >>> 19) | (w46 << 13)) ^ (w46 >>> 10)) +
        w41 +
        (((w33 >>> 7) | (w33 << 25)) ^ ((w33 >>> 18) | (w33 << 14)) ^ (w33 >>> 3)) +
        w32) | 0;
      t1 = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        (g ^ (e & (f ^ g))) + 0x19a4c116 + w48) | 0;
      d = (d + t1) | 0;
      h = (t1 + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) | (c & (a | b)))) | 0;
      // Round 49.
      var w49 = ((((w47 >>> 17) | (w47 << 15)) ^ ((w47 >>> 19) | (w47 << 13)) ^ (w47 >>> 10)) +
        w42 +
        (((w34 >>> 7) | (w34 << 25)) ^ ((w34 >>> 18) | (w34 << 14)) ^ (w34 >>> 3)) +
        w33) | 0;
      t1 = (g + (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7))) +
        (f ^ (d & (e ^ f))) + 0x1e376c08 + w49) | 0;
      c = (c + t1) | 0;
      g = (t1 + (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10))) +
        ((h & a) | (b & (h | a)))) | 0;
      // Round 50.
      var w50 = ((((w48 >>> 17) | (w48 << 15)) ^ ((w48 >>> 19) | (w48 << 13)) ^ (w48 >>> 10)) +
        w43 +
        (((w35 >>> 7) | (w35 << 25)) ^ ((w35 >>> 18) | (w35 << 14)) ^ (w35 >>> 3)) +
        w34) | 0;
      t1 = (f + (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7))) +
        (e ^ (c & (d ^ e))) + 0x2748774c + w50) | 0;
      b = (b + t1) | 0;
      f = (t1 + (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10))) +
        ((g & h) | (a & (g | h)))) | 0;
      // Round 51.
      var w51 = ((((w49 >>> 17) | (w49 << 15)) ^ ((w49 >>> 19) | (w49 << 13)) ^ (w49 >>> 10)) +
        w44 +
        (((w36 >>> 7) | (w36 << 25)) ^ ((w36 >>> 18) | (w36 << 14)) ^ (w36 >>> 3)) +
        w35) | 0;
      t1 = (e + (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7))) +
        (d ^ (b & (c ^ d))) + 0x34b0bcb5 + w51) | 0;
      a = (a + t1) | 0;
      e = (t1 + (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10))) +
        ((f & g) | (h & (f | g)))) | 0;
      // Round 52.
      var w52 = ((((w50 >>> 17) | (w50 << 15)) ^ ((w50 >>> 19) | (w50 << 13)) ^ (w50 >>> 10)) +
        w45 +
        (((w37 >>> 7) | (w37 << 25)) ^ ((w37 >>> 18) | (w37 << 14)) ^ (w37 >>> 3)) +
        w36) | 0;
      t1 = (d + (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7))) +
        (c ^ (a & (b ^ c))) + 0x391c0cb3 + w52) | 0;
      h = (h + t1) | 0;
      d = (t1 + (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10))) +
        ((e & f) | (g & (e | f)))) | 0;
      // Round 53.
      var w53 = ((((w51 >>> 17) | (w51 << 15)) ^ ((w51 >>> 19) | (w51 << 13)) ^ (w51 >>> 10)) +
        w46 +
        (((w38 >>> 7) | (w38 << 25)) ^ ((w38 >>> 18) | (w38 << 14)) ^ (w38 >>> 3)) +
        w37) | 0;
      t1 = (c + (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7))) +
        (b ^ (h & (a ^ b))) + 0x4ed8aa4a + w53) | 0;
      g = (g + t1) | 0;
      c = (t1 + (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10))) +
        ((d & e) | (f & (d | e)))) | 0;
      // Round 54.
      var w54 = ((((w52 >>> 17) | (w52 << 15)) ^ ((w52 >>> 19) | (w52 << 13)) ^ (w52 >>> 10)) +
        w47 +
        (((w39 >>> 7) | (w39 << 25)) ^ ((w39 >>> 18) | (w39 << 14)) ^ (w39 >>> 3)) +
        w38) | 0;
      t1 = (b + (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7))) +
        (a ^ (g & (h ^ a))) + 0x5b9cca4f + w54) | 0;
      f = (f + t1) | 0;
      b = (t1 + (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10))) +
        ((c & d) | (e & (c | d)))) | 0;
      // Round 55.
      var w55 = ((((w53 >>> 17) | (w53 << 15)) ^ ((w53 >>> 19) | (w53 << 13)) ^ (w53 >>> 10)) +
        w48 +
        (((w40 >>> 7) | (w40 << 25)) ^ ((w40 >>> 18) | (w40 << 14)) ^ (w40 >>> 3)) +
        w39) | 0;
      t1 = (a + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) +
        (h ^ (f & (g ^ h))) + 0x682e6ff3 + w55) | 0;
      e = (e + t1) | 0;
      a = (t1 + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) +
        ((b & c) | (d & (b | c)))) | 0;
      // Round 56.
      var w56 = ((((w54 >>> 17) | (w54 << 15)) ^ ((w54 >>> 19) | (w54 << 13)) ^ (w54 >>> 10)) +
        w49 +
        (((w41 >>> 7) | (w41 << 25)) ^ ((w41 >>> 18) | (w41 << 14)) ^ (w41 >>> 3)) +
        w40) | 0;
      t1 = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        (g ^ (e & (f ^ g))) + 0x748f82ee + w56) | 0;
      d = (d + t1) | 0;
      h = (t1 + (((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) | (c & (a | b)))) | 0;
      // Round 57.
      var w57 = ((((w55 >>> 17) | (w55 << 15)) ^ ((w55 >>> 19) | (w55 << 13)) ^ (w55 >>> 10)) +
        w50 +
        (((w42 >>> 7) | (w42 << 25)) ^ ((w42 >>> 18) | (w42 << 14)) ^ (w42 >>> 3)) +
        w41) | 0;
      t1 = (g + (((d >>> 6) | (d << 26)) ^ ((d >>> 11) | (d << 21)) ^ ((d >>> 25) | (d << 7))) +
        (f ^ (d & (e ^ f))) + 0x78a5636f + w57) | 0;
      c = (c + t1) | 0;
      g = (t1 + (((h >>> 2) | (h << 30)) ^ ((h >>> 13) | (h << 19)) ^ ((h >>> 22) | (h << 10))) +
        ((h & a) | (b & (h | a)))) | 0;
      // Round 58.
      var w58 = ((((w56 >>> 17) | (w56 << 15)) ^ ((w56 >>> 19) | (w56 << 13)) ^ (w56 >>> 10)) +
        w51 +
        (((w43 >>> 7) | (w43 << 25)) ^ ((w43 >>> 18) | (w43 << 14)) ^ (w43 >>> 3)) +
        w42) | 0;
      t1 = (f + (((c >>> 6) | (c << 26)) ^ ((c >>> 11) | (c << 21)) ^ ((c >>> 25) | (c << 7))) +
        (e ^ (c & (d ^ e))) + (0x84c87814 | 0) + w58) | 0;
      b = (b + t1) | 0;
      f = (t1 + (((g >>> 2) | (g << 30)) ^ ((g >>> 13) | (g << 19)) ^ ((g >>> 22) | (g << 10))) +
        ((g & h) | (a & (g | h)))) | 0;
      // Round 59.
      var w59 = ((((w57 >>> 17) | (w57 << 15)) ^ ((w57 >>> 19) | (w57 << 13)) ^ (w57 >>> 10)) +
        w52 +
        (((w44 >>> 7) | (w44 << 25)) ^ ((w44 >>> 18) | (w44 << 14)) ^ (w44 >>> 3)) +
        w43) | 0;
      t1 = (e + (((b >>> 6) | (b << 26)) ^ ((b >>> 11) | (b << 21)) ^ ((b >>> 25) | (b << 7))) +
        (d ^ (b & (c ^ d))) + (0x8cc70208 | 0) + w59) | 0;
      a = (a + t1) | 0;
      e = (t1 + (((f >>> 2) | (f << 30)) ^ ((f >>> 13) | (f << 19)) ^ ((f >>> 22) | (f << 10))) +
        ((f & g) | (h & (f | g)))) | 0;
      // Round 60.
      var w60 = ((((w58 >>> 17) | (w58 << 15)) ^ ((w58 >>> 19) | (w58 << 13)) ^ (w58 >>> 10)) +
        w53 +
        (((w45 >>> 7) | (w45 << 25)) ^ ((w45 >>> 18) | (w45 << 14)) ^ (w45 >>> 3)) +
        w44) | 0;
      t1 = (d + (((a >>> 6) | (a << 26)) ^ ((a >>> 11) | (a << 21)) ^ ((a >>> 25) | (a << 7))) +
        (c ^ (a & (b ^ c))) + (0x90befffa | 0) + w60) | 0;
      h = (h + t1) | 0;
      d = (t1 + (((e >>> 2) | (e << 30)) ^ ((e >>> 13) | (e << 19)) ^ ((e >>> 22) | (e << 10))) +
        ((e & f) | (g & (e | f)))) | 0;
      // Round 61.
      var w61 = ((((w59 >>> 17) | (w59 << 15)) ^ ((w59 >>> 19) | (w59 << 13)) ^ (w59 >>> 10)) +
        w54 +
        (((w46 >>> 7) | (w46 << 25)) ^ ((w46 >>> 18) | (w46 << 14)) ^ (w46 >>> 3)) +
        w45) | 0;
      t1 = (c + (((h >>> 6) | (h << 26)) ^ ((h >>> 11) | (h << 21)) ^ ((h >>> 25) | (h << 7))) +
        (b ^ (h & (a ^ b))) + (0xa4506ceb | 0) + w61) | 0;
      g = (g + t1) | 0;
      c = (t1 + (((d >>> 2) | (d << 30)) ^ ((d >>> 13) | (d << 19)) ^ ((d >>> 22) | (d << 10))) +
        ((d & e) | (f & (d | e)))) | 0;
      // Round 62.
      var w62 = ((((w60 >>> 17) | (w60 << 15)) ^ ((w60 >>> 19) | (w60 << 13)) ^ (w60 >>> 10)) +
        w55 +
        (((w47 >>> 7) | (w47 << 25)) ^ ((w47 >>> 18) | (w47 << 14)) ^ (w47 >>> 3)) +
        w46) | 0;
      t1 = (b + (((g >>> 6) | (g << 26)) ^ ((g >>> 11) | (g << 21)) ^ ((g >>> 25) | (g << 7))) +
        (a ^ (g & (h ^ a))) + (0xbef9a3f7 | 0) + w62) | 0;
      f = (f + t1) | 0;
      b = (t1 + (((c >>> 2) | (c << 30)) ^ ((c >>> 13) | (c << 19)) ^ ((c >>> 22) | (c << 10))) +
        ((c & d) | (e & (c | d)))) | 0;
      // Round 63.
      var w63 = ((((w61 >>> 17) | (w61 << 15)) ^ ((w61 >>> 19) | (w61 << 13)) ^ (w61 >>> 10)) +
        w56 +
        (((w48 >>> 7) | (w48 << 25)) ^ ((w48 >>> 18) | (w48 << 14)) ^ (w48 >>> 3)) +
        w47) | 0;
      t1 = (a + (((f >>> 6) | (f << 26)) ^ ((f >>> 11) | (f << 21)) ^ ((f >>> 25) | (f << 7))) +
        (h ^ (f & (g ^ h))) + (0xc67178f2 | 0) + w63) | 0;
      e = (e + t1) | 0;
      a = (t1 + (((b >>> 2) | (b << 30)) ^ ((b >>> 13) | (b << 19)) ^ ((b >>> 22) | (b << 10))) +
        ((b & c) | (d & (b | c)))) | 0;
      // End of rounds 7..63.
      // The digest's first words are IV[0] + a and IV[1] + b.
      if (Math.clz32((a + IV0) | 0) >= need0 && (need1 === 0 || Math.clz32((b + IV1) | 0) >= need1)) {
        this.hashes += n + 1;
        this.nonce = this.hi * TWO32 + (lo >>> 0);
        this.lo = (lo + 1) | 0;
        if (this.lo === 0) {
          this.nextHi();
        }
        return true;
      }
      lo = (lo + 1) | 0;
      if (lo === 0) {
        // On to the next high half: setHi updates pre in place.
        this.lo = 0;
        this.nextHi();
      }
    }
    this.hashes += limit;
    this.lo = lo;
    return false;
  };

  // runWasm is run with the WebAssembly engine: batches that stop at the
  // next high half, each with setHi's precomputation copied into the
  // module's memory (one module serves every puzzle of the worker).
  Puzzle.prototype.runWasm = function (limit) {
    var e = this.engine;
    var done = 0;
    while (done < limit) {
      var lo = this.lo >>> 0;
      var n = Math.min(limit - done, TWO32 - lo, WASM_BATCH);
      e.pre.set(this.pre);
      var r = e.run(lo | 0, n, this.mask0, this.mask1);
      if (r >= 0) {
        this.hashes += done + r + 1;
        this.nonce = this.hi * TWO32 + lo + r;
        this.advance(r + 1);
        return true;
      }
      done += n;
      this.advance(n);
    }
    this.hashes += limit;
    return false;
  };

  // advance moves the next nonce n further on, n at most to the end of
  // the high half.
  Puzzle.prototype.advance = function (n) {
    var lo = (this.lo >>> 0) + n;
    if (lo >= TWO32) {
      this.lo = 0;
      this.nextHi();
    } else {
      this.lo = lo | 0;
    }
  };

  // nextHi moves on to the next 2^32 nonces.
  Puzzle.prototype.nextHi = function () {
    if (this.hi >= MAX_HI) {
      throw new Error("pow: no nonce below 2^53");
    }
    this.setHi(this.hi + 1);
  };

  // newPuzzle checks the arguments and returns a Puzzle searched by
  // engine (null: JavaScript), or throws.
  function newPuzzle(seedHex, index, bits, start, engine) {
    var seed = parseSeed(seedHex);
    if (!seed) {
      throw new Error("pow: the seed is not 32 hex digits");
    }
    if (!validBits(bits)) {
      throw new Error("pow: bits must be an integer from 0 to 64");
    }
    if (typeof index !== "number" || index < 0 || index > 0xffffffff || Math.floor(index) !== index) {
      throw new Error("pow: a sub-puzzle index must be a uint32");
    }
    start = start === undefined ? 0 : start;
    if (!validStart(start)) {
      throw new Error("pow: start must be an integer below 2^53");
    }
    return new Puzzle(seed, index, bits, start, engine);
  }

  // --- engines ----------------------------------------------------------

  // ENGINES are the WebAssembly engines, fastest first.
  var ENGINES = ["simd", "scalar"];

  // wasmURLs returns the modules' URLs for the script at url, or null
  // when its name is not pow-worker.<hash>.js.
  function wasmURLs(url) {
    var m = typeof url === "string" && /^([^?#]*\/)pow-worker\.([0-9a-f]+)\.js(?:[?#].*)?$/.exec(url);
    if (!m) {
      return null;
    }
    return {simd: m[1] + "pow-simd." + m[2] + ".wasm", scalar: m[1] + "pow-scalar." + m[2] + ".wasm"};
  }

  var urls = null;
  // loading[name] is the promise of engine name; loaded[name] the engine
  // once it has loaded.
  var loading = {};
  var loaded = {};

  // validEngine reports whether name can be asked for (undefined: the
  // fastest).
  function validEngine(name) {
    return name === undefined || name === "js" || ENGINES.indexOf(name) >= 0;
  }

  // loadEngine fetches, checks and instantiates module name. The promise
  // resolves to {name, run, pre} (pre: the module's memory where run
  // reads setHi's precomputation), or to null when the module cannot run
  // here; it never rejects.
  function loadEngine(name) {
    if (!urls || typeof WebAssembly !== "object" || typeof fetch !== "function") {
      return Promise.resolve(null);
    }
    return fetch(urls[name], {credentials: "same-origin"}).then(function (resp) {
      if (!resp.ok) {
        throw new Error("pow: " + urls[name] + ": " + resp.status);
      }
      return resp.arrayBuffer();
    }).then(function (buf) {
      if (!WebAssembly.validate(buf)) {
        return null;
      }
      return WebAssembly.instantiate(buf).then(function (res) {
        var x = res.instance.exports;
        var e = {name: name, run: x.run, pre: new Int32Array(x.mem.buffer, 0, 15)};
        loaded[name] = e;
        return e;
      });
    }).then(null, function () {
      return null;
    });
  }

  // engine returns the promise of the first engine from name on (see
  // ENGINES; undefined: from the fastest) that loads, or of null for
  // JavaScript.
  function engine(name) {
    if (name === "js") {
      return Promise.resolve(null);
    }
    var i = name === undefined ? 0 : ENGINES.indexOf(name);
    if (i < 0 || i >= ENGINES.length) {
      return Promise.resolve(null);
    }
    var n = ENGINES[i];
    if (!loading[n]) {
      loading[n] = loadEngine(n);
    }
    return loading[n].then(function (e) {
      return e || engine(ENGINES[i + 1] || "js");
    });
  }

  function engineName(e) {
    return e ? e.name : "js";
  }

  // --- page -------------------------------------------------------------

  if (typeof importScripts !== "function") {
    // A page: pow.js searches in the main thread with this.
    var script = typeof document === "object" && document.currentScript;
    urls = wasmURLs(script && script.src);
    scope.waitroomPow = {
      load: function (name) {
        if (!validEngine(name)) {
          return Promise.reject(new Error("pow: no engine " + name));
        }
        return engine(name).then(engineName);
      },
      puzzle: function (seedHex, index, bits, start, name) {
        if (name !== undefined && name !== "js" && !loaded[name]) {
          throw new Error("pow: engine " + name + " is not loaded");
        }
        return newPuzzle(seedHex, index, bits, start, loaded[name]);
      }
    };
    return;
  }

  // --- worker -----------------------------------------------------------

  urls = wasmURLs(scope.location && scope.location.href);
  // Start loading the fastest engine while pow.js sends the work.
  engine(undefined);

  // The worker: a queue of searches, run a chunk at a time.
  var jobs = [];
  var pending = false;
  var tick = new MessageChannel();
  // inbox is the promise of the last message handled: each waits for the
  // one before, so that a cancel never overtakes the work it cancels.
  var inbox = Promise.resolve();

  function schedule() {
    if (!pending && jobs.length > 0) {
      pending = true;
      tick.port2.postMessage(0);
    }
  }

  tick.port1.onmessage = function () {
    pending = false;
    if (jobs.length === 0) {
      return;
    }
    var job = jobs[0];
    var before = job.p.hashes;
    var found;
    try {
      found = job.p.run(job.p.engine ? WASM_CHUNK : CHUNK);
    } catch (err) {
      jobs.shift();
      scope.postMessage({type: "error", message: String(err && err.message || err)});
      schedule();
      return;
    }
    var did = job.p.hashes - before;
    var name = engineName(job.p.engine);
    if (found) {
      jobs.shift();
      scope.postMessage({type: "solved", index: job.index, nonce: job.p.nonce, hashes: did, engine: name});
    } else {
      scope.postMessage({type: "progress", index: job.index, hashes: did, engine: name});
    }
    schedule();
  };

  // handle acts on one message; it returns a promise when it waits for
  // an engine.
  function handle(m) {
    if (m.cancel) {
      jobs = jobs.filter(function (j) {
        return m.cancel.indexOf(j.index) < 0;
      });
    }
    if (!m.puzzles) {
      schedule();
      return undefined;
    }
    if (!validEngine(m.engine)) {
      scope.postMessage({type: "error", message: "pow: no engine " + m.engine});
      return undefined;
    }
    return engine(m.engine).then(function (e) {
      for (var i = 0; i < m.puzzles.length; i++) {
        try {
          jobs.push({index: m.puzzles[i], p: newPuzzle(m.seed, m.puzzles[i], m.bits, m.start, e)});
        } catch (err) {
          scope.postMessage({type: "error", message: err.message});
          return;
        }
      }
      schedule();
    });
  }

  scope.onmessage = function (ev) {
    var m = ev.data || {};
    inbox = inbox.then(function () {
      return handle(m);
    }).then(null, function (err) {
      scope.postMessage({type: "error", message: String(err && err.message || err)});
    });
  };
})(self);
