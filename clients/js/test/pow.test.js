// The built-in proof-of-work solver against node:crypto's SHA-256: the
// digest of the challenge's message, nonces that really have the leading
// zero bits, and the ways a solve ends early.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { powDigest, solvePow } from "../waitroom.js";

function reference(seedHex, index, nonce) {
  const m = Buffer.alloc(28);
  Buffer.from(seedHex, "hex").copy(m);
  m.writeUInt32BE(index, 16);
  m.writeBigUInt64BE(BigInt(nonce), 20);
  return createHash("sha256").update(m).digest();
}

function leadingZeroBits(d) {
  let n = 0;
  for (const byte of d) {
    if (byte === 0) {
      n += 8;
      continue;
    }
    return n + Math.clz32(byte) - 24;
  }
  return n;
}

test("powDigest is SHA-256 of seed || index || nonce", () => {
  const nonces = [0, 1, 255, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 12345, 2 ** 53 - 1];
  for (let r = 0; r < 200; r++) nonces.push(Math.floor(Math.random() * 2 ** 53));
  for (const n of nonces) {
    const seed = randomBytes(16).toString("hex");
    const i = Math.floor(Math.random() * 65536);
    assert.equal(Buffer.from(powDigest(seed, i, n)).toString("hex"), reference(seed, i, n).toString("hex"), `seed ${seed} index ${i} nonce ${n}`);
  }
});

test("solvePow finds nonces with the leading zero bits, reporting progress", async () => {
  const seed = randomBytes(16).toString("hex");
  const fractions = [];
  const nonces = await solvePow({ token: "t", seed, bits: 10, puzzles: 8 }, { onProgress: (f) => fractions.push(f) });
  assert.equal(nonces.length, 8);
  nonces.forEach((n, i) => assert.ok(leadingZeroBits(reference(seed, i, n)) >= 10, `sub-puzzle ${i}: nonce ${n}`));
  // The smallest solving nonce: none below it solves.
  for (let n = 0; n < nonces[0]; n++) assert.ok(leadingZeroBits(reference(seed, 0, n)) < 10);
  assert.equal(fractions.at(-1), 1);
  for (let i = 1; i < fractions.length; i++) assert.ok(fractions[i] >= fractions[i - 1]);
});

test("solvePow refuses a malformed challenge and stops when aborted or expired", async () => {
  const seed = randomBytes(16).toString("hex");
  await assert.rejects(solvePow({ seed: "xyz", bits: 8, puzzles: 1 }), { code: "invalid" });
  await assert.rejects(solvePow({ seed, bits: 99, puzzles: 1 }), { code: "invalid" });
  await assert.rejects(solvePow({ seed, bits: 8, puzzles: 0 }), { code: "invalid" });
  const ctl = new AbortController();
  const run = solvePow({ seed, bits: 60, puzzles: 1 }, { signal: ctl.signal });
  setTimeout(() => ctl.abort(), 50);
  await assert.rejects(run, { code: "aborted" });
  const past = new Date(Date.now() - 1000).toISOString();
  await assert.rejects(solvePow({ seed, bits: 8, puzzles: 1, expires_at: past }), { code: "expired" });
});
