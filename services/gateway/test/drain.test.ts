/**
 * The gateway process (main.ts) drains before it stops: after SIGTERM its `/healthz` answers 503 at
 * once, the API keeps answering (with `Connection: close`) for GATEWAY_DRAIN_SECONDS, then the process
 * exits 0. A real nats-server carries its live notices; the requests checked need no backend.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { type NatsServerProcess, startNatsServer } from "@gatehouse/live-notices/nats-server";
import { freePort, waitForPort, waitUntil } from "@gatehouse/service-kit";

const ROOT = resolve(import.meta.dirname, "../../..");
const TOKEN = "drain-test-approver-token-0123";

let dir: string;
let nats: NatsServerProcess;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "gh-gateway-drain-"));
  writeFileSync(
    join(dir, "dev-tokens.json"),
    JSON.stringify({ tokens: [{ token: TOKEN, subject: "drain", roles: ["approver"] }] }),
  );
  nats = await startNatsServer();
});
after(async () => {
  await nats?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  connection: string | undefined;
}

/** One GET on a fresh keep-alive connection (closed after the answer), so each request reaches the server anew. */
function get(port: number, path: string): Promise<Answer> {
  const agent = new Agent({ keepAlive: true });
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port, path, agent, headers: { authorization: `Bearer ${TOKEN}` } },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
      },
    );
    req.on("error", reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`GET ${path}: no answer in 30 s`)));
    req.end();
  }).finally(() => agent.destroy());
}

/** Starts main.ts with GATEWAY_DRAIN_SECONDS=`drainSeconds`; resolves once both ports listen. */
async function startGatewayProcess(drainSeconds: number) {
  const [port, ops, kernel, approval] = (await Promise.all([1, 2, 3, 4].map(() => freePort()))) as [
    number,
    number,
    number,
    number,
  ];
  let output = "";
  const child: ChildProcess = spawn(
    process.execPath,
    ["--no-node-snapshot", "--import", "tsx", "services/gateway/src/main.ts"],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        GATEWAY_ADDR: `127.0.0.1:${port}`,
        METRICS_ADDR: `127.0.0.1:${ops}`,
        // Nothing listens there: the requests below need no backend.
        KERNEL_ADDRESS: `127.0.0.1:${kernel}`,
        APPROVAL_ADDRESS: `127.0.0.1:${approval}`,
        NATS_URL: nats.url,
        GATEWAY_DEV_TOKENS_FILE: join(dir, "dev-tokens.json"),
        GATEWAY_DRAIN_SECONDS: String(drainSeconds),
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<{ code: number | null; at: number }>((r) =>
    child.once("exit", (code) => r({ code, at: performance.now() })),
  );
  const stillRunning = () =>
    child.exitCode !== null ? `the gateway exited with ${child.exitCode}: ${output}` : undefined;
  await waitForPort(port, { name: "gateway", timeoutMs: 120_000, stillRunning });
  await waitForPort(ops, { name: "gateway ops", timeoutMs: 120_000, stillRunning });
  return { child, port, ops, exited, output: () => output };
}

test("SIGTERM: /healthz 503 at once, the API still answers during GATEWAY_DRAIN_SECONDS (Connection: close), then the process exits 0", async () => {
  const gw = await startGatewayProcess(6);
  try {
    assert.equal((await get(gw.ops, "/healthz")).status, 200);
    assert.equal((await get(gw.port, "/healthz")).status, 200);
    const before = await get(gw.port, "/api/me");
    assert.equal(before.status, 200);
    assert.notEqual(before.connection, "close");
    const signalled = performance.now();
    gw.child.kill("SIGTERM");
    await waitUntil("/healthz answering 503", async () => (await get(gw.ops, "/healthz")).status === 503, {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    const notReadyMs = performance.now() - signalled;
    assert.equal((await get(gw.port, "/healthz")).status, 503, "the API port's /healthz too");
    // Requests during the drain: answered, each asking the client to close its connection.
    const during: Answer[] = [];
    // (A request after the drain would be refused: get() rejects and the test fails.)
    for (let i = 0; i < 3; i++) during.push(await get(gw.port, "/api/me"));
    assert.deepEqual(
      during.map((a) => [a.status, a.connection]),
      during.map(() => [200, "close"]),
      gw.output(),
    );
    assert.ok(notReadyMs < 3_000, `not ready after ${Math.round(notReadyMs)} ms`);
    const exit = await gw.exited;
    assert.equal(exit.code, 0, gw.output());
    const exitedAfter = exit.at - signalled;
    assert.ok(
      exitedAfter >= 5_900,
      `exited ${Math.round(exitedAfter)} ms after SIGTERM, before the drain ended`,
    );
    assert.match(gw.output(), /"event":"drain","drainMs":6000/);
    assert.match(gw.output(), /"event":"drained"/);
  } finally {
    gw.child.kill("SIGKILL");
  }
});

test("GATEWAY_DRAIN_SECONDS unset: the process stops at once on SIGTERM; a second SIGTERM ends a long drain", async () => {
  const quick = await startGatewayProcess(0);
  const t0 = performance.now();
  quick.child.kill("SIGTERM");
  assert.equal((await quick.exited).code, 0, quick.output());
  assert.ok(performance.now() - t0 < 20_000);

  const long = await startGatewayProcess(300);
  try {
    long.child.kill("SIGTERM");
    await waitUntil("/healthz answering 503", async () => (await get(long.ops, "/healthz")).status === 503, {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    const second = performance.now();
    long.child.kill("SIGTERM");
    const exit = await long.exited;
    assert.equal(exit.code, 0, long.output());
    assert.ok(exit.at - second < 20_000, "the second signal ended the 300 s drain");
    assert.match(long.output(), /"event":"drained".*"skipped":true/);
  } finally {
    long.child.kill("SIGKILL");
  }
});

test("GATEWAY_DRAIN_SECONDS that is not whole seconds from 0 to 300 is refused, naming the variable", async () => {
  const { loadConfig } = await import("../src/config.ts");
  const env = { NATS_URL: nats.url, GATEWAY_DEV_TOKENS_FILE: join(dir, "dev-tokens.json") };
  assert.equal(loadConfig(env).drainSeconds, 0);
  assert.equal(loadConfig({ ...env, GATEWAY_DRAIN_SECONDS: "15" }).drainSeconds, 15);
  assert.throws(
    () => loadConfig({ ...env, GATEWAY_DRAIN_SECONDS: "1.5" }),
    /GATEWAY_DRAIN_SECONDS: expected whole seconds/,
  );
  assert.throws(
    () => loadConfig({ ...env, GATEWAY_DRAIN_SECONDS: "301" }),
    /GATEWAY_DRAIN_SECONDS: expected at most 300 seconds/,
  );
});
