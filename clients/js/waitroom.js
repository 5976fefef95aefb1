// waitroom's visitor client for single-page apps that draw their own
// waiting UI. An ES module with no dependencies; it runs in browsers and in
// Node 18 or later (global fetch, AbortController, setTimeout).
//
// It speaks the visitor API of docs/visitor-api.md: it asks the bot
// defence what a join costs (GET {prefix}/api/challenge), solves the proof
// of work itself or with the app's solver, joins (POST {prefix}/api/join),
// then polls GET {prefix}/api/status at the server's refresh_seconds plus
// jitter, backing off on 429 (Retry-After), 5xx and network errors, and
// tells the app what happens through events. The ticket and pass are
// cookies the server sets; a same-origin fetch carries them.
//
// Its sections, in order:
//
//   constants   defaults and limits
//   pow         the proof of work: SHA-256 of one block, the search
//   room        WaitingRoom: options, events, start/stop, join, poll,
//               answers, backoff

// --- constants ------------------------------------------------------------

const DEFAULT_PREFIX = "/_wr";
const DEFAULT_REFRESH = 5; // seconds, when an answer carries none
const MIN_REFRESH = 0.2; // seconds: the fastest the server may ask for
const DEFAULT_JITTER = 0.2; // a poll waits refresh × (1 + up to this)
const DEFAULT_MAX_BACKOFF = 60; // seconds between retries after errors
const DEFAULT_TIMEOUT = 15000; // ms for one request
const MAX_RETRY_AFTER = 3600; // seconds: a longer Retry-After is capped
const SCHEDULED_RECHECK = 300; // seconds: re-join at least this often before opening
const NO_TICKET_LIMIT = 3; // no_ticket answers in a row: cookies are not kept
const CHALLENGE_RETRIES = 3; // spent or refused challenges in a row
const SLICE_MS = 25; // the built-in solver hashes this long between yields

// Statuses after which nothing changes by itself: polling ends.
const FINAL = new Set(["admitted", "sold_out", "closed"]);

// --- pow ------------------------------------------------------------------

// A challenge's sub-puzzle i is solved by a nonce n (0 <= n < 2^53) such
// that SHA-256(seed (16 bytes) || i (uint32 BE) || n (uint64 BE)) starts
// with at least bits zero bits (challenge.Solve in Go). The message is 28
// bytes: one SHA-256 block, hashed here with a compression specialised
// for it. WebCrypto's crypto.subtle.digest costs a promise per hash, which
// makes it about thirty times slower for this (70,000 hashes/s measured in
// Node 20, batched, against 2 million and more here), so it is not used.

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const IV = new Int32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);
const TWO32 = 4294967296;
const NONCE_LIMIT = 2 ** 53;

// hashBlock computes SHA-256 of the 28-byte message whose first seven
// big-endian words are m[0..6] into out[0..7] (signed 32-bit words); w is
// a 64-word scratch schedule.
function hashBlock(m, w, out) {
  for (let t = 0; t < 7; t++) w[t] = m[t];
  w[7] = 0x80000000 | 0;
  for (let t = 8; t < 15; t++) w[t] = 0;
  w[15] = 224; // the message length in bits
  for (let t = 16; t < 64; t++) {
    const a = w[t - 15];
    const b = w[t - 2];
    const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
    const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
    w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
  }
  let a = IV[0], b = IV[1], c = IV[2], d = IV[3], e = IV[4], f = IV[5], g = IV[6], h = IV[7];
  for (let t = 0; t < 64; t++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[t] + w[t]) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g; g = f; f = e; e = (d + t1) | 0;
    d = c; c = b; b = a; a = (t1 + t2) | 0;
  }
  out[0] = (IV[0] + a) | 0; out[1] = (IV[1] + b) | 0; out[2] = (IV[2] + c) | 0; out[3] = (IV[3] + d) | 0;
  out[4] = (IV[4] + e) | 0; out[5] = (IV[5] + f) | 0; out[6] = (IV[6] + g) | 0; out[7] = (IV[7] + h) | 0;
}

// leadingZeros reports whether the digest starts with at least bits zero
// bits (0..64).
function leadingZeros(h, bits) {
  if (bits <= 0) return true;
  if (bits <= 32) return h[0] >>> (32 - bits) === 0;
  return h[0] === 0 && h[1] >>> (64 - bits) === 0;
}

function powError(code, message) {
  const err = new Error("waitroom: pow: " + message);
  err.code = code;
  return err;
}

/**
 * Hashes the proof-of-work message of sub-puzzle `index` with `nonce`:
 * SHA-256(seed || index (uint32 BE) || nonce (uint64 BE)), as a
 * Uint8Array of 32 bytes.
 */
export function powDigest(seedHex, index, nonce) {
  const m = powWords(seedHex, index);
  m[5] = Math.floor(nonce / TWO32) | 0;
  m[6] = nonce % TWO32 | 0;
  const out = new Int32Array(8);
  hashBlock(m, new Int32Array(64), out);
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 8; i++) {
    bytes[4 * i] = out[i] >>> 24;
    bytes[4 * i + 1] = (out[i] >>> 16) & 255;
    bytes[4 * i + 2] = (out[i] >>> 8) & 255;
    bytes[4 * i + 3] = out[i] & 255;
  }
  return bytes;
}

function powWords(seedHex, index) {
  const m = new Int32Array(7);
  for (let i = 0; i < 4; i++) m[i] = parseInt(seedHex.slice(8 * i, 8 * i + 8), 16) | 0;
  m[4] = index | 0;
  return m;
}

function checkChallenge(c) {
  if (!c || typeof c !== "object") return "no challenge";
  if (typeof c.seed !== "string" || !/^[0-9a-fA-F]{32}$/.test(c.seed)) return "the seed is not 32 hex digits";
  if (!Number.isInteger(c.bits) || c.bits < 0 || c.bits > 64) return "bits must be an integer from 0 to 64";
  if (!Number.isInteger(c.puzzles) || c.puzzles < 1 || c.puzzles > 65536) return "puzzles must be an integer from 1 to 65536";
  if (c.expires_at !== undefined && Number.isNaN(Date.parse(c.expires_at))) return "expires_at is not a time";
  return "";
}

const yieldTurn = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Solves a proof-of-work challenge ({token, seed, bits, puzzles,
 * expires_at}, as GET {prefix}/api/challenge answers it) in this thread,
 * yielding to the event loop every few tens of ms. Resolves to the nonces
 * of sub-puzzles 0..puzzles-1; rejects with an Error whose code is
 * "invalid", "expired" or "aborted".
 */
export async function solvePow(challenge, options = {}) {
  const problem = checkChallenge(challenge);
  if (problem) throw powError("invalid", problem);
  const { signal, onProgress } = options;
  const skew = Number.isFinite(options.skew) ? options.skew : 0;
  const deadline = challenge.expires_at === undefined ? Infinity : Date.parse(challenge.expires_at) - skew;
  const k = challenge.puzzles;
  const bits = challenge.bits;
  const w = new Int32Array(64);
  const out = new Int32Array(8);
  const nonces = [];
  const chunk = 4096;
  for (let i = 0; i < k; i++) {
    const m = powWords(challenge.seed, i);
    let n = 0;
    for (;;) {
      if (signal && signal.aborted) throw powError("aborted", "aborted");
      if (Date.now() >= deadline) throw powError("expired", "the challenge expired");
      const began = Date.now();
      let found = -1;
      while (found < 0 && Date.now() - began < SLICE_MS) {
        const end = Math.min(n + chunk, NONCE_LIMIT);
        for (; n < end; n++) {
          m[5] = n < TWO32 ? 0 : Math.floor(n / TWO32) | 0;
          m[6] = n % TWO32 | 0;
          hashBlock(m, w, out);
          if (leadingZeros(out, bits)) {
            found = n;
            break;
          }
        }
        if (n >= NONCE_LIMIT && found < 0) throw powError("invalid", "no nonce below 2^53 solves a sub-puzzle");
      }
      if (found >= 0) {
        nonces.push(found);
        break;
      }
      if (typeof onProgress === "function") onProgress(i / k, { solved: i, puzzles: k });
      await yieldTurn();
    }
    if (typeof onProgress === "function") onProgress((i + 1) / k, { solved: i + 1, puzzles: k });
  }
  return nonces;
}

// --- room -----------------------------------------------------------------

/**
 * A visitor's place in one event's waiting room. See README.md.
 */
export class WaitingRoom {
  constructor(options) {
    const o = options || {};
    if (typeof o.event !== "string" || o.event === "") throw new TypeError("waitroom: options.event is required");
    const prefix = o.prefix === undefined ? DEFAULT_PREFIX : String(o.prefix);
    if (!/^(\/[^/?#]+)+$/.test(prefix)) throw new TypeError("waitroom: options.prefix must start with / and not end with one");
    this.event = o.event;
    this.returnTo = o.returnTo;
    this.api = (o.baseURL ? String(o.baseURL).replace(/\/+$/, "") : "") + prefix + "/api/";
    const f = o.fetch || (typeof fetch === "function" ? fetch.bind(globalThis) : null);
    if (typeof f !== "function") throw new TypeError("waitroom: no fetch: pass options.fetch");
    // Called as a plain function, never as this object's method: a
    // browser's fetch refuses any this but the window.
    this.fetchImpl = f;
    this.solve = typeof o.solve === "function" ? o.solve : solvePow;
    this.jitter = Number.isFinite(o.jitter) && o.jitter >= 0 ? o.jitter : DEFAULT_JITTER;
    this.maxBackoff = Number.isFinite(o.maxBackoff) && o.maxBackoff > 0 ? o.maxBackoff : DEFAULT_MAX_BACKOFF;
    this.timeout = Number.isFinite(o.timeout) && o.timeout > 0 ? o.timeout : DEFAULT_TIMEOUT;
    this.random = typeof o.random === "function" ? o.random : Math.random;
    this.listeners = new Map();
    this.running = false;
    // gen counts start()s and stop()s: an answer to a request of an
    // earlier run is dropped.
    this.gen = 0;
    this.timer = null;
    this.inflight = null; // AbortController of the request or solve under way
    this.refresh = DEFAULT_REFRESH;
    this.fails = 0;
    this.noTicket = 0;
    this.challengeRetries = 0;
    this.skew = 0;
    /** The last status answer, or null. */
    this.status = null;
    this.stopped = false; // for good: the signal aborted
    if (o.signal) {
      this.stopped = o.signal.aborted;
      o.signal.addEventListener("abort", () => {
        this.stopped = true;
        this.stop();
      }, { once: true });
    }
  }

  /**
   * Calls fn(detail) on each of the event's occurrences; returns a function
   * that removes it.
   */
  on(name, fn) {
    if (!this.listeners.has(name)) this.listeners.set(name, new Set());
    this.listeners.get(name).add(fn);
    return () => this.off(name, fn);
  }

  off(name, fn) {
    const set = this.listeners.get(name);
    if (set) set.delete(fn);
  }

  emit(name, detail) {
    const set = this.listeners.get(name);
    if (!set) return;
    for (const fn of [...set]) {
      try {
        fn(detail);
      } catch (err) {
        // A listener's error is the app's: report it without stopping.
        setTimeout(() => {
          throw err;
        }, 0);
      }
    }
  }

  /**
   * Starts: a status poll first (a visitor who already holds a ticket
   * keeps their place without solving anything again), then a join when
   * there is no ticket. Calling it while running does nothing.
   */
  start() {
    if (this.running || this.stopped) return;
    this.running = true;
    this.gen++;
    this.fails = 0;
    this.noTicket = 0;
    this.challengeRetries = 0;
    this.poll();
  }

  /** Ends timers, the request and the proof of work under way. */
  stop() {
    this.running = false;
    this.gen++;
    clearTimeout(this.timer);
    this.timer = null;
    if (this.inflight) {
      this.inflight.abort();
      this.inflight = null;
    }
  }

  later(seconds, fn) {
    clearTimeout(this.timer);
    if (!this.running) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      fn.call(this);
    }, Math.max(seconds, MIN_REFRESH) * 1000);
  }

  // wait is a poll's delay: refresh_seconds plus up to jitter of it, never
  // less than refresh_seconds.
  wait(seconds) {
    return seconds * (1 + this.random() * this.jitter);
  }

  async request(method, path, body) {
    const ctl = new AbortController();
    this.inflight = ctl;
    const to = setTimeout(() => ctl.abort(), this.timeout);
    const init = {
      method,
      headers: { Accept: "application/json" },
      credentials: "same-origin",
      cache: "no-store",
      signal: ctl.signal,
    };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    try {
      const fetchImpl = this.fetchImpl;
      const r = await fetchImpl(this.api + path, init);
      let j = null;
      try {
        j = await r.json();
      } catch {
        j = null;
      }
      const date = Date.parse(r.headers.get("Date") || "");
      if (!Number.isNaN(date)) {
        const d = date - Date.now();
        this.skew = Math.abs(d) > 2500 ? d : 0;
      }
      return { status: r.status, body: j, retryAfter: r.headers.get("Retry-After") };
    } finally {
      clearTimeout(to);
      if (this.inflight === ctl) this.inflight = null;
    }
  }

  statusPath() {
    let p = "status?event=" + encodeURIComponent(this.event);
    if (this.returnTo) p += "&return=" + encodeURIComponent(this.returnTo);
    return p;
  }

  async poll() {
    if (!this.running) return;
    const gen = this.gen;
    let res;
    try {
      res = await this.request("GET", this.statusPath());
    } catch (err) {
      if (gen === this.gen) this.failed(this.poll, err);
      return;
    }
    if (gen === this.gen) this.handle(res, this.poll);
  }

  async join() {
    if (!this.running) return;
    const gen = this.gen;
    let res;
    try {
      res = await this.request("GET", "challenge?event=" + encodeURIComponent(this.event));
    } catch (err) {
      if (gen === this.gen) this.failed(this.join, err);
      return;
    }
    if (gen !== this.gen) return;
    const b = res.body;
    if (res.status !== 200 || !b || typeof b.action !== "string") {
      this.handle(res, this.join);
      return;
    }
    const extra = {};
    if (b.action === "pow" && b.pow) {
      const ctl = new AbortController();
      this.inflight = ctl;
      this.emit("challenge", { kind: "pow", bits: b.pow.bits, puzzles: b.pow.puzzles });
      try {
        const nonces = await this.solve(b.pow, {
          signal: ctl.signal,
          skew: this.skew,
          onProgress: (fraction) => this.emit("progress", { fraction }),
        });
        extra.pow = { token: b.pow.token, nonces };
      } catch (err) {
        if (this.inflight === ctl) this.inflight = null;
        if (gen !== this.gen) return;
        if (err && err.code === "expired" && ++this.challengeRetries <= CHALLENGE_RETRIES) {
          this.join();
          return;
        }
        this.fatal("pow_failed", "the proof of work failed", { cause: err });
        return;
      }
      if (this.inflight === ctl) this.inflight = null;
      if (gen !== this.gen) return;
    } else if (b.action === "captcha") {
      this.fatal("captcha_required", "the bot defence asks for a CAPTCHA, which this client cannot show", { captcha: b.captcha });
      return;
    } else if (b.action !== "none") {
      this.fatal("bad_answer", "unknown challenge action " + JSON.stringify(b.action));
      return;
    }
    const body = { event: this.event, ...extra };
    if (this.returnTo) body.return = this.returnTo;
    try {
      res = await this.request("POST", "join", body);
    } catch (err) {
      if (gen === this.gen) this.failed(this.join, err);
      return;
    }
    if (gen !== this.gen) return;
    if (res.status === 200) this.challengeRetries = 0;
    this.handle(res, this.join);
  }

  // handle acts on an answer to a poll or a join; again is what to retry.
  handle(res, again) {
    if (!this.running) return;
    const b = res.body;
    if (res.status === 200 && b && typeof b.status === "string") {
      this.fails = 0;
      if (again === this.poll) this.noTicket = 0;
      if (again === this.join && b.status === "admitted") {
        // The pass cookie comes with a status answer: poll once for it.
        this.poll();
        return;
      }
      this.render(b);
      return;
    }
    const code = b && typeof b.error === "string" ? b.error : "";
    if (res.status === 401 && code === "no_ticket") {
      this.fails = 0;
      if (++this.noTicket > NO_TICKET_LIMIT) {
        this.fatal("cookies", "the ticket cookie is not kept: the browser refuses cookies, or the fetch carries none");
        return;
      }
      this.join();
      return;
    }
    if ((res.status === 403 || res.status === 409) && /^challenge_(expired|used|invalid|required)$/.test(code)) {
      if (++this.challengeRetries <= CHALLENGE_RETRIES) {
        this.join();
        return;
      }
    }
    if (res.status === 429) {
      const s = this.retryAfter(res.retryAfter);
      this.emit("error", { code: code || "rate_limited", status: 429, message: messageOf(b), retrying: true, retryIn: s });
      this.later(s, again);
      return;
    }
    if (res.status >= 500 || res.status === 408) {
      this.failed(again, null, res);
      return;
    }
    this.fatal(code || "http_" + res.status, messageOf(b) || "unexpected answer " + res.status, {
      status: res.status,
      loginURL: b && typeof b.login_url === "string" ? b.login_url : undefined,
    });
  }

  // retryAfter reads a Retry-After header (seconds or an HTTP date) as
  // seconds, never less than refresh_seconds, plus jitter.
  retryAfter(h) {
    let s = h == null ? NaN : Number(h);
    if (Number.isNaN(s) && h) s = (Date.parse(h) - Date.now() - this.skew) / 1000;
    if (!Number.isFinite(s) || s < 0) s = 0;
    s = Math.min(Math.max(s, this.refresh, MIN_REFRESH), MAX_RETRY_AFTER);
    return this.wait(s);
  }

  // failed backs off after a network error, a timeout or a 5xx:
  // exponentially from refresh_seconds, capped at maxBackoff, with "equal
  // jitter" (half fixed, half random), never sooner than refresh_seconds
  // or a Retry-After.
  failed(again, err, res) {
    if (!this.running) return;
    this.fails++;
    const d = Math.min(this.maxBackoff, Math.max(this.refresh, 1) * 2 ** this.fails);
    let s = Math.max(d / 2 + (this.random() * d) / 2, this.refresh);
    if (res && res.retryAfter != null) s = Math.max(s, this.retryAfter(res.retryAfter));
    const b = res && res.body;
    this.emit("error", {
      code: res ? (b && typeof b.error === "string" ? b.error : "http_" + res.status) : "network",
      status: res ? res.status : 0,
      message: res ? messageOf(b) : String((err && err.message) || err),
      retrying: true,
      retryIn: s,
      cause: err || undefined,
    });
    this.later(s, again);
  }

  fatal(code, message, extra) {
    this.stop();
    this.emit("error", { code, message, retrying: false, ...extra });
  }

  render(s) {
    this.status = s;
    const r = Number(s.refresh_seconds);
    this.refresh = Number.isFinite(r) && r > 0 ? Math.max(r, MIN_REFRESH) : DEFAULT_REFRESH;
    this.emit("status", s);
    if (FINAL.has(s.status)) {
      this.stop();
      this.emit(s.status, s);
      return;
    }
    this.emit("position", s);
    if (s.status === "scheduled") {
      // Join when the queue opens (spread over up to two seconds), and
      // look again now and then in case the opening moves.
      const until = (Date.parse(s.opens_at) - Date.now() - this.skew) / 1000;
      const s2 = until > 0 ? Math.min(until + this.random() * Math.min(2, this.refresh), SCHEDULED_RECHECK) : this.wait(this.refresh);
      this.later(s2, this.join);
      return;
    }
    this.later(this.wait(this.refresh), this.poll);
  }
}

function messageOf(b) {
  return b && typeof b.message === "string" ? b.message : "";
}
