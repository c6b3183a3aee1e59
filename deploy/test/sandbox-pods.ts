/**
 * Shared pieces of the Kubernetes sandbox backend's tests: a restricted namespace with the chart's
 * deny-all policy for sandbox pods, the pod template the tests use, a runner on this host driving the
 * local cluster, and probe pods started through the backend.
 */
import assert from "node:assert/strict";
import {
  type KubernetesBackendOptions,
  SANDBOX_POD_COMMAND,
  type SandboxPodTemplate,
} from "@gatehouse/sandbox-runner";
import { KubeConfig } from "@kubernetes/client-node";
import { KUBECONFIG, kubectl, kubectlOk } from "./cluster.ts";
import { TAG } from "./install.ts";

/** The local cluster's access, for the backend. */
export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(KUBECONFIG);
  return kc;
}

/** A deny-all NetworkPolicy for every pod of a namespace (what the chart puts in the sandbox namespace). */
export const DENY_ALL = (namespace: string) => `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: { name: deny-all, namespace: ${namespace} }
spec:
  podSelector: {}
  policyTypes: [Ingress, Egress]
`;

/** A fresh namespace enforcing PodSecurity restricted; with `denyAll`, the deny-all policy in it. */
export async function sandboxNamespace(namespace: string, denyAll = true): Promise<void> {
  await kubectl(["delete", "namespace", namespace, "--wait=true", "--ignore-not-found"], {
    timeoutMs: 300_000,
  });
  await kubectlOk(["create", "namespace", namespace]);
  await kubectlOk(["label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted"]);
  if (denyAll) await kubectlOk(["apply", "-f", "-"], { input: DENY_ALL(namespace) });
}

/** The template of the tests' sandbox pods (the chart's sandbox image on the node, RuntimeClass gvisor). */
export function template(
  namespace: string,
  runnerName: string,
  registry: string,
  overrides: Partial<SandboxPodTemplate> = {},
): SandboxPodTemplate {
  return {
    namespace,
    image: `${registry ? `${registry}/` : ""}gatehouse/sandbox:${TAG}`,
    imagePullPolicy: "Never",
    imagePullSecrets: [],
    runtimeClassName: "gvisor",
    runnerName,
    cpuRequest: "50m",
    cpuLimit: "1",
    memoryRequestMb: 128,
    memoryLimitMb: 1024,
    ephemeralMb: 64,
    command: SANDBOX_POD_COMMAND,
    inputSilenceMs: 30_000,
    ...overrides,
  };
}

/** Backend options for a runner on this host against the local cluster. */
export function backendOptions(
  t: SandboxPodTemplate,
): Omit<KubernetesBackendOptions, "logger" | "startFailures"> {
  return { template: t, kubeConfig: kubeConfig(), startTimeoutMs: 120_000, sweepIntervalMs: 5_000 };
}

/** Sandbox pods in a namespace: name → {phase, labels}. */
export async function sandboxPods(
  namespace: string,
  selector = "gatehouse.dev/sandbox=true",
): Promise<Map<string, { phase: string; labels: Record<string, string>; deleting: boolean }>> {
  const out = await kubectlOk(["get", "pods", "-n", namespace, "-l", selector, "-o", "json"]);
  const items = (
    JSON.parse(out) as {
      items: Array<{
        metadata: { name: string; labels: Record<string, string>; deletionTimestamp?: string };
        status: { phase: string };
      }>;
    }
  ).items;
  return new Map(
    items.map((p) => [
      p.metadata.name,
      { phase: p.status.phase, labels: p.metadata.labels, deleting: !!p.metadata.deletionTimestamp },
    ]),
  );
}

/** Asserts a probe attempt failed (refused, unreachable, timed out). */
export function assertDenied(
  attempt: { ok: boolean; code?: string; value?: unknown } | undefined,
  what: string,
): void {
  assert.ok(attempt, `${what}: the attempt did not run`);
  assert.equal(
    attempt.ok,
    false,
    `${what} SUCCEEDED from inside a sandbox pod: ${JSON.stringify(attempt.value)}`,
  );
}

/**
 * Node script for a probe pod: waits for the runner's hello on stdin (so its output is not written
 * before the attach), runs `body` (may `await`, uses `attempt(name, fn)`), prints one
 * `PROBE-RESULT {…}` line, then waits to be deleted. `tcp(host, port)` connects with a 3 s timeout.
 */
export function probeScript(body: string): string {
  return `"use strict";
const results = {};
async function attempt(name, fn) {
  try { const value = await fn(); results[name] = { ok: true, value: value === undefined ? null : value }; }
  catch (e) { results[name] = { ok: false, code: e && e.code, message: String(e && e.message) }; }
}
function tcp(host, port) {
  return new Promise((resolve, reject) => {
    const s = require("net").connect({ host, port, timeout: 3000 });
    s.on("connect", () => { s.destroy(); resolve("connected"); });
    s.on("timeout", () => { s.destroy(); const e = new Error("timed out"); e.code = "TIMEOUT"; reject(e); });
    s.on("error", reject);
  });
}
process.stdin.once("data", async () => {
  ${body}
  process.stdout.write("PROBE-RESULT " + JSON.stringify(results) + "\\n");
});
`;
}
