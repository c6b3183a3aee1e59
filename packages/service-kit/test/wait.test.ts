import assert from "node:assert/strict";
import { test } from "node:test";
import { waitUntil } from "../src/wait.ts";

test("waitUntil returns the first truthy answer of the check, awaiting promises", async () => {
  let calls = 0;
  const value = await waitUntil("the third call", async () => (++calls >= 3 ? { calls } : undefined), {
    intervalMs: 1,
  });
  assert.deepEqual(value, { calls: 3 });
});

test("waitUntil names what it waited for when the deadline passes, and a throwing check stops it at once", async () => {
  await assert.rejects(
    waitUntil("a condition that never holds", () => false, { timeoutMs: 30, intervalMs: 5 }),
    /timed out after 30 ms waiting for a condition that never holds/,
  );
  let calls = 0;
  await assert.rejects(
    waitUntil("a child process", () => {
      calls++;
      throw new Error("the child exited with 1");
    }),
    /the child exited with 1/,
  );
  assert.equal(calls, 1);
});
