// Counts the checkout's hold down to zero. The page does not need it: the
// server rendered the time left, and paying after the end is handled.
(function () {
  "use strict";
  var el = document.getElementById("countdown");
  if (!el) { return; }
  var left = parseInt(el.getAttribute("data-seconds"), 10);
  if (!(left >= 0)) { return; }
  var live = document.getElementById("countdown-live");
  var end = Date.now() + left * 1000;
  var warned = left <= 60;
  function show(s) {
    var m = Math.floor(s / 60), r = s % 60;
    el.textContent = m + ":" + (r < 10 ? "0" : "") + r;
  }
  function tick() {
    var s = Math.max(0, Math.ceil((end - Date.now()) / 1000));
    show(s);
    if (!warned && s <= 60) {
      warned = true;
      if (live) { live.textContent = "One minute left to pay."; }
    }
    if (s === 0) {
      document.body.classList.add("expired");
      if (live) { live.textContent = "Your hold has run out; the seats are back on sale. If you pay now, the payment will be refunded."; }
      return;
    }
    setTimeout(tick, 250);
  }
  tick();
})();
