/**
 * Test helpers for the real local cluster (scripts/cluster): reuse a running cluster or start one with
 * `npm run cluster -- up` (and stop only what was started), kubectl against its admin kubeconfig,
 * fresh namespaces, and waiting on conditions. Used by netpol.test.ts.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { CHART, type CommandResult, clusterCache, command } from "./helm.ts";

/** scripts/cluster, absolute. */
export const CLUSTER_SCRIPTS = join(CHART, "..", "..", "..", "scripts", "cluster");
/** The admin kubeconfig `npm run cluster -- up` writes. */
export const KUBECONFIG = join(clusterCache(), "run", "kubeconfig");

/** `kubectl --kubeconfig <cluster's> <args>` (never throws on a non-zero exit: ok=false). */
export function kubectl(args: string[], opts: Parameters<typeof command>[2] = {}): Promise<CommandResult> {
  return command("kubectl", [`--kubeconfig=${KUBECONFIG}`, ...args], opts);
}

/** `kubectl <args>` that must succeed; throws with kubectl's stderr otherwise. Returns stdout. */
export async function kubectlOk(args: string[], opts: Parameters<typeof command>[2] = {}): Promise<string> {
  const r = await kubectl(args, opts);
  if (!r.ok) throw new Error(`kubectl ${args.join(" ")} failed: ${r.stderr}`);
  return r.stdout;
}

/** True when the cluster's apiserver answers /readyz with the admin kubeconfig. */
export async function clusterReady(): Promise<boolean> {
  if (!existsSync(KUBECONFIG)) return false;
  return (await kubectl(["get", "--raw", "/readyz"], { timeoutMs: 15_000 })).ok;
}

/** What {@link ensureCluster} and {@link ensureNetpol} started (and so must stop). */
export interface Started {
  cluster: boolean;
  netpol: boolean;
}

/**
 * Reuses a running cluster, else runs `scripts/cluster/cluster.sh up` (up to 40 min: a cold build).
 * @returns whether this call started it (then the caller runs `cluster.sh down` when done).
 * @throws Error with up's output when it fails.
 */
export async function ensureCluster(): Promise<boolean> {
  if (await clusterReady()) return false;
  const r = await command("bash", [join(CLUSTER_SCRIPTS, "cluster.sh"), "up"], { timeoutMs: 40 * 60_000 });
  if (!r.ok) throw new Error(`npm run cluster -- up failed:\n${r.stdout}\n${r.stderr}`);
  return true;
}

/**
 * Reuses a running kube-network-policies agent (netpol.sh status), else starts it (netpol.sh start).
 * @returns whether this call started it (then the caller runs `netpol.sh stop` when done).
 */
export async function ensureNetpol(): Promise<boolean> {
  const netpol = join(CLUSTER_SCRIPTS, "netpol.sh");
  const status = await command("bash", [netpol, "status"]);
  if (status.ok && status.stdout.includes(": up")) return false;
  const r = await command("bash", [netpol, "start"], { timeoutMs: 10 * 60_000 });
  if (!r.ok) throw new Error(`netpol.sh start failed:\n${r.stdout}\n${r.stderr}`);
  return true;
}

/** Stops what {@link ensureCluster}/{@link ensureNetpol} started, newest first. */
export async function stopStarted(started: Started): Promise<void> {
  if (started.netpol)
    await command("bash", [join(CLUSTER_SCRIPTS, "netpol.sh"), "stop"], { timeoutMs: 120_000 });
  if (started.cluster)
    await command("bash", [join(CLUSTER_SCRIPTS, "cluster.sh"), "down"], { timeoutMs: 600_000 });
}

/**
 * Polls `check` every 500 ms until it returns a value other than undefined.
 * @param what names the condition in the timeout error.
 * @param timeoutMs the deadline (generous: CI is 2 busy cores).
 * @throws Error naming `what` and the last value `describe` gave when the deadline passes.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs: number,
  describe: () => string = () => "",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} ${describe()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
