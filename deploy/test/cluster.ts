/**
 * Test helpers for the local cluster (`npm run cluster -- up|down`, deploy/cluster/): bring it up or
 * reuse a running one (and its NetworkPolicy agent), run kubectl against it, wait on conditions,
 * port-forward to a Service. Each `ensure…` stops only what it started.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { waitUntil } from "@gatehouse/service-kit";
import { type CommandResult, clusterCache, command } from "./helm.ts";

/** The repository root. */
export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The kubeconfig `npm run cluster -- up` writes. */
export const KUBECONFIG = join(clusterCache(), "run", "kubeconfig");

/** Environment for helm and kubectl: the cluster's kubeconfig, its binaries first on PATH. */
export function clusterEnv(): NodeJS.ProcessEnv {
  return { KUBECONFIG, PATH: `${join(clusterCache(), "bin")}:${process.env.PATH ?? ""}` };
}

/** `kubectl <args>` against the local cluster. */
export function kubectl(
  args: string[],
  opts: { input?: string; timeoutMs?: number } = {},
): Promise<CommandResult> {
  return command("kubectl", args, { ...opts, env: clusterEnv() });
}

/** `kubectl <args>` that must succeed; returns stdout. @throws Error with kubectl's stderr. */
export async function kubectlOk(
  args: string[],
  opts: { input?: string; timeoutMs?: number } = {},
): Promise<string> {
  const r = await kubectl(args, opts);
  if (!r.ok) throw new Error(`kubectl ${args.join(" ")} failed: ${r.stderr}`);
  return r.stdout;
}

/** True when the API server answers /readyz with the cluster's kubeconfig. */
async function apiReady(): Promise<boolean> {
  if (!existsSync(KUBECONFIG)) return false;
  const r = await kubectl(["get", "--raw", "/readyz"], { timeoutMs: 15_000 });
  return r.ok && r.stdout.trim() === "ok";
}

/** A cluster the tests use: `stop()` takes it down only when this process brought it up. */
export interface TestCluster {
  startedHere: boolean;
  stop(): Promise<void>;
}

/**
 * Reuses a running local cluster or starts one with `npm run cluster -- up` (which builds what is
 * missing: ~20 min the first time on 2 cores).
 * @throws Error with up's output when it fails.
 */
export async function ensureCluster(): Promise<TestCluster> {
  const running = await apiReady();
  if (!running) {
    const up = await command("npm", ["run", "--silent", "cluster", "--", "up"], {
      cwd: REPO,
      timeoutMs: 60 * 60_000,
    });
    if (!up.ok) throw new Error(`npm run cluster -- up failed:\n${up.stdout}\n${up.stderr}`);
    if (!(await apiReady()))
      throw new Error(`the cluster is up but /readyz does not answer ok:\n${up.stdout}`);
  }
  return {
    startedHere: !running,
    async stop() {
      if (running) return;
      const down = await command("npm", ["run", "--silent", "cluster", "--", "down"], {
        cwd: REPO,
        timeoutMs: 5 * 60_000,
      });
      if (!down.ok) throw new Error(`npm run cluster -- down failed:\n${down.stdout}\n${down.stderr}`);
    },
  };
}

/**
 * Polls `check` every second (service-kit's waitUntil) until it returns a value other than undefined.
 * @param last what to add to the error: the state seen last (e.g. the outcomes of the last try).
 * @throws Error "timed out after N ms waiting for <what>" followed by `last()`, or check's own error.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  last: () => string | Promise<string> = () => "",
): Promise<T> {
  try {
    const found = await waitUntil(
      what,
      async () => {
        const v = await check();
        return v === undefined ? undefined : { v };
      },
      { timeoutMs, intervalMs: 1000 },
    );
    return found.v;
  } catch (e) {
    const seen = await last();
    throw seen ? new Error(`${(e as Error).message}\n${seen}`) : e;
  }
}

/** The kube-network-policies agent the tests use: `stop()` stops it only when this process started it. */
export interface TestAgent {
  startedHere: boolean;
  stop(): Promise<void>;
}

/**
 * Reuses the running kube-network-policies agent (`netpol.sh status`; `npm run cluster -- up` starts
 * it), else starts it (`netpol.sh start`).
 * @throws Error with netpol.sh's output when the start fails.
 */
export async function ensureNetpol(): Promise<TestAgent> {
  const netpol = join(REPO, "deploy", "cluster", "netpol.sh");
  const status = await command("bash", [netpol, "status"]);
  const running = status.ok && status.stdout.includes(": up");
  if (!running) {
    const r = await command("bash", [netpol, "start"], { timeoutMs: 10 * 60_000 });
    if (!r.ok) throw new Error(`netpol.sh start failed:\n${r.stdout}\n${r.stderr}`);
  }
  return {
    startedHere: !running,
    async stop() {
      if (running) return;
      const r = await command("bash", [netpol, "stop"], { timeoutMs: 120_000 });
      if (!r.ok) throw new Error(`netpol.sh stop failed:\n${r.stdout}\n${r.stderr}`);
    },
  };
}

/** A running `kubectl port-forward` to a Service: `local` is "127.0.0.1:<port>". */
export interface PortForward {
  local: string;
  close(): Promise<void>;
}

/**
 * `kubectl port-forward svc/<service> :<port>` in `namespace`; resolves once it prints the local port.
 * @throws Error with its output when it exits first or does not forward within 60 s.
 */
export function portForward(namespace: string, service: string, port: number): Promise<PortForward> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(
      "kubectl",
      ["-n", namespace, "port-forward", "--address", "127.0.0.1", `svc/${service}`, `:${port}`],
      { env: { ...process.env, ...clusterEnv() }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    const timer = setTimeout(() => {
      child.kill("SIGTERM");
      reject(new Error(`port-forward to ${service}:${port} did not start in 60 s: ${output}`));
    }, 60_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`port-forward to ${service}:${port} exited (${code}): ${output}`));
    });
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve({
          local: `127.0.0.1:${m[1]}`,
          close: () =>
            new Promise<void>((done) => {
              if (child.exitCode !== null || child.signalCode !== null) return done();
              child.once("exit", () => done());
              child.kill("SIGTERM");
            }),
        });
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
  });
}
