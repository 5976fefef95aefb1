// The waiting-room page script: joins the queue, polls the status API and
// shows what it says; moves on by itself when admitted. No framework, no
// external requests but a CAPTCHA provider's widget when the bot defence
// asks for one. The configuration is the JSON in #wr-config (see
// static.ScriptConfig); everything per visitor comes from the JSON API.
//
// Why one file: the page inlines this script (compactJS drops its
// indentation, blank lines and comment lines; the Content-Security-Policy
// allows it by the hash of those bytes), so that a phone in a stampede
// joins the queue from the first response, with no second request. Its
// parts share one closure and the page's state; split into files they
// would need either more requests (override templates link it as one
// asset, room.<hash>.js) or a bundling step and globals between them.
// Its sections, in order:
//
//   state       the configuration, limits and what the page remembers
//   helpers     DOM, texts and plurals, timers, sessionStorage
//   requests    fetch with a timeout, the server's clock
//   joining     join, and the bot defence's proof of work or CAPTCHA
//   invites     the invite-code field of events with presale lanes
//   polling     status polls and their answers, backoff, errors that stop
//   rendering   state, position, ETA, bar, countdowns, draw, admission
//   announcing  the aria-live region
//   start       retry when back online, the first join
(function () {
  "use strict";

  // --- state ------------------------------------------------------------

  var doc = document;
  var cfgEl = doc.getElementById("wr-config");
  if (!cfgEl || !window.fetch) return;
  var C = JSON.parse(cfgEl.textContent);
  var T = C.texts || {};
  var E = C.event;
  var API = C.prefix + "/api/";
  var lang = C.lang || "en";

  var MIN_REFRESH = 0.2; // seconds: the fastest the server may ask for
  var DEFAULT_REFRESH = 5;
  var MAX_BACKOFF = 60; // seconds between retries after errors
  var SCHEDULED_RECHECK = 300; // re-join at least this often before opening
  var TIMEOUT = 15000; // ms for one request
  var ANNOUNCE_GAP = 30000; // ms between polite position announcements
  var NO_TICKET_LIMIT = 3; // 401s right after a join: cookies are blocked

  var numberFmt = new Intl.NumberFormat(lang);
  var plurals = Intl.PluralRules ? new Intl.PluralRules(lang) : null;

  var timer = 0; // the next join or poll
  var clock = 0; // the countdown's interval
  var countdownTo = 0; // ms since the epoch (server time)
  var fails = 0; // consecutive failed requests
  var noTicket = 0; // no_ticket answers since the last successful poll
  var refresh = DEFAULT_REFRESH;
  var skew = 0; // server clock minus ours, ms, when it matters
  var lastStatus = "";
  var bestPct = -1;
  var lastAnnounce = 0;
  var announced = "";
  var pendingAnnounce = "";
  var announceTimer = 0;

  // --- helpers ----------------------------------------------------------

  // A same-site path: one leading slash, no backslash, whitespace or
  // control character (which browsers strip or turn into slashes, so
  // "/\evil.example" or "/\t/evil.example" would leave the site).
  function sitePath(p) {
    return typeof p === "string" && /^\/(?![\/\\])[^\\\s\u0000-\u001f\u007f]*$/.test(p);
  }
  // The language switcher's links (?lang=xx) replace the page's query.
  // Once the page is here the lang parameter has done its work (the
  // server keeps the choice in a cookie): drop it from the address and
  // from the way back, and make the links keep the rest of the query.
  var query = location.search.replace(/^\?/, "");
  var search = query.split("&").filter(function (kv) {
    return kv && kv.split("=")[0] !== "lang";
  }).join("&");
  if (search !== query && history.replaceState) {
    try {
      history.replaceState(history.state, "", location.pathname + (search ? "?" + search : "") + location.hash);
    } catch (e) {
      // the address keeps its lang
    }
  }
  var langLinks = doc.querySelectorAll(".langs a[hreflang]");
  for (var li = 0; li < langLinks.length; li++) {
    langLinks[li].setAttribute("href", "?" + (search ? search + "&" : "") + "lang=" + langLinks[li].getAttribute("hreflang"));
  }
  var here = location.pathname + (search ? "?" + search : "");
  var back = sitePath(here) ? here : "/";

  function $(id) {
    return doc.getElementById(id);
  }
  function show(id, on) {
    var el = $(id);
    if (el) el.hidden = !on;
    return el;
  }
  function setText(id, s) {
    var el = $(id);
    if (el && el.textContent !== s) el.textContent = s;
    return el;
  }
  function t(key, vars) {
    var s = T[key] || "";
    return vars ? s.replace(/\{(\w+)\}/g, function (m, k) {
      return Object.prototype.hasOwnProperty.call(vars, k) ? vars[k] : m;
    }) : s;
  }
  // key_<form> by the language's plural rules (ahead_few in Polish),
  // else key_other.
  function plural(key, n, vars) {
    var form = plurals ? plurals.select(n) : (n === 1 ? "one" : "other");
    return t(key + (T[key + "_" + form] ? "_" + form : "_other"), vars);
  }
  function num(n) {
    return numberFmt.format(n);
  }
  function isNum(v) {
    return typeof v === "number" && isFinite(v);
  }
  function now() {
    return Date.now() + skew;
  }
  // Spread a delay by ±20% so that visitors do not poll in step.
  function jitter(sec) {
    return sec * (0.8 + Math.random() * 0.4);
  }
  function later(sec, fn) {
    clearTimeout(timer);
    timer = setTimeout(fn, Math.max(sec, MIN_REFRESH) * 1000);
  }
  function stop() {
    clearTimeout(timer);
    timer = 0;
  }
  function store(key, value) {
    try {
      if (value === undefined) return sessionStorage.getItem(key);
      sessionStorage.setItem(key, value);
    } catch (e) {
      // storage can be disabled or full: the bar then starts afresh
    }
    return null;
  }

  // --- requests ---------------------------------------------------------

  function request(method, url, body) {
    var ctl = typeof AbortController === "function" ? new AbortController() : null;
    var to = ctl ? setTimeout(function () { ctl.abort(); }, TIMEOUT) : 0;
    var init = {
      method: method,
      headers: { Accept: "application/json" },
      credentials: "same-origin",
      cache: "no-store"
    };
    if (body) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    if (ctl) init.signal = ctl.signal;
    return fetch(url, init).then(function (r) {
      noteDate(r.headers.get("Date"));
      return r.json().then(null, function () { return null; }).then(function (j) {
        clearTimeout(to);
        return { status: r.status, body: j, retryAfter: r.headers.get("Retry-After") };
      });
    }, function (err) {
      clearTimeout(to);
      throw err;
    });
  }

  // Countdowns run on the server's clock when ours is off by more than the
  // Date header's one-second resolution (plus latency) could explain.
  function noteDate(h) {
    var s = h ? Date.parse(h) : NaN;
    if (isNaN(s)) return;
    var d = s - Date.now();
    skew = Math.abs(d) > 2500 ? d : 0;
  }

  // --- joining ----------------------------------------------------------

  // Joining asks first what the bot defence wants: nothing, a proof of
  // work (solved in Web Workers, with real progress) or a CAPTCHA.
  var challengeRetries = 0; // expired or used challenges in a row
  var solving = false;
  var powRun = null; // the proof of work being solved: {abort}

  function join() {
    if (solving) return;
    request("GET", API + "challenge?event=" + encodeURIComponent(E)).then(function (res) {
      var b = res.body;
      if (res.status !== 200 || !b || typeof b.action !== "string") {
        handle(res, join);
        return;
      }
      if (b.action === "pow" && b.pow) {
        solvePoW(b.pow, b.captcha);
      } else if (b.action === "captcha" && b.captcha) {
        showCaptcha(b.captcha);
      } else {
        sendJoin({});
      }
    }, function () { failed(join); });
  }

  function sendJoin(extra) {
    var body = { event: E, "return": back, client: window.waitroomClient && waitroomClient() };
    for (var k in extra) body[k] = extra[k];
    if (invite) body.invite = invite;
    request("POST", API + "join", body).then(function (res) {
      if (res.status === 200) challengeRetries = 0;
      if (invite && inviteAnswer(res)) return;
      handle(res, join);
    }, function () { failed(join); });
  }

  function loadScript(src) {
    return new Promise(function (resolve, reject) {
      var el = doc.createElement("script");
      el.src = src;
      el.async = true;
      el.onload = resolve;
      el.onerror = function () { reject(new Error("script " + src)); };
      doc.head.appendChild(el);
    });
  }

  function solvePoW(pow, captcha) {
    solving = true;
    hideAll();
    setText("wr-headline", t("h_checking"));
    setText("wr-message", t("msg_checking"));
    show("wr-bar", true);
    setBar(0);
    // Choosing the CAPTCHA instead stops the workers, and a solution that
    // comes anyway is dropped: one join, with the CAPTCHA's token.
    var run = powRun = typeof AbortController === "function" ? new AbortController() : {};
    if (captcha) offerCaptcha(captcha);
    var started = Date.now();
    var ready = window.waitroomSolve ? Promise.resolve() : loadScript(C.pow_js);
    ready.then(function () {
      return window.waitroomSolve(pow, function (f) { if (powRun === run) setBar(Math.round(f * 100)); }, { worker: C.pow_worker, skew: skew, signal: run.signal });
    }).then(function (nonces) {
      if (powRun !== run) return;
      solving = false;
      powRun = null;
      if (window.console && console.debug) console.debug("waitroom: proof of work solved in " + (Date.now() - started) + " ms");
      setBar(100);
      sendJoin({ pow: { token: pow.token, nonces: nonces } });
    }, function () {
      if (powRun !== run) return;
      solving = false;
      powRun = null;
      failed(join);
    });
  }

  function setBar(pct) {
    var bar = $("wr-bar");
    if (!bar) return;
    bar.setAttribute("aria-valuenow", String(pct));
    var fill = $("wr-fill");
    if (fill) fill.style.width = pct + "%";
  }

  // The CAPTCHA path: the provider's widget, then a join with its token.
  function showCaptcha(w) {
    hideAll();
    setText("wr-headline", t("h_captcha"));
    setText("wr-message", t("msg_captcha"));
    renderCaptcha(w);
  }

  function offerCaptcha(w) {
    var b = setText("wr-retry", t("captcha_instead"));
    show("wr-retry", true);
    show("wr-actions", true);
    if (b) b.onclick = function () {
      var run = powRun;
      powRun = null;
      if (run && run.abort) run.abort();
      solving = false;
      show("wr-retry", false);
      showCaptcha(w);
    };
  }

  var captchaId = null; // the rendered widget, reset for another token

  function renderCaptcha(w) {
    var box = $("wr-captcha");
    if (!box) {
      box = doc.createElement("div");
      box.id = "wr-captcha";
      var note = $("wr-note");
      if (note) note.parentNode.insertBefore(box, note);
      else doc.body.appendChild(box);
    }
    box.hidden = false;
    // How to drive the widget is the provider's data (C.captcha, see
    // static.WidgetScript): the global its script defines, whether to wait
    // for its ready(), whether it is executed for the action instead of
    // rendered. Without it, the global is named like the provider.
    var how = C.captcha || { api: w.kind };
    var name = how.api;
    function done(token) {
      box.hidden = true;
      sendJoin({ captcha: token });
    }
    function go() {
      var api = window[name];
      if (how.execute) {
        // An invisible widget (reCAPTCHA v3) scores the visit for the action.
        api.execute(w.site_key, { action: w.action }).then(done, function () { failed(join); });
      } else if (captchaId !== null) {
        api.reset(captchaId);
      } else {
        var opts = { sitekey: w.site_key, callback: done };
        if (w.action) opts.action = w.action;
        captchaId = api.render(box, opts);
      }
    }
    var loaded = name && window[name] && window[name].render ? Promise.resolve() : loadScript(w.script_url);
    loaded.then(function () {
      // A script that loads the widget code after itself needs ready()
      // (reCAPTCHA); others render once their script has run.
      if (how.wait_ready) window[name].ready(go);
      else go();
    }).then(null, function () { failed(join); });
  }

  // --- invites ----------------------------------------------------------

  // Events with code-gated lanes (C.invites) show a code field while the
  // visitor waits; a code moves them to its lane (the server finds which).
  // A link's #invite=CODE fills it in and uses it after the first join.
  // The code goes with joins until the server has answered it.
  var invite = "";
  var linkCode = "";

  function inviteSetup() {
    var f = $("wr-invite");
    if (!C.invites || !f) return;
    var m = /(?:^#|&)invite=([^&]{1,200})/.exec(location.hash);
    if (m) {
      try {
        linkCode = decodeURIComponent(m[1]);
      } catch (e) {
        linkCode = "";
      }
      $("wr-invite-code").value = linkCode;
    }
    f.onsubmit = function (ev) {
      ev.preventDefault();
      var v = $("wr-invite-code").value.replace(/^\s+|\s+$/g, "");
      if (!v) return;
      invite = v;
      inviteNote(t("invite_checking"), false);
      sendJoin({});
    };
  }

  function inviteNote(s, alert) {
    var el = setText("wr-invite-msg", s);
    if (el) el.setAttribute("role", alert ? "alert" : "status");
    show("wr-invite-msg", s !== "");
  }

  // Shown while the visitor waits in the public lane; in a code's lane
  // the page says so instead.
  function inviteShow(s) {
    var st = s.status;
    var waiting = st === "scheduled" || st === "prequeue" || st === "waiting_for_draw" || st === "waiting" || st === "paused";
    var on = !!C.invites && (s.lane || "public") === "public" && waiting;
    show("wr-invite", on);
    if (C.invites && s.lane && s.lane !== "public") inviteNote(waiting ? t("invite_ok") : "", false);
    if (on && linkCode && st !== "scheduled") {
      var f = $("wr-invite");
      linkCode = "";
      if (f) f.onsubmit({ preventDefault: function () {} });
    }
  }

  // The answer to a join that carried a code: true when it was about the
  // code (wrong, used, too many wrong ones), which is said by the field;
  // the visitor's place, if they have one, stays as it was.
  function inviteAnswer(res) {
    var b = res.body;
    var code = b && b.error;
    var key = res.status === 403 && code === "not_allowed" ? "invite_wrong" :
      res.status === 409 && code === "invite_used" ? "invite_used" :
      res.status === 429 && code === "too_many_codes" ? "invite_limited" : "";
    if (res.status === 200) {
      // Before the queue opens the code waits for the opening join.
      if (b && b.status === "scheduled") return false;
      invite = "";
      inviteNote(b && b.lane && b.lane !== "public" ? t("invite_ok") : "", false);
      return false;
    }
    if (res.status === 403 && code === "challenge_required") {
      join(); // no place yet: the bot defence's check first, the code with it
      return true;
    }
    if (!key) return false; // trouble: handled as for any join, the code stays
    invite = "";
    inviteNote(t(key), true);
    var input = $("wr-invite-code");
    if (input) input.focus();
    if (lastStatus) later(jitter(refresh), poll);
    else join();
    return true;
  }

  // --- polling ----------------------------------------------------------

  function poll() {
    var url = API + "status?event=" + encodeURIComponent(E) + "&return=" + encodeURIComponent(back);
    request("GET", url).then(function (res) {
      handle(res, poll);
    }, function () { failed(poll); });
  }

  function handle(res, again) {
    var b = res.body;
    if (res.status === 200 && b && typeof b.status === "string") {
      fails = 0;
      note("");
      if (again === join && b.status === "admitted") {
        // The pass cookie comes with a status answer: get it before
        // moving on, or the gate would send us straight back here.
        poll();
        return;
      }
      if (again === poll) noTicket = 0;
      render(b);
      return;
    }
    if (res.status === 401 && b && b.error === "no_ticket") {
      fails = 0;
      if (++noTicket >= NO_TICKET_LIMIT) {
        problem(t("msg_cookies"));
        return;
      }
      join();
      return;
    }
    // A spent or refused challenge or CAPTCHA token (403; 409 for a used
    // challenge): fetch a new challenge, a few times.
    if ((res.status === 403 || res.status === 409) && b && /^(challenge_(expired|used|invalid)|captcha_(failed|required))$/.test(b.error)) {
      if (++challengeRetries <= 3) {
        join();
        return;
      }
    }
    if (res.status === 403 && b && b.error === "blocked") {
      problem(t("msg_blocked"));
      return;
    }
    if (res.status === 401 && b && /^(login_required|identity_invalid)$/.test(b.error)) {
      loginNeeded(b);
      return;
    }
    if (res.status === 429) {
      var ra = retryAfter(res.retryAfter);
      later(ra * (1 + Math.random() * 0.25), again);
      return;
    }
    if (res.status >= 500 || res.status === 408 || res.status === 0) {
      failed(again);
      return;
    }
    problem(t("msg_error"));
  }

  function retryAfter(h) {
    var s = h == null ? NaN : Number(h);
    if (isNaN(s) && h) s = (Date.parse(h) - Date.now()) / 1000;
    if (!isFinite(s) || s < 0) s = refresh;
    return Math.min(Math.max(s, MIN_REFRESH), 3600);
  }

  // A network error, timeout or 5xx: back off exponentially with jitter,
  // keep what is on screen, and say that we are retrying.
  function failed(again) {
    fails++;
    note(t("msg_offline"));
    var d = Math.min(MAX_BACKOFF, Math.max(refresh, 1) * Math.pow(2, fails));
    later(d / 2 + Math.random() * d / 2, again);
  }

  function note(s) {
    setText("wr-note", s);
    show("wr-note", s !== "");
  }

  // An error a retry by itself will not fix (4xx, blocked cookies): say
  // so, offer a button, stop.
  function problem(msg) {
    stop();
    stopClock();
    lastStatus = "";
    hideAll();
    setText("wr-headline", t("h_error"));
    setText("wr-message", msg);
    retryButton(t("try_again"));
    announce(t("h_error") + ". " + msg, true);
  }

  // The event gives one place per account, and the shop did not say who
  // is logged in (or the login ran out): a link to log in, if it has one.
  function loginNeeded(b) {
    var u = b.login_url, a = $("wr-login");
    problem(t("msg_login"));
    setText("wr-headline", t("h_login"));
    if (a && (sitePath(u) || /^https:\/\/[^\/\\]/.test(u))) {
      a.href = u;
      show("wr-retry", false);
      show("wr-login", true);
    }
  }

  function retryButton(label) {
    var b = setText("wr-retry", label);
    show("wr-retry", true);
    show("wr-actions", true);
    if (b) {
      b.onclick = function () {
        noTicket = 0;
        show("wr-retry", false);
        show("wr-actions", false);
        setText("wr-headline", t("joining"));
        setText("wr-message", "");
        join();
      };
    }
  }

  // --- rendering --------------------------------------------------------

  function hideAll() {
    ["wr-position", "wr-bar", "wr-eta", "wr-countdown", "wr-draw", "wr-actions", "wr-continue", "wr-login", "wr-retry", "wr-captcha"].forEach(function (id) {
      show(id, false);
    });
  }

  function render(s) {
    var st = s.status;
    refresh = isNum(s.refresh_seconds) && s.refresh_seconds > 0 ? Math.max(s.refresh_seconds, MIN_REFRESH) : DEFAULT_REFRESH;
    var key = st === "closed" && s.reason === "session_ended" ? "session_ended" : st;
    var headline = t("h_" + key) || st;
    setText("wr-headline", headline);
    setText("wr-message", t("msg_" + key));
    doc.title = headline + " · " + C.name;

    var pos = positionText(s);
    setText("wr-position", pos);
    show("wr-position", pos !== "");

    var eta = (st === "waiting" || st === "waiting_for_draw" || st === "paused") ? etaText(s) : "";
    setText("wr-eta-value", eta);
    show("wr-eta", eta !== "");

    var nt = noticeText(s.notice);
    setText("wr-notice", nt);
    show("wr-notice", !!nt);

    progress(s);
    countdown(s);
    draw(s);
    inviteShow(s);
    show("wr-actions", false);
    show("wr-continue", false);
    show("wr-retry", false);

    var changed = st !== lastStatus;
    lastStatus = st;
    var say = [changed ? headline : "", pos, eta ? t("eta_label") + ": " + eta : ""].filter(Boolean).join(". ");
    announce(say, changed);

    switch (st) {
      case "admitted":
        admitted(s);
        return;
      case "closed":
        stop();
        stopClock();
        if (s.reason === "session_ended") {
          store("wr:first:" + E, "");
          retryButton(t("join_again"));
        }
        return;
      case "scheduled":
        // Join when the queue opens (spread over up to two seconds), and
        // look again now and then in case the opening moves.
        var until = (Date.parse(s.opens_at) - now()) / 1000;
        later(until > 0 ? Math.min(until + Math.random() * Math.min(2, refresh), SCHEDULED_RECHECK) : jitter(refresh), join);
        return;
      default:
        later(jitter(refresh), poll);
    }
  }

  // The operator's notice, as plain text (it is only ever set as
  // textContent): the translation for the page's language, else one for
  // its primary language, else the notice's default text; "" for none.
  function noticeText(n) {
    if (!n || typeof n.text !== "string") return "";
    var x = n.texts || {}, l = lang.toLowerCase(), near = "";
    for (var k in x) {
      var kl = k.toLowerCase();
      if (typeof x[k] !== "string") continue;
      if (kl === l) return x[k];
      if (!near && kl.split("-")[0] === l.split("-")[0]) near = x[k];
    }
    return near || n.text;
  }

  function positionText(s) {
    var st = s.status;
    if (st !== "waiting" && st !== "paused") return "";
    var display = s.position_display || C.position_display;
    var p = s.position;
    if (display === "hidden" || !isNum(p) || p < 0) return "";
    if (p === 0) return t("ahead_none");
    if (display === "approximate") return t("ahead_approx", { n: num(p) });
    return plural("ahead", p, { n: num(p) });
  }

  // An honest range: the low end rounded down, the high end rounded up.
  function etaText(s) {
    if (!isNum(s.eta_seconds)) return "";
    if (s.eta_seconds < 0) return t("eta_estimating");
    var lo = s.eta_low, hi = s.eta_high;
    if (!isNum(lo) || !isNum(hi) || lo < 0 || hi < 0) lo = hi = s.eta_seconds;
    if (hi < lo) {
      var x = lo;
      lo = hi;
      hi = x;
    }
    if (hi < 60) return t("eta_soon");
    var unit = hi < 7200 ? 60 : 3600;
    var a = Math.max(1, Math.floor(lo / unit));
    var b = Math.max(a, Math.ceil(hi / unit));
    var base = unit === 60 ? "eta_min" : "eta_hour";
    if (a === b) return plural(base, a, { n: num(a) });
    return t(unit === 60 ? "eta_range_min" : "eta_range_hours", { low: num(a), high: num(b) });
  }

  // The bar runs from the first position (or, when positions are hidden,
  // the first ETA) this tab saw, kept in sessionStorage, and never moves
  // back while the page is open.
  function progress(s) {
    var st = s.status;
    var pct = -1;
    if (st === "admitted") {
      pct = 100;
    } else if (st === "waiting" || st === "paused") {
      var v = isNum(s.position) && s.position >= 0 ? s.position : (isNum(s.eta_seconds) && s.eta_seconds >= 0 ? s.eta_seconds : -1);
      var kind = isNum(s.position) && s.position >= 0 ? "p" : "e";
      if (v >= 0) {
        var key = "wr:first:" + E;
        var saved = String(store(key) || "").split(":");
        var first = saved[0] === kind ? Number(saved[1]) || 0 : -1;
        if (v > first) {
          first = v;
          bestPct = -1;
          store(key, kind + ":" + first);
        }
        pct = first > 0 ? Math.round(100 * (first - v) / first) : 100;
      }
    }
    var bar = show("wr-bar", pct >= 0);
    if (pct < 0 || !bar) return;
    bestPct = Math.max(bestPct, pct);
    bar.setAttribute("aria-valuenow", String(bestPct));
    var fill = $("wr-fill");
    if (fill) fill.style.width = bestPct + "%";
  }

  function countdown(s) {
    var st = s.status, at = "", label = "";
    if (st === "scheduled") {
      at = s.opens_at;
      label = "countdown_open";
    } else if (st === "prequeue") {
      at = s.on_sale_at || s.draw_at;
      label = "countdown_sale";
    } else if (st === "waiting_for_draw") {
      at = s.draw_at || s.on_sale_at;
      label = "countdown_draw";
    }
    var target = at ? Date.parse(at) : NaN;
    if (isNaN(target)) {
      stopClock();
      show("wr-countdown", false);
      return;
    }
    setText("wr-countdown-label", t(label));
    setText("wr-when", localTime(target));
    show("wr-countdown", true);
    countdownTo = target;
    tick();
    if (!clock) clock = setInterval(tick, 1000);
  }

  function stopClock() {
    clearInterval(clock);
    clock = 0;
  }

  function tick() {
    var ms = countdownTo - now();
    setText("wr-countdown-value", ms > 0 ? duration(ms) : t("countdown_now"));
  }

  // 1:02:03, 2:05, 0:07; with days: "3 days 04:05:06".
  function duration(ms) {
    var s = Math.ceil(ms / 1000);
    var d = Math.floor(s / 86400);
    var h = Math.floor(s % 86400 / 3600);
    var m = Math.floor(s % 3600 / 60);
    var sec = s % 60;
    function two(n) { return (n < 10 ? "0" : "") + n; }
    if (d > 0) return plural("days", d, { n: num(d) }) + " " + two(h) + ":" + two(m) + ":" + two(sec);
    return (h > 0 ? h + ":" + two(m) : String(m)) + ":" + two(sec);
  }

  function localTime(ms) {
    try {
      var d = new Date(ms);
      var opts = { hour: "numeric", minute: "2-digit" };
      if (d.toDateString() !== new Date(now()).toDateString()) {
        opts.weekday = "short";
        opts.day = "numeric";
        opts.month = "short";
      }
      return t("local_time", { time: new Intl.DateTimeFormat(lang, opts).format(d) });
    } catch (e) {
      return "";
    }
  }

  // The draw text fits the visitor's tranche: the pre-queue's (tranche 0)
  // is drawn at the on-sale; a latecomer's is the few seconds they
  // arrived in. The link goes to the draw page (the JSON without one).
  function draw(s) {
    var st = s.status, key = "";
    var late = isNum(s.tranche) && s.tranche > 0;
    if (st === "prequeue" || st === "waiting_for_draw") key = late ? "draw_before_tranche" : "draw_before";
    else if ((st === "waiting" || st === "paused") && isNum(s.tranche)) key = late ? "draw_after_tranche" : "draw_after";
    show("wr-draw", key !== "");
    if (!key) return;
    setText("wr-draw-text", t(key, { n: num(isNum(s.tranche_seconds) && s.tranche_seconds > 0 ? s.tranche_seconds : 5) }));
    var a = $("wr-audit");
    var link = sitePath(s.draw_page) ? s.draw_page : s.audit;
    var ok = sitePath(link);
    if (a && ok) {
      a.href = link;
      a.textContent = t("draw_link");
      // In a tab of its own: this one keeps the place and moves on.
      a.target = "_blank";
      a.rel = "noopener";
    }
    show("wr-audit", ok);
  }

  function admitted(s) {
    stop();
    stopClock();
    // The server guarantees a same-site path; check anyway, and fall back
    // to this page's own path, which the pass now opens.
    var to = sitePath(s.redirect) ? s.redirect : back;
    var a = $("wr-continue");
    if (a) a.href = to;
    show("wr-continue", true);
    show("wr-actions", true);
    // Landing back here right after moving on means the pass did not
    // stick (cookies refused, or not accepted by the gate): after two such
    // returns within 15 s, stop bouncing and leave the link.
    var key = "wr:moved:" + E;
    var prev = String(store(key) || "").split(":");
    var count = Number(prev[1]) > Date.now() - 15000 ? (Number(prev[0]) || 0) + 1 : 1;
    store(key, count + ":" + Date.now());
    if (count > 2) {
      setText("wr-message", t("msg_cookies"));
      announce(t("msg_cookies"), true);
      return;
    }
    location.replace(to);
  }

  // --- announcing -------------------------------------------------------

  // The live region says status changes at once and position updates at
  // most every ANNOUNCE_GAP, so that a screen reader is not talked over.
  function announce(s, urgent) {
    if (!s || s === announced) return;
    var wait = lastAnnounce + ANNOUNCE_GAP - Date.now();
    if (urgent || wait <= 0) {
      clearTimeout(announceTimer);
      announceTimer = 0;
      pendingAnnounce = "";
      setText("wr-live", s);
      announced = s;
      lastAnnounce = Date.now();
      return;
    }
    pendingAnnounce = s;
    if (!announceTimer) {
      announceTimer = setTimeout(function () {
        announceTimer = 0;
        var p = pendingAnnounce;
        pendingAnnounce = "";
        announce(p, true);
      }, wait);
    }
  }

  // --- start ------------------------------------------------------------

  // Back online: retry at once instead of waiting out the backoff.
  window.addEventListener("online", function () {
    if (fails > 0 && timer) later(Math.random(), lastStatus ? poll : join);
  });

  inviteSetup();
  join();
})();
