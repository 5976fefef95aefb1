// The waiting room's proof-of-work solver, page side: it splits a
// challenge's sub-puzzles among Web Workers running pow-worker.js and
// reports progress. No dependencies; it defines one global function:
//
//   waitroomSolve(challenge, onProgress, options) -> Promise<number[]>
//
// challenge is the server's JSON: {token, seed: "<32 hex digits>", bits,
// puzzles, expires_at: "<RFC 3339>"}; the promise resolves to the nonces
// of sub-puzzles 0..puzzles-1, in order, for the answer
// {token, nonces}. onProgress (optional) is called with (fraction, info):
// fraction goes from 0 to 1 and never back; info is {solved, puzzles,
// hashes, engine} (engine: the hashing of the last report, "simd",
// "scalar" or "js"; see pow-worker.js). options is the worker URL, or an
// object:
//
//   worker   URL of pow-worker.js (its content-hashed name under the
//            prefix's /static/); challenge.worker_url when absent.
//   skew     the server's clock minus the page's, in ms, so that
//            expires_at is read on the server's clock (default 0).
//   threads  how many workers; default min(hardwareConcurrency || 2, 4,
//            puzzles). 0 searches in the page's main thread.
//   signal   an AbortSignal that stops the search.
//   engine   "simd", "scalar" or "js": the fastest hashing to try (the
//            slower ones are the fallbacks); default "simd".
//
// On failure the promise rejects with an Error whose code is "invalid"
// (a malformed challenge or options), "expired" (expires_at passed; the
// workers are stopped), "aborted" (signal) or "unavailable" (the search
// script could not be loaded, or the search failed).
//
// A worker is given one sub-puzzle at a time; when none is left to hand
// out, an idle worker joins a sub-puzzle still being searched, from a
// nonce 2^40 further on per helper, so that the last sub-puzzles do not
// keep the other cores idle. When Workers are missing, refused or fail
// to load, the search goes on in the main thread in slices of about 30 ms
// between setTimeout calls, with the same code (pow-worker.js loaded as a
// script).
(function () {
  "use strict";

  var MAX_WORKERS = 4;
  // Where the k-th helper on a sub-puzzle starts: k * 2^40.
  var HELPER_STRIDE = 1099511627776;
  // A sub-puzzle being searched counts for at most this much of itself in
  // the progress until it is solved.
  var PARTIAL_CAP = 0.9;
  // At most one progress report per this many ms, besides one per
  // solved sub-puzzle.
  var REPORT_MS = 50;
  // The main-thread search runs this long between yields.
  var SLICE_MS = 30;
  // setTimeout's longest delay.
  var MAX_DELAY = 2147483647;

  function failure(code, message) {
    var err = new Error("pow: " + message);
    err.code = code;
    return err;
  }

  function isInt(x, min, max) {
    return typeof x === "number" && Math.floor(x) === x && x >= min && x <= max;
  }

  // check returns what is wrong with the challenge and options, or "".
  function check(c, o) {
    if (!c || typeof c !== "object") {
      return "no challenge";
    }
    if (typeof c.seed !== "string" || !/^[0-9a-fA-F]{32}$/.test(c.seed)) {
      return "the seed is not 32 hex digits";
    }
    if (!isInt(c.bits, 0, 64)) {
      return "bits must be an integer from 0 to 64";
    }
    if (!isInt(c.puzzles, 1, 65536)) {
      return "puzzles must be an integer from 1 to 65536";
    }
    if (isNaN(Date.parse(c.expires_at))) {
      return "expires_at is not a time";
    }
    if (o.threads !== undefined && !isInt(o.threads, 0, 64)) {
      return "threads must be an integer from 0 to 64";
    }
    if (o.skew !== undefined && !(typeof o.skew === "number" && isFinite(o.skew))) {
      return "skew must be a number of ms";
    }
    if (o.engine !== undefined && o.engine !== "simd" && o.engine !== "scalar" && o.engine !== "js") {
      return "engine must be simd, scalar or js";
    }
    return "";
  }

  function solve(challenge, onProgress, options) {
    var o = typeof options === "string" ? {worker: options} : options || {};
    return new Promise(function (resolve, reject) {
      var problem = check(challenge, o);
      var url = o.worker || (challenge && challenge.worker_url);
      if (!problem && (typeof url !== "string" || url === "")) {
        problem = "no worker URL";
      }
      if (problem) {
        reject(failure("invalid", problem));
        return;
      }
      new Search(challenge, url, o, onProgress, resolve, reject).start();
    });
  }

  // Search is one call of waitroomSolve.
  function Search(c, url, o, onProgress, resolve, reject) {
    this.seed = c.seed;
    this.bits = c.bits;
    this.k = c.puzzles;
    this.expected = Math.pow(2, c.bits);
    this.deadline = Date.parse(c.expires_at) - (o.skew || 0);
    this.url = url;
    this.signal = o.signal;
    this.threads = o.threads;
    // The hashing asked for, and the one last reported.
    this.want = o.engine;
    this.engine = "";
    this.onProgress = typeof onProgress === "function" ? onProgress : null;
    this.resolve = resolve;
    this.reject = reject;
    this.done = false;
    // Per sub-puzzle: its nonce once solved, the hashes tried on it, how
    // many workers ever searched it and how many do now.
    this.nonces = new Array(c.puzzles);
    this.hashes = new Array(c.puzzles);
    this.helpers = new Array(c.puzzles);
    this.active = new Array(c.puzzles);
    for (var i = 0; i < c.puzzles; i++) {
      this.hashes[i] = 0;
      this.helpers[i] = 0;
      this.active[i] = 0;
    }
    this.solved = 0;
    this.total = 0;
    // The next sub-puzzle no worker has had yet.
    this.next = 0;
    this.workers = [];
    this.timer = 0;
    this.slice = 0;
    this.reported = 0;
    this.reportedAt = 0;
    this.onAbort = null;
  }

  Search.prototype.start = function () {
    var self = this;
    if (this.signal) {
      if (this.signal.aborted) {
        this.fail(failure("aborted", "aborted"));
        return;
      }
      this.onAbort = function () {
        self.fail(failure("aborted", "aborted"));
      };
      this.signal.addEventListener("abort", this.onAbort);
    }
    this.armDeadline();
    if (this.done) {
      return;
    }
    this.report(true);
    var n = this.threads;
    if (n === undefined) {
      n = Math.min(navigator.hardwareConcurrency || 2, MAX_WORKERS, this.k);
    }
    if (n === 0 || typeof Worker !== "function") {
      this.mainThread();
      return;
    }
    for (var i = 0; i < n; i++) {
      if (!this.spawn()) {
        this.stopWorkers();
        this.mainThread();
        return;
      }
    }
    for (i = 0; i < this.workers.length; i++) {
      this.assign(this.workers[i]);
    }
  };

  // armDeadline fails the search at the deadline (re-arming when it is
  // further away than setTimeout can wait).
  Search.prototype.armDeadline = function () {
    var self = this;
    var left = this.deadline - Date.now();
    if (left <= 0) {
      this.fail(failure("expired", "the challenge expired"));
      return;
    }
    this.timer = setTimeout(function () {
      self.armDeadline();
    }, Math.min(left, MAX_DELAY));
  };

  // spawn starts a worker; false when the browser refuses.
  Search.prototype.spawn = function () {
    var self = this;
    var w;
    try {
      w = new Worker(this.url);
    } catch (err) {
      return false;
    }
    var wk = {w: w, job: -1};
    w.onmessage = function (ev) {
      self.message(wk, ev.data || {});
    };
    w.onerror = function (ev) {
      if (ev && ev.preventDefault) {
        ev.preventDefault();
      }
      self.workerFailed();
    };
    this.workers.push(wk);
    return true;
  };

  // assign gives an idle worker its next sub-puzzle: a new one while
  // there are, else a second (third...) search of the unsolved one with
  // the fewest workers, from a nonce no other has reached.
  Search.prototype.assign = function (wk) {
    var i = -1;
    if (this.next < this.k) {
      i = this.next++;
    } else {
      for (var j = 0; j < this.k; j++) {
        if (this.nonces[j] === undefined && (i < 0 || this.active[j] < this.active[i])) {
          i = j;
        }
      }
    }
    wk.job = i;
    if (i < 0) {
      return;
    }
    var start = this.helpers[i] * HELPER_STRIDE;
    this.helpers[i]++;
    this.active[i]++;
    var work = {seed: this.seed, bits: this.bits, puzzles: [i], start: start};
    if (this.want !== undefined) {
      work.engine = this.want;
    }
    wk.w.postMessage(work);
  };

  Search.prototype.message = function (wk, m) {
    if (this.done) {
      return;
    }
    if (typeof m.engine === "string") {
      this.engine = m.engine;
    }
    if (m.type === "progress") {
      this.count(m.index, m.hashes);
      this.report(false);
    } else if (m.type === "solved") {
      this.count(m.index, m.hashes);
      if (wk.job === m.index) {
        this.active[m.index]--;
        wk.job = -1;
      }
      if (this.nonces[m.index] === undefined) {
        this.found(m.index, m.nonce);
        if (this.done) {
          return;
        }
        // Call off the other searches of the same sub-puzzle.
        for (var j = 0; j < this.workers.length; j++) {
          var other = this.workers[j];
          if (other.job === m.index) {
            other.w.postMessage({cancel: [m.index]});
            this.active[m.index]--;
            other.job = -1;
            this.assign(other);
          }
        }
      }
      if (wk.job < 0) {
        this.assign(wk);
      }
    } else if (m.type === "error") {
      this.fail(failure("unavailable", String(m.message)));
    }
  };

  Search.prototype.count = function (i, hashes) {
    if (isInt(i, 0, this.k - 1) && typeof hashes === "number" && hashes > 0) {
      this.hashes[i] += hashes;
      this.total += hashes;
    }
  };

  // found records sub-puzzle i's nonce and resolves when it was the last.
  Search.prototype.found = function (i, nonce) {
    this.nonces[i] = nonce;
    this.solved++;
    if (this.solved === this.k) {
      this.report(true);
      this.finish();
      this.resolve(this.nonces.slice());
      return;
    }
    this.report(true);
  };

  // report calls onProgress with the solved sub-puzzles plus the hashes
  // tried on the others as a share of the 2^bits each takes on average
  // (at most PARTIAL_CAP of one each), never less than last time; at most
  // once per REPORT_MS unless forced.
  Search.prototype.report = function (force) {
    if (!this.onProgress) {
      return;
    }
    var now = Date.now();
    if (!force && now - this.reportedAt < REPORT_MS) {
      return;
    }
    var f = this.solved;
    if (f < this.k) {
      for (var i = 0; i < this.k; i++) {
        if (this.nonces[i] === undefined) {
          f += Math.min(this.hashes[i] / this.expected, PARTIAL_CAP);
        }
      }
    }
    f = f / this.k;
    if (f > this.reported || force) {
      this.reported = Math.max(f, this.reported);
      this.reportedAt = now;
      try {
        this.onProgress(this.reported, {solved: this.solved, puzzles: this.k, hashes: this.total, engine: this.engine});
      } catch (err) {
        setTimeout(function () {
          throw err;
        }, 0);
      }
    }
  };

  // workerFailed moves the search to the main thread: a worker did not
  // load (a refused or missing script) or died.
  Search.prototype.workerFailed = function () {
    if (this.done) {
      return;
    }
    this.stopWorkers();
    this.mainThread();
  };

  Search.prototype.stopWorkers = function () {
    for (var i = 0; i < this.workers.length; i++) {
      this.workers[i].w.onmessage = null;
      this.workers[i].w.onerror = null;
      this.workers[i].w.terminate();
    }
    this.workers = [];
  };

  // mainThread searches the unsolved sub-puzzles in this thread, a slice
  // at a time, once pow-worker.js is loaded as a script and has loaded
  // its engine.
  Search.prototype.mainThread = function () {
    var self = this;
    function run() {
      window.waitroomPow.load(self.want).then(function (name) {
        if (!self.done) {
          self.engine = name;
          self.sliceLoop();
        }
      }, function (err) {
        self.fail(failure("unavailable", String(err && err.message || err)));
      });
    }
    if (window.waitroomPow) {
      run();
      return;
    }
    var s = document.createElement("script");
    s.src = this.url;
    s.onload = function () {
      if (self.done) {
        return;
      }
      if (!window.waitroomPow) {
        self.fail(failure("unavailable", "the search script did not load"));
        return;
      }
      run();
    };
    s.onerror = function () {
      self.fail(failure("unavailable", "the search script did not load"));
    };
    (document.head || document.documentElement).appendChild(s);
  };

  Search.prototype.sliceLoop = function () {
    var self = this;
    var puzzle = null;
    var index = -1;
    // Hashes per slice, adjusted to take about SLICE_MS.
    var chunk = 4096;
    function step() {
      self.slice = 0;
      if (self.done) {
        return;
      }
      var began = Date.now();
      while (Date.now() - began < SLICE_MS) {
        if (!puzzle) {
          index = self.firstUnsolved();
          try {
            puzzle = window.waitroomPow.puzzle(self.seed, index, self.bits, 0, self.engine);
          } catch (err) {
            self.fail(failure("unavailable", err.message));
            return;
          }
        }
        var before = puzzle.hashes;
        var t0 = Date.now();
        var ok;
        try {
          ok = puzzle.run(chunk);
        } catch (err) {
          self.fail(failure("unavailable", err.message));
          return;
        }
        var took = Date.now() - t0;
        self.count(index, puzzle.hashes - before);
        if (took < SLICE_MS / 4 && chunk < 1048576) {
          chunk *= 2;
        } else if (took > SLICE_MS && chunk > 256) {
          chunk = Math.floor(chunk / 2);
        }
        if (ok) {
          var nonce = puzzle.nonce;
          puzzle = null;
          self.found(index, nonce);
          if (self.done) {
            return;
          }
        }
      }
      self.report(false);
      self.slice = setTimeout(step, 0);
    }
    this.slice = setTimeout(step, 0);
  };

  Search.prototype.firstUnsolved = function () {
    for (var i = 0; i < this.k; i++) {
      if (this.nonces[i] === undefined) {
        return i;
      }
    }
    return -1;
  };

  Search.prototype.fail = function (err) {
    if (this.done) {
      return;
    }
    this.finish();
    this.reject(err);
  };

  // finish stops everything: workers, timers, the abort listener.
  Search.prototype.finish = function () {
    this.done = true;
    this.stopWorkers();
    clearTimeout(this.timer);
    clearTimeout(this.slice);
    if (this.signal && this.onAbort) {
      this.signal.removeEventListener("abort", this.onAbort);
    }
  };

  window.waitroomSolve = solve;
})();
