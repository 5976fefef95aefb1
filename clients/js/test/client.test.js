// The client against a real `waitroom serve` (built from this repository)
// in front of a tiny origin: join with the proof of work, position events,
// admission with the pass cookie that opens the gated path, polls never
// faster than refresh_seconds, 429 backoff honouring Retry-After, and
// sold-out and closed from the operator API ending the polling. Bounds on
// time are generous (a slow machine only makes waits longer).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { WaitingRoom } from "../waitroom.js";
import { buildWaitroom, startOrigin, startServe, chromiumPage, Jar, waitFor } from "./harness.js";

before(() => buildWaitroom());

const origins = [];
after(async () => {
  for (const o of origins) await o.close();
});

function config({ listen, admin, dir, secret, adminToken }, originAddr, extra) {
  return `log: {level: error}
serve:
  listen: 127.0.0.1:${listen}
  keys: {signing: {secret: "${secret}"}}
  shutdown_grace: 0s
${extra.serve || ""}
admin:
  listen: 127.0.0.1:${admin}
  token: ${adminToken}
bot_defence: {secret: "${secret}"}
admission:
  data_dir: ${dir}/admission
origins:
  - name: shop
    addresses: [${originAddr}]
    health_check: {disabled: true}
routes:
  - {prefix: /show/, event: show}
  - {prefix: /other/, event: other}
events:
${extra.events}
`;
}

// polls are the status requests in a jar's log.
const polls = (jar) => jar.log.filter((e) => e.url.includes("/api/status"));

test("join, position, admitted: the pass opens the gated path; polls honour refresh_seconds", async (t) => {
  const origin = await startOrigin();
  origins.push(origin);
  const serve = await startServe((p) =>
    config(p, origin.addr, {
      events: `  - id: show
    queue_opens_at: now
    on_sale_at: now+4s
    position_display: exact
    challenge:
      mode: on
      light: {bits: 12, puzzles: 4}
      heavy: {bits: 13, puzzles: 4}
  - id: other
`,
    }),
  );
  t.after(() => serve.stop());
  const jar = new Jar();

  // Without a pass the gated path is the waiting room, never the origin.
  const page = await jar.fetch(serve.base + "/show/seats", { headers: { Accept: "text/html" } });
  assert.notEqual(await page.text(), "origin:/show/seats");
  assert.equal(origin.seen.length, 0, "a gated request without a pass reached the origin");

  const room = new WaitingRoom({ event: "show", baseURL: serve.base, returnTo: "/show/seats", fetch: jar.fetch });
  t.after(() => room.stop());
  const positions = [];
  const statuses = [];
  const errors = [];
  let challenge = null;
  room.on("position", (s) => positions.push(s));
  room.on("status", (s) => statuses.push({ at: Date.now(), s }));
  room.on("error", (e) => errors.push(e));
  room.on("challenge", (c) => {
    challenge = c;
  });
  const admitted = waitFor(room, "admitted", 60000);
  room.start();
  const s = await admitted;

  assert.ok(challenge && challenge.kind === "pow", "the room asked for no proof of work; the test meant to solve one");
  assert.deepEqual(errors, []);
  assert.ok(positions.length >= 1, "no position event before admission");
  for (const p of positions) {
    assert.ok(["prequeue", "waiting_for_draw", "waiting", "paused"].includes(p.status), "position event with status " + p.status);
  }
  assert.equal(s.status, "admitted");
  assert.equal(s.redirect, "/show/seats");
  assert.equal(room.running, false);
  assert.equal(room.timer, null, "a timer is left after admission");
  assert.ok([...jar.cookies.keys()].some((k) => k.includes("pass")), "no pass cookie: " + [...jar.cookies.keys()]);

  // Every poll came at least refresh_seconds after the answer before it.
  const p = polls(jar);
  for (let i = 1; i < statuses.length; i++) {
    const prev = statuses[i - 1];
    const next = p.find((e) => e.at > prev.at);
    if (!next) continue;
    const gap = next.at - prev.at;
    assert.ok(gap >= prev.s.refresh_seconds * 1000 - 20, `polled ${gap} ms after an answer asking for ${prev.s.refresh_seconds} s`);
  }

  // The admitted visitor's request reaches the origin.
  const n = jar.log.length;
  const r = await jar.fetch(serve.base + s.redirect);
  assert.equal(await r.text(), "origin:/show/seats");
  assert.equal(origin.seen.length, 1);
  assert.equal(origin.seen[0].headers["x-waitroom-event"], "show");
  assert.ok(origin.seen[0].headers["x-waitroom-visitor"], "the origin got no visitor id");
  assert.equal(jar.log.length, n + 1, "the client made requests after admission");
});

test("429: the client waits the Retry-After before its next request, and gets in", async (t) => {
  const origin = await startOrigin();
  origins.push(origin);
  const serve = await startServe((p) =>
    config(p, origin.addr, {
      serve: `  rate_limits:
    per_ip: {rate: 0.25, burst: 2}
    per_prefix: {rate: 1000, burst: 1000}`,
      events: `  - id: show
    queue_opens_at: now
    on_sale_at: now+3s
  - id: other
`,
    }),
  );
  t.after(() => serve.stop());
  const jar = new Jar();
  const room = new WaitingRoom({ event: "show", baseURL: serve.base, fetch: jar.fetch });
  t.after(() => room.stop());
  const retries = [];
  room.on("error", (e) => retries.push(e));
  const admitted = waitFor(room, "admitted", 90000);
  room.start();
  await admitted;

  const limited = jar.log.filter((e) => e.status === 429);
  assert.ok(limited.length >= 1, "the tight per_ip limit never answered 429: " + JSON.stringify(jar.log.map((e) => e.status)));
  for (const e of limited) {
    const i = jar.log.indexOf(e);
    const next = jar.log[i + 1];
    if (!next) continue;
    const ra = Number(e.retryAfter);
    assert.ok(ra >= 1, "a 429 without Retry-After");
    assert.ok(next.at - e.at >= ra * 1000 - 20, `the next request came ${next.at - e.at} ms after a 429 with Retry-After: ${ra}`);
  }
  assert.ok(retries.length >= limited.length, "the 429s were not reported");
  for (const e of retries) {
    assert.equal(e.retrying, true);
    assert.equal(e.status, 429);
  }
  assert.ok(jar.log.filter((e) => e.status === 200).length >= 2);
});

test("sold out and closed from the operator API end the polling with their events", async (t) => {
  const origin = await startOrigin();
  origins.push(origin);
  const serve = await startServe((p) =>
    config(p, origin.addr, {
      events: `  - id: show
    queue_opens_at: now
    on_sale_at: now+1h
  - id: other
    queue_opens_at: now
    on_sale_at: now+1h
`,
    }),
  );
  t.after(() => serve.stop());

  for (const [event, action, want] of [
    ["show", "sold-out", "sold_out"],
    ["other", "close", "closed"],
  ]) {
    const jar = new Jar();
    const room = new WaitingRoom({ event, baseURL: serve.base, fetch: jar.fetch });
    t.after(() => room.stop());
    const first = waitFor(room, "position", 30000);
    const seen = [];
    room.on("status", (s) => seen.push(s.status));
    room.start();
    const pos = await first;
    assert.equal(pos.status, "prequeue");
    const ended = waitFor(room, want, 90000);
    const res = await serve.adminPost(`/admin/v1/events/${event}/${action}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const s = await ended;
    assert.equal(s.status, want);
    assert.equal(room.running, false);
    assert.equal(room.timer, null, "a timer is left after " + want);
    assert.equal(seen.at(-1), want);
    // Nothing more is asked: stop() left no request under way.
    assert.equal(room.inflight, null);
  }
});

test("stop() and an aborted signal end polling; a stopped room starts again", async (t) => {
  const origin = await startOrigin();
  origins.push(origin);
  const serve = await startServe((p) =>
    config(p, origin.addr, {
      events: `  - id: show
    queue_opens_at: now
    on_sale_at: now+1h
  - id: other
`,
    }),
  );
  t.after(() => serve.stop());
  const jar = new Jar();
  const ctl = new AbortController();
  const room = new WaitingRoom({ event: "show", baseURL: serve.base, fetch: jar.fetch, signal: ctl.signal });
  t.after(() => room.stop());
  const first = waitFor(room, "position", 30000);
  room.start();
  await first;
  assert.ok(room.timer !== null, "no poll scheduled while waiting");
  room.stop();
  assert.equal(room.timer, null);
  // Started again, it keeps its place (the ticket cookie): a poll, no join.
  const joins = jar.log.filter((e) => e.url.includes("/api/join")).length;
  const again = waitFor(room, "position", 30000);
  room.start();
  await again;
  assert.equal(jar.log.filter((e) => e.url.includes("/api/join")).length, joins, "a restart joined again");
  ctl.abort();
  assert.equal(room.running, false);
  assert.equal(room.timer, null);
  room.start();
  assert.equal(room.running, false, "a room whose signal aborted started again");
});

test("the room down: network errors back off exponentially, and the place is kept when it is back", async (t) => {
  const origin = await startOrigin();
  origins.push(origin);
  const cfg = (p) =>
    config(p, origin.addr, {
      events: `  - id: show
    queue_opens_at: now
    on_sale_at: 2099-01-01T00:00:00Z
  - id: other
`,
    });
  let serve = await startServe(cfg);
  t.after(() => serve.stop());
  const jar = new Jar();
  // random 0: no jitter, and each backoff takes its lower bound (half of
  // refresh_seconds × 2^failures), so the doubling is exact.
  const room = new WaitingRoom({ event: "show", baseURL: serve.base, fetch: jar.fetch, maxBackoff: 40, random: () => 0 });
  t.after(() => room.stop());
  const errors = [];
  room.on("error", (e) => errors.push({ at: Date.now(), e }));
  const started = waitFor(room, "position", 30000);
  room.start();
  const first = await started;
  const refresh = first.refresh_seconds;
  const joins = jar.log.filter((e) => e.url.includes("/api/join")).length;

  await serve.stop();
  while (errors.length < 3) await new Promise((r) => setTimeout(r, 100));
  for (const { e } of errors) {
    assert.equal(e.code, "network");
    assert.equal(e.retrying, true);
  }
  const waits = errors.map((x) => x.e.retryIn);
  const want = [1, 2, 3].map((n) => Math.max(refresh, Math.min(40, Math.max(refresh, 1) * 2 ** n) / 2));
  assert.deepEqual(waits, want, `refresh_seconds ${refresh}`);
  for (let i = 1; i < errors.length; i++) {
    assert.ok(errors[i].at - errors[i - 1].at >= waits[i - 1] * 1000 - 20, "retried sooner than announced");
  }

  // Back in the same place (same ports, data and keys): the next poll
  // finds the ticket; no new join.
  const back = waitFor(room, "position", 90000);
  serve = await startServe(cfg, serve.spec);
  const s = await back;
  assert.equal(s.status, "prequeue");
  assert.equal(jar.log.filter((e) => e.url.includes("/api/join")).length, joins, "the client joined again after the outage");
});

// The app as a browser runs it: a page of the site, behind the room,
// imports the module and uses the browser's own fetch and cookie store.
const appPage = `<!doctype html><meta charset="utf-8"><title>waiting</title><pre id="out"></pre>
<script type="module">
import { WaitingRoom } from "/app/waitroom.js";
const out = document.getElementById("out");
const log = (s) => { out.textContent += s + "\\n"; };
const room = new WaitingRoom({ event: "show", returnTo: "/show/seats" });
room.on("position", (s) => log("position " + s.status));
room.on("error", (e) => log("error " + e.code + " " + e.retrying));
room.on("admitted", async (s) => {
  log("admitted " + s.redirect);
  const r = await fetch(s.redirect);
  log("gated " + (await r.text()));
  document.title = "done";
});
room.start();
</script>`;

test("in Chromium: the page's fetch carries the ticket and the pass same-origin", async (t) => {
  const { readFileSync } = await import("node:fs");
  const module = readFileSync(new URL("../waitroom.js", import.meta.url), "utf8");
  const origin = await startOrigin({
    "/app/": { type: "text/html; charset=utf-8", body: appPage },
    "/app/waitroom.js": { type: "text/javascript", body: module },
  });
  origins.push(origin);
  const serve = await startServe((p) =>
    config(p, origin.addr, {
      events: `  - id: show
    queue_opens_at: now
    on_sale_at: now+3s
    challenge:
      mode: on
      light: {bits: 10, puzzles: 4}
      heavy: {bits: 11, puzzles: 4}
  - id: other
`,
    }),
  );
  t.after(() => serve.stop());
  const page = await chromiumPage(serve.base + "/app/");
  t.after(() => page.close());
  let dom = "";
  for (const deadline = Date.now() + 90000; ; ) {
    dom = await page.evaluate("document.title + '\\n' + (document.getElementById('out') || {}).textContent");
    if (dom.startsWith("done")) break;
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.match(dom, /position (prequeue|waiting_for_draw|waiting)/, dom);
  assert.match(dom, /admitted \/show\/seats/, dom);
  assert.match(dom, /gated origin:\/show\/seats/, dom);
  assert.doesNotMatch(dom, /error /, dom);
  const gated = origin.seen.filter((r) => r.path === "/show/seats");
  assert.equal(gated.length, 1);
  assert.equal(gated[0].headers["x-waitroom-event"], "show");
});
