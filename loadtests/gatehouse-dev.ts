/**
 * `gatehouse dev` as its own process on loopback, for the smoke test and `npm run loadtest`: free ports,
 * a fresh data dir, gVisor when runsc is installed (else `--sandbox none`, said in its output). The load
 * goes through the gateway as it would to a deployment; the services' CPU is the process's own, apart
 * from the harness's. `stop` sends SIGINT (the stack closes, a --cpu-prof profile is written), then
 * SIGKILL after 30 s; the data dir is removed.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { canConnect, waitUntil } from "@gatehouse/service-kit";
import { parse } from "yaml";

const ROOT = resolve(import.meta.dirname, "..");
const MAIN = join(ROOT, "apps/cli/src/main.ts");

/** A running `gatehouse dev`. */
export interface DevProcess {
  child: ChildProcess;
  /** The gateway's origin, e.g. http://127.0.0.1:27180. */
  url: string;
  dataDir: string;
  /** Dev tokens by subject (dev-approver, dev-auditor, dev-admin). */
  tokens: Record<string, string>;
  sandbox: "gvisor" | "none";
  /** Everything it printed so far. */
  output(): string;
  /** Stops it (SIGINT, then SIGKILL after 30 s) and removes its data dir. */
  stop(): Promise<void>;
}

/** Whether runsc (gVisor) is on the PATH. */
export function hasRunsc(): boolean {
  try {
    execFileSync("sh", ["-c", "command -v runsc"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Seven consecutive free loopback ports: --port-base n uses n..n+5, the gateway n+6. */
async function freePortBase(): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 9_000);
    const busy = await Promise.all([0, 1, 2, 3, 4, 5, 6].map((i) => canConnect(base + i)));
    if (!busy.some(Boolean)) return base;
  }
}

/**
 * Starts `gatehouse dev` and waits (up to `startTimeoutMs`, default 5 minutes: a busy 2-core machine
 * is slow) until it prints its sign-in links. `nodeFlags` go before the CLI (e.g. --cpu-prof).
 * @throws Error with its output when it exits or does not come up in time (it is killed then).
 */
export async function startGatehouseDev(
  options: { nodeFlags?: string[]; startTimeoutMs?: number } = {},
): Promise<DevProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), "gatehouse-loadtest-"));
  const base = await freePortBase();
  const sandbox = hasRunsc() ? "gvisor" : "none";
  const env: NodeJS.ProcessEnv = { ...process.env, GATEHOUSE_DATA_DIR: dataDir, LOG_LEVEL: "warn" };
  delete env.TEMPORAL_ADDRESS;
  const child = spawn(
    process.execPath,
    [
      "--no-node-snapshot",
      ...(options.nodeFlags ?? []),
      "--import",
      "tsx",
      MAIN,
      "dev",
      "--port-base",
      String(base),
      "--web-port",
      String(base + 6),
      "--sandbox",
      sandbox,
    ],
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  const collect = (d: Buffer) => {
    out = (out + d.toString()).slice(-200_000);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGINT");
      const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitUntil(
      "gatehouse dev to print its sign-in links",
      () => out.includes("approver web app:") || child.exitCode !== null,
      {
        timeoutMs: options.startTimeoutMs ?? 300_000,
        intervalMs: 200,
      },
    );
    if (child.exitCode !== null) throw new Error(`gatehouse dev exited with ${child.exitCode}:\n${out}`);
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${out.slice(-5000)}`);
  }
  const file = parse(readFileSync(join(dataDir, "dev-tokens.yaml"), "utf8")) as {
    tokens: { subject: string; token: string }[];
  };
  return {
    child,
    url: `http://127.0.0.1:${base + 6}`,
    dataDir,
    tokens: Object.fromEntries(file.tokens.map((t) => [t.subject, t.token])),
    sandbox,
    output: () => out,
    stop,
  };
}
