(function () {
  "use strict";
  // Retry after the script element's data-retry seconds, jittered between
  // 0.6 and 1.4 times that so that shed visitors do not return in step.
  // location.replace does a GET of the same URL and keeps the busy page
  // out of the history.
  var el = document.currentScript;
  var base = Number(el && el.getAttribute("data-retry")) || 5;
  setTimeout(function () {
    location.replace(location.href);
  }, base * (0.6 + Math.random() * 0.8) * 1000);
})();
