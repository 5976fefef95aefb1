// The session banner an origin includes on its own pages for admitted
// visitors: <script src="/_wr/session.js?event=E" defer></script>. It asks
// GET {prefix}/api/session how long the visitor's pass has left and, in the
// last minute, shows a banner: keep browsing to stay in (the pass slides
// forward on the next request to the site), or that the session ends for
// good (its maximum is reached, or the visitor is done). Asking does not
// renew the pass: only browsing the site does. No inline code, no styles
// but CSSOM properties, so it works under a strict Content-Security-Policy.
// The proxy serves it as this function applied to the event's
// configuration: {"event","prefix","lang","dir","texts":{...}}.
(function (cfg) {
  "use strict";
  var WARN = 60; // seconds before the end that the banner shows
  var T = cfg.texts;
  var url = cfg.prefix + "/api/session?event=" + encodeURIComponent(cfg.event);
  var banner = null, text = null, timer = 0, seen = false, done = false, dismissed = "";

  function el(tag) { return document.createElement(tag); }

  function build() {
    banner = el("div");
    banner.id = "wr-session-banner";
    banner.setAttribute("role", "status");
    banner.setAttribute("aria-live", "polite");
    banner.lang = cfg.lang;
    banner.dir = cfg.dir || "ltr"; // the banner sits on the origin's page, whatever its direction
    var s = banner.style;
    s.position = "fixed"; s.left = "0"; s.right = "0"; s.bottom = "0"; s.zIndex = "2147483647";
    s.display = "none"; s.alignItems = "center"; s.justifyContent = "center"; s.gap = "1em";
    s.padding = "0.75em 1em"; s.background = "#1f2937"; s.color = "#fff";
    s.font = "16px/1.4 system-ui, sans-serif"; s.boxShadow = "0 -2px 8px rgba(0,0,0,.3)";
    text = el("span");
    var close = el("button");
    close.type = "button";
    close.textContent = "\u00d7";
    close.setAttribute("aria-label", T.session_dismiss);
    close.title = T.session_dismiss;
    var c = close.style;
    c.background = "transparent"; c.color = "inherit"; c.border = "1px solid currentColor";
    c.borderRadius = "4px"; c.font = "inherit"; c.lineHeight = "1"; c.padding = "0.2em 0.5em"; c.cursor = "pointer";
    close.addEventListener("click", function () {
      dismissed = text.textContent;
      banner.style.display = "none";
    });
    banner.appendChild(text);
    banner.appendChild(close);
    document.body.appendChild(banner);
  }

  function show(msg) {
    if (!document.body) return;
    if (!banner) build();
    if (msg === dismissed) return;
    if (text.textContent !== msg) text.textContent = msg;
    banner.setAttribute("data-state", msg === T.session_ending ? "renews" : msg === T.session_ended ? "ended" : "final");
    banner.style.display = "flex";
  }

  function hide() {
    if (banner) banner.style.display = "none";
    dismissed = "";
  }

  function later(sec) {
    clearTimeout(timer);
    timer = setTimeout(check, Math.max(1, sec) * 1000);
  }

  function check() {
    if (!window.fetch) return;
    fetch(url, { credentials: "same-origin", cache: "no-store", headers: { Accept: "application/json" } })
      .then(function (r) {
        if (r.status === 401) return { active: false };
        if (!r.ok) throw new Error("status " + r.status);
        return r.json();
      })
      .then(function (s) {
        if (!s.active) {
          // Had a pass and lost it: the session is over. Never had one,
          // or done (a purchase completed): nothing to warn about.
          if (seen && !done) show(T.session_ended); else hide();
          later(60);
          return;
        }
        seen = true;
        if (s.done) {
          // The site said the visitor is done: their pass ends after a
          // grace, as it should; no warning.
          done = true;
          hide();
          later(60);
          return;
        }
        var left = s.expires_in;
        if (left <= WARN) {
          show(s.renews ? T.session_ending : T.session_ending_final);
          later(Math.min(10, left + 1));
        } else {
          hide();
          later(Math.min(left - WARN, 300));
        }
      })
      .catch(function () { later(30); });
  }

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "visible") check();
  });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", check);
  } else {
    check();
  }
})
