/**
 * scripts/demo.sh notices when the `gatehouse dev` it starts exits during start-up (here: its kernel
 * port is taken) and fails at once with dev's error and the demo's own knobs (DEMO_PORT_BASE /
 * DEMO_WEB_PORT), instead of waiting minutes for a dev.json that never comes. Runs the real script
 * on this checkout (its set-up step has nothing to install after `npm test`'s) with the port held by
 * a plain TCP server, and checks no process of the demo is left.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");

/** A TCP server listening on a free loopback port, and that port. */
async function holdPort(): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((done, fail) => {
    server.once("error", fail);
    server.listen(0, "127.0.0.1", done);
  });
  const address = server.address();
  assert.ok(address && typeof address === "object");
  return { server, port: address.port };
}

/** Pids of live processes whose environment holds `entry` ("NAME=value"); unreadable ones are skipped. */
function processesWithEnv(entry: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, "latin1").split("\0").includes(entry))
        pids.push(Number(name));
    } catch {
      // gone meanwhile, or another user's
    }
  }
  return pids;
}

test("the demo fails within seconds, naming the port and DEMO_PORT_BASE, when its gatehouse dev cannot start", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-demo-start-"));
  const held = await holdPort();
  const web = await holdPort(); // a port no other stack uses, freed before the demo starts
  const webPort = web.port;
  await new Promise((done) => web.server.close(done));
  const dataDir = join(dir, "demo");
  try {
    const child = spawn("bash", [join(ROOT, "scripts/demo.sh")], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        TURBO_TELEMETRY_DISABLED: "1",
        CI: "1",
        DEMO_DATA_DIR: dataDir,
        DEMO_PORT_BASE: String(held.port),
        DEMO_WEB_PORT: String(webPort),
      },
    });
    let out = "";
    let devStartedAt: number | undefined;
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      // The set-up step before it may install things on a fresh machine: time only the wait for dev.
      if (devStartedAt === undefined && out.includes("starting gatehouse dev")) devStartedAt = Date.now();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const deadline = setTimeout(() => child.kill("SIGTERM"), 600_000);
    const code = await new Promise<number | null>((done) => child.once("close", done));
    clearTimeout(deadline);
    const waited = Date.now() - (devStartedAt ?? Number.NaN);

    assert.equal(code, 1, out);
    assert.ok(waited < 60_000, `the demo waited ${waited} ms for a gatehouse dev that had exited:\n${out}`);
    assert.match(out, new RegExp(`port ${held.port} \\(kernel\\) is already in use`));
    assert.match(out, /^demo: gatehouse dev stopped during start-up/m);
    assert.match(
      out,
      new RegExp(
        `^demo: the demo's ports come from DEMO_PORT_BASE \\(now ${held.port}: it uses ${held.port} to ${held.port + 5}\\) and DEMO_WEB_PORT \\(now ${webPort}\\): set another base`,
        "m",
      ),
    );
    assert.deepEqual(processesWithEnv(`GATEHOUSE_DATA_DIR=${dataDir}`), [], "a process of the demo is left");
  } finally {
    await new Promise((done) => held.server.close(done));
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the demo refuses a DEMO_PORT_BASE that is not a number, naming the variable", async () => {
  const child = spawn("bash", [join(ROOT, "scripts/demo.sh")], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1", CI: "1", DEMO_PORT_BASE: "71o1" },
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const code = await new Promise<number | null>((done) => child.once("close", done));
  assert.equal(code, 2, out);
  assert.match(
    out,
    /^demo: DEMO_PORT_BASE must be a port number, e.g\. DEMO_PORT_BASE=7201 \(got "71o1"\)$/m,
  );
});
