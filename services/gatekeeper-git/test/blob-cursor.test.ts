/** BlobCursor on a real blob: one git process serves reads front to back, with a short look-back. */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { BlobCursor } from "../src/blob-cursor.ts";
import { makeRepo, sh } from "./helpers.ts";

const data = Buffer.from(Array.from({ length: 300_000 }, (_, i) => 32 + (i % 90)));
const repo = makeRepo({ "f.txt": data.toString("latin1") });
after(() => repo.cleanup());
const sha = sh(repo.bare, "rev-parse", "main:f.txt");

test("ranges read in order come from one walk: look-back of a few bytes, skips ahead, a short read at the end", async () => {
  const c = new BlobCursor(repo.bare, sha);
  try {
    assert.deepEqual(await c.range(0, 10), data.subarray(0, 10));
    assert.deepEqual(await c.range(7, 70_000), data.subarray(7, 70_000), "3 bytes back, then a long read");
    assert.deepEqual(await c.range(200_000, 200_100), data.subarray(200_000, 200_100), "a skip ahead");
    assert.equal(c.canServe(100), false, "the cursor never goes back further than it keeps");
    await assert.rejects(c.range(100, 200), RangeError);
    assert.deepEqual(await c.range(299_990, 310_000), data.subarray(299_990), "short at the end of the blob");
    assert.deepEqual(await c.range(300_000, 300_010), Buffer.alloc(0));
  } finally {
    c.close();
  }
  assert.equal(c.canServe(300_000), false, "a closed cursor serves nothing");
});

test("concurrent reads are served in call order", async () => {
  const c = new BlobCursor(repo.bare, sha);
  try {
    const [a, b] = await Promise.all([c.range(0, 1000), c.range(1000, 5000)]);
    assert.deepEqual(Buffer.concat([a, b]), data.subarray(0, 5000));
  } finally {
    c.close();
  }
});
