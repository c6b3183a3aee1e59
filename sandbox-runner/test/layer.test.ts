import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { executeSnippet } from "../src/client.ts";
import { loadConfig } from "../src/config.ts";
import { GVISOR_DISABLED_WARNING, GVISOR_OFF_WARNING, startSandboxRunner } from "../src/index.ts";
import { buildIsolateHostOnce } from "./helpers.ts";

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), "..");
/** A PATH without runsc on it (node itself is started by absolute path). */
const NO_RUNSC_PATH = "/nonexistent-gatehouse-test";

/** Runs `fn` with PATH pointing nowhere, so runsc is "absent" for the runner's detection. */
async function withoutRunsc<T>(fn: () => Promise<T>): Promise<T> {
  const savedPath = process.env.PATH;
  process.env.PATH = NO_RUNSC_PATH;
  try {
    return await fn();
  } finally {
    process.env.PATH = savedPath;
  }
}

/** Starts src/main.ts as its own process with `args` and PATH without runsc. */
function startMain(args: string[], env: Record<string, string> = {}): ChildProcess & { output(): string } {
  const child = spawn(process.execPath, ["--no-node-snapshot", "--import", "tsx", "src/main.ts", ...args], {
    cwd: PACKAGE,
    env: {
      PATH: NO_RUNSC_PATH,
      SANDBOX_RUNNER_ADDR: "127.0.0.1:0",
      SANDBOX_RUNNER_METRICS_ADDR: "127.0.0.1:0",
      SANDBOX_WARM: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  return Object.assign(child, { output: () => output });
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

test("without runsc on PATH the runner process refuses to start unless --insecure-no-gvisor is given", async () => {
  await buildIsolateHostOnce();
  const refused = startMain([]);
  const code = await exitOf(refused);
  assert.notEqual(code, 0);
  assert.match(refused.output(), /runsc \(gVisor\) is not on PATH/);
  assert.match(refused.output(), /--insecure-no-gvisor/);

  const accepted = startMain(["--insecure-no-gvisor"]);
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line: ${accepted.output()}`)), 120_000);
      const check = () => {
        const match = /"event":"listening".*?"port":(\d+)/.exec(accepted.output());
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      };
      accepted.stdout?.on("data", check);
      accepted.once("exit", () => reject(new Error(`exited: ${accepted.output()}`)));
    });
    assert.match(accepted.output(), /gVisor layer is OFF/);
    const r = await executeSnippet(`127.0.0.1:${port}`, {
      executionId: "layer-main",
      workspaceId: "ws-layer",
      code: "export default () => 6 * 7",
    });
    assert.equal(r.returnJson, "42");
    assert.deepEqual(r.warnings, [GVISOR_OFF_WARNING]);
  } finally {
    accepted.kill("SIGTERM");
    await exitOf(accepted);
  }
});

test("SANDBOX_INSECURE_NO_GVISOR=1 is the environment form of --insecure-no-gvisor", async () => {
  await buildIsolateHostOnce();
  const child = startMain([], { SANDBOX_INSECURE_NO_GVISOR: "1", SANDBOX_MODE: "none" });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line: ${child.output()}`)), 120_000);
      child.stdout?.on("data", () => {
        if (/"event":"listening"/.test(child.output())) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once("exit", () => reject(new Error(`exited: ${child.output()}`)));
    });
  } finally {
    child.kill("SIGTERM");
    await exitOf(child);
  }
});

test("without runsc, startSandboxRunner refuses auto mode unless insecureNoGvisor, and then every result warns", async () => {
  await buildIsolateHostOnce();
  await withoutRunsc(async () => {
    await assert.rejects(
      startSandboxRunner({ mode: "auto", logger: pino({ level: "silent" }) }),
      (e: Error) => e.name === "ConfigError" && /--insecure-no-gvisor/.test(e.message),
    );
  });
  const runner = await withoutRunsc(() =>
    startSandboxRunner({
      mode: "auto",
      insecureNoGvisor: true,
      logger: pino({ level: "silent" }),
      pool: { warm: 0 },
    }),
  );
  try {
    assert.equal(runner.mode, "none");
    for (const id of ["layer-1", "layer-2"]) {
      const r = await executeSnippet(`127.0.0.1:${runner.port}`, {
        executionId: id,
        workspaceId: "ws-test",
        code: "export default () => 7",
      });
      assert.equal(r.returnJson, "7");
      assert.deepEqual(r.warnings, [GVISOR_OFF_WARNING]);
    }
  } finally {
    await runner.close();
  }
});

test("sandbox mode none needs the insecure opt-in too; with it results carry the disabled-by-configuration warning", async () => {
  await buildIsolateHostOnce();
  await assert.rejects(
    startSandboxRunner({ mode: "none", logger: pino({ level: "silent" }) }),
    /sandbox mode "none" turns gVisor off.*--insecure-no-gvisor/,
  );
  const runner = await startSandboxRunner({
    mode: "none",
    insecureNoGvisor: true,
    logger: pino({ level: "silent" }),
    pool: { warm: 0 },
  });
  try {
    const r = await executeSnippet(`127.0.0.1:${runner.port}`, {
      executionId: "layer-3",
      workspaceId: "ws-test",
      code: "export default () => 1",
    });
    assert.deepEqual(r.warnings, [GVISOR_DISABLED_WARNING]);
  } finally {
    await runner.close();
  }
});

test("sandbox mode gvisor without runsc refuses to start even with the insecure opt-in, naming SANDBOX_MODE", async () => {
  await withoutRunsc(async () => {
    await assert.rejects(
      startSandboxRunner({ mode: "gvisor", insecureNoGvisor: true, logger: pino({ level: "silent" }) }),
      /runsc is not on PATH.*SANDBOX_MODE/,
    );
  });
});

test("configuration errors name the environment variable; pool settings have their defaults", () => {
  assert.throws(() => loadConfig({ SANDBOX_RUNNER_ADDR: "nope" }), /SANDBOX_RUNNER_ADDR/);
  assert.throws(() => loadConfig({ SANDBOX_MODE: "docker" }), /SANDBOX_MODE/);
  assert.throws(() => loadConfig({ SANDBOX_IDLE_MS: "soon" }), /SANDBOX_IDLE_MS/);
  assert.throws(() => loadConfig({ SANDBOX_WARM: "-1" }), /SANDBOX_WARM/);
  assert.throws(() => loadConfig({ SANDBOX_INSECURE_NO_GVISOR: "yes please" }), /SANDBOX_INSECURE_NO_GVISOR/);
  const c = loadConfig({});
  assert.equal(c.port, 7004);
  assert.equal(c.mode, "auto");
  assert.equal(c.insecureNoGvisor, false);
  assert.equal(c.idleMs, 300_000);
  assert.equal(c.warm, 2);
  assert.equal(loadConfig({ SANDBOX_IDLE_MS: "1500", SANDBOX_INSECURE_NO_GVISOR: "1" }).idleMs, 1500);
  assert.equal(loadConfig({ SANDBOX_INSECURE_NO_GVISOR: "true" }).insecureNoGvisor, true);
});
