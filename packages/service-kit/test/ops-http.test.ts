import assert from "node:assert/strict";
import { test } from "node:test";
import { Counter, Registry } from "prom-client";
import { startOpsHttp } from "../src/index.ts";

test("serves Prometheus metrics and a health check that turns 503 when unhealthy", async () => {
  const registry = new Registry();
  new Counter({ name: "demo_total", help: "demo", registers: [registry] }).inc(3);
  let healthy = true;
  const ops = await startOpsHttp({ host: "127.0.0.1", port: 0, registry, healthy: () => healthy });
  try {
    const base = `http://127.0.0.1:${ops.port}`;
    assert.match(await (await fetch(`${base}/metrics`)).text(), /demo_total 3/);
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    healthy = false;
    assert.equal((await fetch(`${base}/healthz`)).status, 503);
    assert.equal((await fetch(`${base}/other`)).status, 404);
  } finally {
    await ops.close();
  }
});
