import assert from "node:assert/strict";
import { test } from "node:test";
import { Registry } from "prom-client";
import { Drain, startOpsHttp } from "../src/index.ts";

test("Drain: /healthz turns 503 at once while the drain period runs; it ends after drainMs", async () => {
  const drain = new Drain(400);
  const ops = await startOpsHttp({
    host: "127.0.0.1",
    port: 0,
    registry: new Registry(),
    healthy: drain.ready,
  });
  try {
    const healthz = async () => (await fetch(`http://127.0.0.1:${ops.port}/healthz`)).status;
    assert.equal(await healthz(), 200);
    assert.equal(drain.state, "serving");
    const t0 = performance.now();
    const done = drain.drain();
    assert.equal(drain.state, "draining");
    assert.equal(drain.draining(), true);
    assert.equal(await healthz(), 503);
    assert.equal(drain.drain(), done, "a second call waits for the same drain");
    await done;
    assert.ok(performance.now() - t0 >= 390, `drained after ${performance.now() - t0} ms`);
    assert.equal(drain.state, "stopping");
    assert.equal(drain.draining(), false);
    assert.equal(await healthz(), 503, "not ready after the drain either");
  } finally {
    await ops.close();
  }
});

test("Drain: skip() ends the drain at once; drainMs 0 does not wait", async () => {
  const long = new Drain(300_000);
  const t0 = performance.now();
  const done = long.drain();
  long.skip();
  await done;
  assert.ok(performance.now() - t0 < 5_000);
  assert.equal(long.state, "stopping");
  await new Drain(0).drain();
});

test("Drain refuses a period that is not whole milliseconds from 0 to 5 minutes, naming what it got", () => {
  for (const bad of [-1, 1.5, 300_001, Number.NaN]) {
    assert.throws(() => new Drain(bad), /drain period: expected whole milliseconds from 0 to 300000, got/);
  }
});
