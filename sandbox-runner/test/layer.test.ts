import assert from "node:assert/strict";
import { test } from "node:test";
import pino from "pino";
import { executeSnippet } from "../src/client.ts";
import { loadConfig } from "../src/config.ts";
import { GVISOR_OFF_WARNING, startSandboxRunner } from "../src/index.ts";
import { ensureIsolateHost } from "../src/isolate-host-path.ts";

test("without runsc on PATH, auto mode runs isolate-only and every result carries the gVisor-off warning", async () => {
  await ensureIsolateHost();
  const savedPath = process.env.PATH;
  process.env.PATH = "/nonexistent-gatehouse-test";
  let runner: Awaited<ReturnType<typeof startSandboxRunner>>;
  try {
    runner = await startSandboxRunner({ mode: "auto", logger: pino({ level: "silent" }) });
  } finally {
    process.env.PATH = savedPath;
  }
  try {
    assert.equal(runner.mode, "none");
    const r = await executeSnippet(`127.0.0.1:${runner.port}`, {
      executionId: "layer-1",
      workspaceId: "ws-test",
      code: "export default () => 7",
    });
    assert.equal(r.returnJson, "7");
    assert.deepEqual(r.warnings, [GVISOR_OFF_WARNING]);
  } finally {
    await runner.close();
  }
});

test("sandbox mode gvisor without runsc refuses to start, naming SANDBOX_MODE", async () => {
  const savedPath = process.env.PATH;
  process.env.PATH = "/nonexistent-gatehouse-test";
  try {
    await assert.rejects(
      startSandboxRunner({ mode: "gvisor", logger: pino({ level: "silent" }) }),
      /runsc is not on PATH.*SANDBOX_MODE/,
    );
  } finally {
    process.env.PATH = savedPath;
  }
});

test("configuration errors name the environment variable", () => {
  assert.throws(() => loadConfig({ SANDBOX_RUNNER_ADDR: "nope" }), /SANDBOX_RUNNER_ADDR/);
  assert.throws(() => loadConfig({ SANDBOX_MODE: "docker" }), /SANDBOX_MODE/);
  const c = loadConfig({});
  assert.equal(c.port, 7004);
  assert.equal(c.mode, "auto");
});
