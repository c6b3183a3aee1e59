import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { processInfo, waitForPort, writePidFile } from "@gatehouse/service-kit";
import { findTemporalCli, freePort, startTemporalDevServer, TemporalCliMissing } from "../src/index.ts";

test("a missing CLI is a clear error that says how to install it", () => {
  assert.throws(
    () => findTemporalCli({ PATH: "/nonexistent", HOME: "/nonexistent" }),
    (err: Error) => err instanceof TemporalCliMissing && /npm run setup/.test(err.message),
  );
  assert.throws(
    () => findTemporalCli({ GATEHOUSE_TEMPORAL_CLI: "/nonexistent/temporal" }),
    /not an executable/,
  );
});

test("the dev server listens on loopback, persists to its db file, and stops", async () => {
  const dir = mkdtempSync(join(tmpdir(), "temporal-dev-"));
  try {
    const server = await startTemporalDevServer({ dbFile: join(dir, "temporal.db") });
    assert.match(server.address, /^127\.0\.0\.1:\d+$/);
    await server.close();
    const port = Number(server.address.split(":")[1]);
    const open = await new Promise<boolean>((resolve) => {
      const c = createConnection({ host: "127.0.0.1", port }, () => {
        c.end();
        resolve(true);
      });
      c.once("error", () => resolve(false));
    });
    assert.equal(open, false, "the port is released after close");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a port already in use is refused instead of silently using whatever answers there", async () => {
  const { createServer } = await import("node:net");
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", () => resolve()));
  const addr = squatter.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  try {
    await assert.rejects(startTemporalDevServer({ port }), /already in use/);
    // The holder here is this test process: the message names it, so a user knows what to stop.
    await assert.rejects(
      startTemporalDevServer({ port }),
      new RegExp(`already in use by pid ${process.pid} \\(.*\\); stop it \\(kill ${process.pid}\\)`),
    );
  } finally {
    squatter.close();
  }
});

test("a leftover server named by the pid file (a killed start's) is stopped, and the new server takes its port", async () => {
  const dir = mkdtempSync(join(tmpdir(), "temporal-dev-"));
  const dbFile = join(dir, "temporal.db");
  const pidFile = join(dir, "temporal.pid");
  const port = await freePort();
  // A server as a killed `gatehouse dev` would leave it: not tied to this process, pid file written.
  const leftover = spawn(
    findTemporalCli(),
    [
      "server",
      "start-dev",
      "--headless",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--http-port",
      String(await freePort()),
      "--metrics-port",
      String(await freePort()),
      "--db-filename",
      dbFile,
      "--log-level",
      "error",
    ],
    { stdio: "ignore", detached: true },
  );
  try {
    await waitForPort(port, { name: "leftover temporal", timeoutMs: 120_000 });
    writePidFile(pidFile, leftover.pid ?? 0);
    const server = await startTemporalDevServer({ dbFile, port, pidFile });
    try {
      assert.equal(processInfo(leftover.pid ?? 0), undefined, "the leftover was stopped");
      assert.equal(server.stoppedLeftover?.pid, leftover.pid, "and the handle names it");
      const record = JSON.parse(readFileSync(pidFile, "utf8"));
      assert.notEqual(record.pid, leftover.pid);
      assert.match(processInfo(record.pid)?.command ?? "", /server start-dev/);
    } finally {
      await server.close();
    }
    assert.equal(existsSync(pidFile), false, "close removes the pid file");
  } finally {
    if (processInfo(leftover.pid ?? 0)) leftover.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
});
