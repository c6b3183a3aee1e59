import assert from "node:assert/strict";
import { createServer } from "node:net";
import { test } from "node:test";
import { canConnect, freePort, waitForPort } from "../src/index.ts";

test("a free port can be bound; canConnect and waitForPort see a listener only once it listens", async () => {
  const port = await freePort();
  assert.equal(await canConnect(port), false);
  await assert.rejects(
    waitForPort(port, { name: "nothing", timeoutMs: 150 }),
    /nothing did not listen on 127\.0\.0\.1:\d+ within 150 ms/,
  );
  const server = createServer();
  setTimeout(() => server.listen(port, "127.0.0.1"), 100);
  await waitForPort(port, { name: "late server", timeoutMs: 60_000 });
  assert.equal(await canConnect(port), true);
  await new Promise<void>((r) => server.close(() => r()));
});

test("waitForPort fails at once with the reason when the process behind it stopped", async () => {
  const port = await freePort();
  await assert.rejects(
    waitForPort(port, { name: "child", stillRunning: () => "child exited with 1" }),
    /^Error: child exited with 1$/,
  );
});
