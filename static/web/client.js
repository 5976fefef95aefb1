// The page's report of the browser it runs in, for the bot defence's
// client signal (challenge.ClientSignal), sent with the join as "client":
//
//   waitroomClient() -> {webdriver, automation, missing, solve_ms, hashes}
//
// webdriver is navigator.webdriver; automation the globals that drivers
// leave (chromedriver's cdc_…, Playwright's __playwright…, PhantomJS's
// callPhantom, Selenium's, Nightmare's); missing which of a few APIs
// every supported browser has are absent (what lacks them runs the page
// in a DOM emulation); solve_ms and hashes the last proof of work's time
// and hash count, which this file learns by wrapping waitroomSolve (it is
// served after pow.js, in the same file). Nothing here tells visitors
// apart, what cannot be read is left out, and the server never requires
// any of it.
(function () {
  "use strict";
  var AUTOMATION = ["callPhantom", "_phantom", "__nightmare", "_selenium", "domAutomation",
    "domAutomationController", "__webdriver_evaluate", "__selenium_unwrapped", "__fxdriver_unwrapped",
    "__driver_evaluate", "__webdriver_script_fn", "__lastWatirAlert", "Cypress"];
  var PREFIX = /^(\$?cdc_|\$wdc_|__playwright|__pwInitScripts|__puppeteer)/;
  var MAX = 16; // names per list, as the server takes them
  var last = null; // {ms, hashes} of the last solve

  var solve = window.waitroomSolve;
  if (typeof solve === "function") {
    window.waitroomSolve = function (c, onProgress, options) {
      var started = Date.now();
      var hashes = 0;
      return solve(c, function (f, info) {
        if (info && info.hashes > 0) hashes = info.hashes;
        if (typeof onProgress === "function") onProgress(f, info);
      }, options).then(function (nonces) {
        last = { ms: Date.now() - started, hashes: hashes };
        return nonces;
      });
    };
  }

  window.waitroomClient = function () {
    var r = {};
    try {
      if (typeof navigator.webdriver === "boolean") r.webdriver = navigator.webdriver;
      var found = [];
      var note = function (name) {
        if (found.length < MAX && /^[\x20-\x7e]{1,64}$/.test(name) && found.indexOf(name) < 0) found.push(name);
      };
      AUTOMATION.forEach(function (n) { if (n in window) note(n); });
      [window, document].forEach(function (o) {
        Object.getOwnPropertyNames(o).forEach(function (n) { if (PREFIX.test(n)) note(n); });
      });
      r.automation = found;
      var has = {
        "Worker": typeof Worker === "function",
        "fetch": typeof fetch === "function",
        "Promise": typeof Promise === "function",
        "crypto.getRandomValues": !!(window.crypto && typeof crypto.getRandomValues === "function"),
        "requestAnimationFrame": typeof requestAnimationFrame === "function",
        "IntersectionObserver": typeof IntersectionObserver === "function",
        "Intl.DateTimeFormat": !!(window.Intl && typeof Intl.DateTimeFormat === "function"),
        "navigator.languages": !!(navigator.languages && navigator.languages.length)
      };
      r.missing = Object.keys(has).filter(function (k) { return !has[k]; });
    } catch (e) {
      // A report is optional: send what was read.
    }
    if (last) {
      r.solve_ms = Math.max(0, Math.round(last.ms));
      if (last.hashes > 0) r.hashes = Math.min(Math.round(last.hashes), 9007199254740992);
      last = null;
    }
    return r;
  };
})();
