// waitroom console: live figures and last-hour charts over server-sent
// events. No framework, no inline script (the page's CSP forbids it).
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const W = 300, H = 90;
  let span = 3600 * 1000;
  const hist = {}; // event id → columns, as the server sends them
  const live = document.getElementById("live");

  const charts = {
    queue: ["queue"],
    flow: ["arrivals_per_min", "admitted_per_min"],
    active: ["active", "target"],
    latency: ["latency_p50_ms", "latency_p99_ms"],
    rates: ["error_pct", "no_show_pct"],
  };

  function fmtSeconds(s) {
    if (s < 0) return "unknown";
    if (s === 0) return "none";
    if (s < 120) return s + " s";
    if (s < 7200) return Math.round(s / 60) + " min";
    return (s / 3600).toFixed(1) + " h";
  }
  function pct(x) { return (100 * x).toFixed(x < 0.1 ? 1 : 0) + " %"; }
  function signed(n) { return (n > 0 ? "+" : n < 0 ? "−" : "±") + Math.abs(n) + " in 1 min"; }

  function text(sec, key, value) {
    for (const el of sec.querySelectorAll('[data-f="' + key + '"]')) {
      if (el.textContent !== String(value)) el.textContent = value;
    }
  }

  function show(v) {
    const sec = document.querySelector('section[data-event="' + CSS.escape(v.id) + '"]');
    if (!sec) return;
    text(sec, "state", v.state);
    const badge = sec.querySelector('[data-f="state"]');
    if (badge) badge.dataset.state = v.state;
    text(sec, "mode", v.mode);
    text(sec, "queue", v.queue);
    text(sec, "queue_change", signed(v.queue_change));
    text(sec, "arrivals_per_min", v.arrivals_per_min);
    text(sec, "admitted_per_min", v.admitted_per_min);
    text(sec, "active", v.active);
    text(sec, "target", v.target);
    text(sec, "latency_p50_ms", v.latency_p50_ms);
    text(sec, "latency_p99_ms", v.latency_p99_ms);
    text(sec, "error_rate", pct(v.error_rate));
    text(sec, "no_show_rate", pct(v.no_show_rate));
    const e = v.eta_back;
    text(sec, "eta_back", e.seconds <= 0 ? fmtSeconds(e.seconds) :
      fmtSeconds(e.seconds) + " (" + (e.low > 0 ? fmtSeconds(e.low) : "0 s") + "–" + fmtSeconds(e.high) + ")");
    text(sec, "seats_left", v.seats_left === null ? "not linked" : v.seats_left);
    text(sec, "why", v.why || "the controller has not decided yet (not selling, or another replica leads)");
    text(sec, "decided_at", v.decided_at ? "at " + new Date(v.decided_at).toLocaleTimeString() : "");
    const m = v.last_move;
    text(sec, "last_move", m ? "Last move: " + m.from + " → " + m.to + " at " +
      new Date(m.at).toLocaleTimeString() + ": " + m.why : "");
    for (const b of v.bots) {
      for (const k of ["total", "last_minute"]) {
        const td = sec.querySelector('[data-bot="' + b.band + '"][data-k="' + k + '"]');
        if (td) td.textContent = b[k];
      }
    }
    toggle(sec, "pause", v.paused, "resume", "Resume admission", "pause", "Pause admission");
    toggle(sec, "sold_out", v.sold_out, "on-sale", "Back on sale", "sold-out", "Mark sold out");
  }

  // toggle points a two-way button at the action the state calls for.
  function toggle(sec, name, on, onAct, onText, offAct, offText) {
    const f = sec.querySelector('form[data-toggle="' + name + '"]');
    if (!f) return;
    const act = on ? onAct : offAct;
    const want = "/admin/events/" + encodeURIComponent(sec.dataset.event) + "/" + act;
    if (f.getAttribute("action") !== want) {
      f.setAttribute("action", want);
      f.querySelector("button").textContent = on ? onText : offText;
      if (name === "sold_out") f.querySelector("button").classList.toggle("danger", !on);
    }
  }

  function append(id, pts) {
    const h = hist[id] || (hist[id] = pts);
    if (h === pts) return;
    const last = h.t.length ? h.t[h.t.length - 1] : -Infinity;
    for (let i = 0; i < pts.t.length; i++) {
      if (pts.t[i] <= last) continue;
      for (const k of Object.keys(pts)) (h[k] || (h[k] = [])).push(pts[k][i]);
    }
    const cutoff = h.t[h.t.length - 1] - span;
    let cut = 0;
    while (cut < h.t.length && h.t[cut] < cutoff) cut++;
    if (cut > 0) for (const k of Object.keys(h)) h[k].splice(0, cut);
  }

  function el(name, attrs) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    return e;
  }

  function draw(sec, id) {
    const h = hist[id];
    if (!h || !h.t.length) return;
    const t1 = h.t[h.t.length - 1], t0 = t1 - span;
    for (const [name, keys] of Object.entries(charts)) {
      const svg = sec.querySelector('svg[data-chart="' + name + '"]');
      if (!svg) continue;
      let top = 1;
      for (const k of keys) for (const x of h[k] || []) if (x > top) top = x;
      top = niceTop(top);
      svg.replaceChildren();
      svg.append(el("line", { x1: 0, y1: H, x2: W, y2: H, class: "grid" }),
        el("line", { x1: 0, y1: 1, x2: W, y2: 1, class: "grid" }));
      const label = el("text", { x: 2, y: 10 });
      label.textContent = String(top);
      const from = el("text", { x: 2, y: H - 3 });
      from.textContent = "−" + Math.round(span / 60000) + " min";
      const to = el("text", { x: W - 2, y: H - 3, "text-anchor": "end" });
      to.textContent = "now";
      svg.append(label, from, to);
      keys.forEach((k, i) => {
        const ys = h[k] || [];
        const pts = [];
        for (let j = 0; j < h.t.length; j++) {
          const x = ((h.t[j] - t0) / span) * W;
          const y = H - (ys[j] / top) * (H - 2);
          pts.push(x.toFixed(1) + "," + y.toFixed(1));
        }
        svg.append(el("polyline", { points: pts.join(" "), class: "l" + (i + 1) }));
      });
    }
  }

  function niceTop(x) {
    const p = Math.pow(10, Math.floor(Math.log10(x)));
    for (const m of [1, 2, 5, 10]) if (x <= m * p) return m * p;
    return 10 * p;
  }

  function redraw() {
    for (const sec of document.querySelectorAll("section[data-event]")) draw(sec, sec.dataset.event);
  }

  if (!window.EventSource) {
    live.textContent = "This browser cannot show live figures; reload the page to update them.";
    return;
  }
  const es = new EventSource("/admin/stream");
  es.addEventListener("history", (m) => {
    const d = JSON.parse(m.data);
    span = d.span_ms;
    for (const id of Object.keys(hist)) delete hist[id];
    for (const [id, cols] of Object.entries(d.history)) hist[id] = cols;
    redraw();
  });
  es.addEventListener("figures", (m) => {
    const d = JSON.parse(m.data);
    for (const v of d.events) show(v);
    for (const [id, pts] of Object.entries(d.points)) append(id, pts);
    redraw();
    live.textContent = "Live · updated " + new Date(d.at).toLocaleTimeString();
    document.body.dataset.updated = d.at;
  });
  es.addEventListener("expired", (m) => {
    es.close();
    live.textContent = JSON.parse(m.data).message;
    window.location.assign("/admin/");
  });
  es.onerror = () => {
    live.textContent = "Reconnecting to the live figures…";
  };
})();
