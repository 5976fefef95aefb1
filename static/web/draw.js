// The draw page script: shows a tranche's published draw so that a person
// can check it, and finds the visitor's own entry. Everything is computed
// here, in the browser, with WebCrypto: SHA-256 of the seed against the
// commitment published before the draw, and the order, HMAC-SHA256(seed,
// entry) ascending, of the entries it loads. The page is the same for
// every visitor and tranche; the tranche comes from the path
// ({prefix}/draw/{event}/{tranche}?lane=L), the data from the JSON audit
// ({prefix}/api/draws/...), paged, and the visitor's id from their own
// status answer (only their ticket gets it).
//
// The commitment this browser sees before the draw is kept in
// localStorage: after the draw the page says whether it is the one it saw,
// which is the check that the seed was not chosen afterwards.
(function () {
  "use strict";

  var doc = document;
  var cfgEl = doc.getElementById("wr-config");
  if (!cfgEl || !window.fetch) return;
  var C = JSON.parse(cfgEl.textContent);
  var T = C.texts || {};
  var E = C.event;
  var lang = C.lang || "en";
  var PAGE = 250; // entries per audit page, the API's default
  var TIMEOUT = 15000;

  function $(id) {
    return doc.getElementById(id);
  }
  function setText(id, s) {
    var el = $(id);
    if (el) el.textContent = s;
    return el;
  }
  function show(id, on) {
    var el = $(id);
    if (el) el.hidden = !on;
  }
  function t(key, vars) {
    var s = T[key] || "";
    return vars ? s.replace(/\{(\w+)\}/g, function (m, k) {
      return Object.prototype.hasOwnProperty.call(vars, k) ? vars[k] : m;
    }) : s;
  }
  var numberFmt = new Intl.NumberFormat(lang);
  function num(n) {
    return numberFmt.format(n);
  }
  function when(iso) {
    var ms = Date.parse(iso);
    if (isNaN(ms)) return "";
    try {
      return new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "medium" }).format(new Date(ms));
    } catch (e) {
      return new Date(ms).toLocaleString();
    }
  }

  // The tranche and lane this page is about, from its own URL: strict
  // shapes only.
  var m = /\/draw\/[^\/]+\/(\d{1,9})$/.exec(location.pathname);
  var laneArg = /[?&]lane=([a-z0-9_-]{1,64})(?:&|$)/.exec(location.search);
  var tranche = m ? Number(m[1]) : -1;
  var lane = laneArg ? laneArg[1] : "public";
  var audit = C.prefix + "/api/draws/" + encodeURIComponent(E) + "/" + tranche + (lane !== "public" ? "?lane=" + lane : "");
  var seenKey = "wr:commit:" + E + "/" + lane + "/" + tranche;

  var subtle = window.crypto && window.crypto.subtle;
  var enc = new TextEncoder();

  function hexBytes(h) {
    if (typeof h !== "string" || !/^([0-9a-f]{2})*$/.test(h)) return null;
    var b = new Uint8Array(h.length / 2);
    for (var i = 0; i < b.length; i++) b[i] = parseInt(h.substr(i * 2, 2), 16);
    return b;
  }
  function bytesHex(b) {
    var s = "";
    b = new Uint8Array(b);
    for (var i = 0; i < b.length; i++) s += (b[i] < 16 ? "0" : "") + b[i].toString(16);
    return s;
  }
  function compare(a, b) {
    a = new Uint8Array(a);
    b = new Uint8Array(b);
    for (var i = 0; i < a.length && i < b.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
    return a.length - b.length;
  }
  function sha256(bytes) {
    return subtle.digest("SHA-256", bytes);
  }

  function getJSON(url) {
    var ctl = typeof AbortController === "function" ? new AbortController() : null;
    var to = ctl ? setTimeout(function () { ctl.abort(); }, TIMEOUT) : 0;
    var init = { headers: { Accept: "application/json" }, credentials: "same-origin" };
    if (ctl) init.signal = ctl.signal;
    return fetch(url, init).then(function (r) {
      return r.json().then(null, function () { return null; }).then(function (j) {
        clearTimeout(to);
        return { status: r.status, body: j };
      });
    });
  }

  // One page of the audit, checked for shape.
  function auditPage(offset) {
    var sep = audit.indexOf("?") >= 0 ? "&" : "?";
    return getJSON(audit + sep + "offset=" + offset + "&limit=" + PAGE).then(function (res) {
      var b = res.body;
      if (res.status !== 200 || !b || !b.drawn || !Array.isArray(b.hashes)) throw new Error("audit page");
      return b;
    });
  }

  function fail() {
    setText("dp-status", t("dp_error"));
  }

  var draw = null; // the first page: commitment, seed, first, count
  var hmacKey = null;

  function start() {
    var json = $("dp-json");
    if (json) json.href = audit;
    setText("dp-cli", t("dp_cli", { url: location.origin + audit }));
    if (tranche < 0) {
      fail();
      return;
    }
    setText("dp-headline", tranche === 0 ? t("dp_h_prequeue") : t("dp_h_tranche", { n: num(tranche) }));
    getJSON(audit).then(function (res) {
      var b = res.body;
      if (res.status === 404 && b && b.error === "no_such_tranche") {
        setText("dp-status", t("dp_not_open"));
        return;
      }
      if (res.status !== 200 || !b || typeof b.commitment !== "string") {
        fail();
        return;
      }
      shown(b);
    }, fail);
  }

  function shown(b) {
    var secs = (Date.parse(b.closes_at) - Date.parse(b.opens_at)) / 1000;
    setText("dp-intro", b.tranche === 0 || !isFinite(secs) ? t("dp_intro_prequeue") : t("dp_intro_tranche", { n: num(secs) }));
    setText("dp-commitment", b.commitment);
    setText("dp-committed", t("dp_committed", { time: when(b.committed_from), close: when(b.closes_at) }));
    show("dp-commit", true);
    var seen = null;
    try {
      seen = JSON.parse(localStorage.getItem(seenKey) || "null");
    } catch (e) {
      seen = null;
    }
    if (!b.drawn) {
      setText("dp-status", t("dp_not_drawn", { time: when(b.closes_at) }));
      if (!seen) {
        try {
          localStorage.setItem(seenKey, JSON.stringify({ c: b.commitment, at: new Date().toISOString() }));
        } catch (e) {
          // storage off: nothing remembered
        }
      }
      return;
    }
    if (seen && typeof seen.c === "string" && Date.parse(seen.at) < Date.parse(b.drawn_at)) {
      setText("dp-seen", t(seen.c === b.commitment ? "dp_seen_same" : "dp_seen_differs", { time: when(seen.at) }));
      show("dp-seen", true);
    }
    draw = b;
    setText("dp-seed-value", b.seed);
    show("dp-seed", true);
    setText("dp-order-text", t("dp_order", { n: num(b.first), count: num(b.count), time: when(b.drawn_at) }));
    show("dp-order", true);
    var seed = hexBytes(b.seed);
    if (!subtle || !seed) {
      setText("dp-seed-check", t("dp_unsupported"));
      return;
    }
    sha256(seed).then(function (sum) {
      var ok = bytesHex(sum) === b.commitment;
      setText("dp-seed-check", t(ok ? "dp_seed_ok" : "dp_seed_bad"));
      if (!ok) return;
      return subtle.importKey("raw", seed, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]).then(function (k) {
        hmacKey = k;
        show("dp-find", true);
        var btn = $("dp-find-button");
        if (btn) btn.onclick = find;
      });
    }).then(null, fail);
  }

  function drawKey(hash) {
    return subtle.sign("HMAC", hmacKey, hash);
  }

  // The keys of a page's entries, in order; rejects when the page is not
  // in ascending key order.
  function pageKeys(p) {
    var hashes = p.hashes.map(hexBytes);
    if (hashes.some(function (h) { return !h || h.length !== 32; })) return Promise.reject(new Error("hash"));
    return Promise.all(hashes.map(drawKey)).then(function (keys) {
      for (var i = 1; i < keys.length; i++) {
        if (compare(keys[i - 1], keys[i]) >= 0) {
          var err = new Error("order");
          err.at = p.offset + i;
          throw err;
        }
      }
      return { hashes: hashes, keys: keys };
    });
  }

  var checked = 0;

  function result(s) {
    setText("dp-result", s);
  }

  function find() {
    var btn = $("dp-find-button");
    if (btn) btn.disabled = true;
    result(t("dp_finding"));
    getJSON(C.prefix + "/api/status?event=" + encodeURIComponent(E)).then(function (res) {
      var s = res.body;
      if (res.status === 401 || !s || typeof s.visitor !== "string") {
        result(t("dp_no_ticket"));
        return;
      }
      if (s.tranche !== draw.tranche || (s.lane || "public") !== lane) {
        result(t("dp_not_yours"));
        var a = doc.createElement("a");
        if (typeof s.draw_page === "string" && /^\/(?![\/\\])[^\\\s]*$/.test(s.draw_page)) {
          a.href = s.draw_page;
          a.textContent = t("dp_your_draw");
          $("dp-result").appendChild(doc.createTextNode(" "));
          $("dp-result").appendChild(a);
        }
        return;
      }
      var id = hexBytes(s.visitor);
      if (!id) {
        result(t("dp_no_ticket"));
        return;
      }
      return sha256(id).then(function (vh) {
        return drawKey(vh).then(function (key) {
          return search(new Uint8Array(vh), key);
        });
      });
    }).then(null, function (err) {
      if (err && err.message === "order") result(t("dp_order_bad", { n: num(err.at + 1) }));
      else fail();
    }).then(function () {
      if (btn) btn.disabled = false;
    });
  }

  // Binary search over the audit's pages by draw key: about log2(pages)
  // requests, each page's order checked as it comes.
  function search(vh, key) {
    var pages = Math.max(1, Math.ceil(draw.count / PAGE));
    var lo = 0, hi = pages - 1;
    function step() {
      if (lo > hi) {
        result(t("dp_not_found", { hash: bytesHex(vh) }));
        return;
      }
      var mid = (lo + hi) >> 1;
      return auditPage(mid * PAGE).then(function (p) {
        return pageKeys(p).then(function (k) {
          checked += k.keys.length;
          var n = k.keys.length;
          if (n === 0 || compare(key, k.keys[0]) < 0) {
            hi = mid - 1;
            return step();
          }
          if (compare(key, k.keys[n - 1]) > 0) {
            lo = mid + 1;
            return step();
          }
          for (var i = 0; i < n; i++) {
            if (compare(k.hashes[i], vh) === 0) {
              var place = p.offset + i;
              result(t("dp_found", { hash: bytesHex(vh), n: num(place + 1), count: num(draw.count), number: num(draw.first + place) }));
              setText("dp-checked", t("dp_checked", { n: num(checked) }));
              show("dp-checked", true);
              return;
            }
          }
          result(t("dp_not_found", { hash: bytesHex(vh) }));
        });
      });
    }
    return step();
  }

  start();
})();
