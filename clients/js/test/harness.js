// The test harness: a real `waitroom serve` built from this repository, a
// tiny origin, and a fetch with a cookie jar that records every request
// (Node's fetch keeps no cookies). Not a test file itself: package.json's
// test script names the *.test.js files.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

export const ADMIN_TOKEN = "jsclient-test-admin-token-0123456789";

// tempDir is a directory removed when the process exits.
export function tempDir() {
  const d = mkdtempSync(join(tmpdir(), "waitroom-js-"));
  process.on("exit", () => rmSync(d, { recursive: true, force: true }));
  return d;
}

let binary = null;

// buildWaitroom builds cmd/waitroom once per test process.
export function buildWaitroom() {
  if (binary) return binary;
  const out = join(tempDir(), "waitroom");
  const path = [process.env.PATH, "/usr/local/go/bin"].filter(Boolean).join(":");
  execFileSync("go", ["build", "-o", out, "./cmd/waitroom"], { cwd: repo, stdio: "inherit", env: { ...process.env, PATH: path } });
  binary = out;
  return out;
}

// freePort asks the kernel for a free loopback port.
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// startOrigin starts the site behind the room: it answers "origin:<path>"
// and records each request's path and headers; files maps paths to
// {type, body} it serves instead.
export async function startOrigin(files = {}) {
  const seen = [];
  const srv = http.createServer((req, res) => {
    seen.push({ path: req.url, headers: req.headers });
    const f = files[req.url];
    res.setHeader("Content-Type", f ? f.type : "text/plain");
    res.end(f ? f.body : "origin:" + req.url);
  });
  await new Promise((resolve) => srv.listen(0, "127.0.0.1", resolve));
  return { addr: "127.0.0.1:" + srv.address().port, seen, close: () => new Promise((r) => srv.close(r)) };
}

// startServe writes the configuration that config(spec) returns and runs
// `waitroom serve` with it until stop(); it resolves once /readyz answers
// 200 on the admin listener. spec is {listen, admin (ports), dir, secret,
// adminToken}: new, or an earlier serve's, to start it again in its place.
export async function startServe(config, again) {
  const bin = buildWaitroom();
  const spec = again || {
    listen: await freePort(),
    admin: await freePort(),
    dir: tempDir(),
    secret: randomBytes(32).toString("hex"),
    adminToken: ADMIN_TOKEN,
  };
  const { dir } = spec;
  const ports = spec;
  const file = join(dir, "waitroom.yaml");
  writeFileSync(file, config(spec));
  const child = spawn(bin, ["serve", "-c", file], { stdio: ["ignore", "inherit", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const admin = "http://127.0.0.1:" + ports.admin;
  const deadline = Date.now() + 30000;
  for (;;) {
    if (child.exitCode !== null) throw new Error("waitroom serve exited: " + stderr);
    try {
      const r = await fetch(admin + "/readyz");
      if (r.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error("waitroom serve not ready within 30 s: " + stderr);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    spec,
    base: "http://127.0.0.1:" + ports.listen,
    admin,
    stderr: () => stderr,
    // adminPost calls the operator API.
    async adminPost(path) {
      const r = await fetch(admin + path, { method: "POST", headers: { Authorization: "Bearer " + ADMIN_TOKEN } });
      return { status: r.status, body: await r.json().catch(() => null) };
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}

// Jar is a visitor's cookies for one host and a fetch that sends and keeps
// them, recording every request: {at, method, url, status, retryAfter}.
export class Jar {
  constructor() {
    this.cookies = new Map();
    this.log = [];
    this.fetch = this.fetch.bind(this);
  }

  header() {
    return [...this.cookies].map(([k, v]) => k + "=" + v).join("; ");
  }

  async fetch(url, init = {}) {
    const headers = new Headers(init.headers || {});
    if (this.cookies.size) headers.set("Cookie", this.header());
    const entry = { at: Date.now(), method: init.method || "GET", url: String(url), status: 0, retryAfter: null };
    this.log.push(entry);
    const r = await fetch(url, { ...init, headers, redirect: "manual" });
    entry.status = r.status;
    entry.retryAfter = r.headers.get("Retry-After");
    const set = typeof r.headers.getSetCookie === "function" ? r.headers.getSetCookie() : splitSetCookie(r.headers.get("set-cookie"));
    for (const c of set) {
      const [pair, ...attrs] = c.split(";");
      const i = pair.indexOf("=");
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      const gone = value === "" || attrs.some((a) => /^\s*max-age\s*=\s*(0|-)/i.test(a));
      if (gone) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return r;
  }
}

function splitSetCookie(h) {
  return h ? h.split(/,(?=\s*[^;=\s]+=)/) : [];
}

// waitFor resolves with the first detail of the room's event, or rejects
// after ms.
export function waitFor(room, name, ms) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      off();
      reject(new Error("no " + name + " event within " + ms + " ms"));
    }, ms);
    const off = room.on(name, (d) => {
      clearTimeout(t);
      off();
      resolve(d);
    });
  });
}

// chromiumPage opens url in headless Chromium, driven over the DevTools
// protocol on a pipe (--remote-debugging-pipe: fd 3 in, fd 4 out, NUL
// between messages), and resolves with evaluate(expression), which runs
// in the page and resolves with its value, and close().
export async function chromiumPage(url) {
  const child = spawn(
    "chromium",
    ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + tempDir(), "--remote-debugging-pipe", url],
    { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const pending = new Map();
  let next = 1;
  let buf = "";
  child.stdio[4].on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\0")) >= 0) {
      const m = JSON.parse(buf.slice(0, i));
      buf = buf.slice(i + 1);
      const p = pending.get(m.id);
      if (!p) continue;
      pending.delete(m.id);
      if (m.error) p.reject(new Error("chromium: " + JSON.stringify(m.error)));
      else p.resolve(m.result);
    }
  });
  const send = (method, params = {}, sessionId) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      child.stdio[3].write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + "\0");
    });
  let page = null;
  for (const deadline = Date.now() + 30000; !page; ) {
    const { targetInfos } = await send("Target.getTargets");
    page = targetInfos.find((ti) => ti.type === "page");
    if (!page) {
      if (Date.now() > deadline) throw new Error("chromium opened no page: " + stderr);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const { sessionId } = await send("Target.attachToTarget", { targetId: page.targetId, flatten: true });
  return {
    async evaluate(expression) {
      const r = await send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true }, sessionId);
      if (r.exceptionDetails) throw new Error("chromium: " + JSON.stringify(r.exceptionDetails));
      return r.result.value;
    },
    async close() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
