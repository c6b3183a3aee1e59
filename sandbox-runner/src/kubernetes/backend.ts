import { randomBytes } from "node:crypto";
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import type { Logger } from "pino";
import type { Counter } from "prom-client";
import { ConfigError } from "../errors.ts";
import type { SandboxBackend, SandboxInstance } from "../pool/backend.ts";
import { apiErrorCode, apiErrorMessage } from "./api-error.ts";
import { attachInstance } from "./attach-instance.ts";
import { PodStartError, waitForRunning } from "./pod-start.ts";
import { sweepLeftovers } from "./reconcile.ts";
import { LABELS, type SandboxPodTemplate, sandboxPod, workspaceLabel } from "./template.ts";

/** Options of the Kubernetes backend. */
export interface KubernetesBackendOptions {
  template: SandboxPodTemplate;
  /** A pod not running within this long is deleted and its start fails, ms (default 60000). */
  startTimeoutMs?: number;
  /** How often leftover pods are swept, ms (default 30000). */
  sweepIntervalMs?: number;
  /** Cluster access; default KubeConfig.loadFromDefault() (in-cluster service account, or KUBECONFIG). */
  kubeConfig?: KubeConfig;
  /** Counts start failures by reason (the runner's gatehouse_sandbox_start_failures_total). */
  startFailures?: Counter<"reason">;
  logger: Logger;
}

/** Reason label of a pod creation the API server refused. */
function refusalReason(error: unknown): string {
  const message = apiErrorMessage(error);
  if (/exceeded quota/i.test(message)) return "ExceededQuota";
  if (/RuntimeClass/i.test(message) && /not found/i.test(message)) return "RuntimeClassNotFound";
  const code = apiErrorCode(error);
  if (code === 403) return "Forbidden";
  if (code === 404 && /namespaces? .*not found/i.test(message)) return "NamespaceNotFound";
  if (code === 422) return "Invalid";
  if (code === null) return "Unreachable";
  return `HTTP${code}`;
}

/** What to do about a refused template, appended to the start-up error. */
function refusalHint(reason: string, template: SandboxPodTemplate): string {
  switch (reason) {
    case "RuntimeClassNotFound":
      return `create RuntimeClass ${template.runtimeClassName} (the chart's runtimeClass.create) or set SANDBOX_K8S_RUNTIME_CLASS to an existing one (kubectl get runtimeclass)`;
    case "Forbidden":
      return `the runner's service account needs a Role allowing create, get, list, watch, patch and delete on pods and create, get on pods/attach in namespace ${template.namespace} (the chart's sandbox.backend=kubernetes creates it)`;
    case "NamespaceNotFound":
      return `create namespace ${template.namespace} (the chart's sandbox.kubernetes.createNamespace) or set SANDBOX_K8S_NAMESPACE to an existing one`;
    case "Unreachable":
      return "the API server cannot be reached: in a pod, check the runner's NetworkPolicy allows egress to it (networkPolicy.apiServer); outside, check KUBECONFIG";
    default:
      return "fix the SANDBOX_K8S_* settings named in the message";
  }
}

/** A DNS-1123 prefix for this runner's pod names. */
function podPrefix(runnerName: string): string {
  const clean = runnerName
    .toLowerCase()
    .replace(/[^a-z0-9-]/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40);
  return `gh-sb-${clean || "runner"}`;
}

/**
 * Sandboxes as pods: each `start` creates one pod of the template (../kubernetes/template.ts) in the
 * sandbox namespace, waits until its container runs (a watch on the pod), and attaches to its stdio
 * through the API server; the pool's warm set is this runner's started, attached pods. A claim labels
 * the pod with the workspace (a JSON Patch whose `test` operations make it fail if the pod is no longer
 * this runner's warm pod: the API's optimistic concurrency, not a local lock). `destroy` deletes the
 * pod; a pod killed from outside ends its attach stream, which ends the sandbox.
 *
 * At creation: checks the template with a server-side dry run (so a missing RuntimeClass, a refused
 * security context or missing RBAC stop the runner at start, naming the cause), then deletes leftover
 * pods (./reconcile.ts), and sweeps again every `sweepIntervalMs`.
 * @throws ConfigError when the dry run or the first sweep is refused, with the API server's message.
 */
export async function createKubernetesBackend(options: KubernetesBackendOptions): Promise<SandboxBackend> {
  const { template, logger } = options;
  const kubeConfig = options.kubeConfig ?? loadKubeConfig();
  const server = kubeConfig.getCurrentCluster()?.server;
  if (!server || server === "http://localhost:8080") {
    // What the client falls back to when it finds nothing.
    throw new ConfigError(
      "SANDBOX_MODE=kubernetes found no cluster to use: not in a pod (KUBERNETES_SERVICE_HOST is unset) and no kubeconfig (KUBECONFIG unset, ~/.kube/config missing); run the runner in the cluster with its service account, or set KUBECONFIG",
    );
  }
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const runnerInstance = randomBytes(4).toString("hex");
  const prefix = podPrefix(template.runnerName);
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const where = `namespace ${template.namespace} on ${server}`;

  try {
    await core.createNamespacedPod({
      namespace: template.namespace,
      body: sandboxPod(template, `${prefix}-dry-run`, runnerInstance),
      dryRun: "All",
    });
  } catch (error) {
    const reason = refusalReason(error);
    // A quota that is full right now (a previous runner's pods still ending) is not a wrong template.
    if (reason !== "ExceededQuota")
      throw new ConfigError(
        `the sandbox pod template is refused (${where}): ${apiErrorMessage(error)}; ${refusalHint(reason, template)}`,
      );
    logger.warn(
      { event: "sandbox_quota_full", error: apiErrorMessage(error) },
      "the sandbox namespace's quota is full right now; sandboxes start once it has room",
    );
  }
  const scope = {
    namespace: template.namespace,
    runnerName: template.runnerName,
    runnerInstance,
    stalePendingMs: 2 * startTimeoutMs,
    startedAt: Date.now() - 2_000,
  };
  try {
    // At start every same-name pod of another instance predates this process (it has made none yet),
    // whatever its creation timestamp says: a restart right after the old process made a pod (the
    // timestamp's 1 s resolution, a skewed node clock) still finds that pod a leftover.
    await sweepLeftovers(core, { ...scope, startedAt: Number.POSITIVE_INFINITY }, logger);
  } catch (error) {
    throw new ConfigError(`${(error as Error).message}; ${refusalHint("Forbidden", template)}`);
  }
  const sweeper = setInterval(() => {
    sweepLeftovers(core, scope, logger).catch((error: Error) =>
      logger.warn({ event: "sandbox_pod_sweep_failed", error: error.message }, "the leftover sweep failed"),
    );
  }, options.sweepIntervalMs ?? 30_000);
  sweeper.unref();
  logger.info(
    {
      event: "kubernetes_backend",
      namespace: template.namespace,
      runtimeClass: template.runtimeClassName,
      image: template.image,
      runner: template.runnerName,
      runnerInstance,
    },
    `sandboxes are pods of RuntimeClass ${template.runtimeClassName} in ${where}`,
  );

  const remove = async (name: string) => {
    try {
      await core.deleteNamespacedPod({ namespace: template.namespace, name, gracePeriodSeconds: 0 });
    } catch (error) {
      if (apiErrorCode(error) !== 404)
        logger.warn(
          { event: "sandbox_pod_delete_failed", pod: name, error: apiErrorMessage(error) },
          "could not delete a sandbox pod; the leftover sweep retries once it has ended",
        );
    }
  };
  const claim = async (name: string, workspaceId: string) => {
    const label = (key: string) => `/metadata/labels/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;
    try {
      await core.patchNamespacedPod(
        {
          namespace: template.namespace,
          name,
          body: [
            { op: "test", path: label(LABELS.state), value: "warm" },
            { op: "test", path: label(LABELS.runnerInstance), value: runnerInstance },
            { op: "replace", path: label(LABELS.state), value: "leased" },
            { op: "add", path: label(LABELS.workspace), value: workspaceLabel(workspaceId) },
          ],
        },
        setHeaderOptions("Content-Type", PatchStrategy.JsonPatch),
      );
    } catch (error) {
      const code = apiErrorCode(error);
      // 404 gone, 409 changed, 422 a test operation failed: the pod is not this runner's warm pod.
      if (code === 404 || code === 409 || code === 422)
        throw new Error(`cannot claim sandbox pod ${name}: ${apiErrorMessage(error)}`);
      logger.warn(
        { event: "sandbox_claim_label_failed", pod: name, error: apiErrorMessage(error) },
        "could not label a claimed sandbox pod; it is used anyway (only this runner holds its stream)",
      );
    }
  };

  return {
    kind: "kubernetes",
    isolation: "gvisor",
    warnings: [],
    resourceLimits: null,
    async start(): Promise<SandboxInstance> {
      const name = `${prefix}-${randomBytes(4).toString("hex")}`;
      const fail = (reason: string, error: Error): never => {
        options.startFailures?.inc({ reason });
        logger.warn({ event: "sandbox_pod_start_failed", pod: name, reason }, error.message);
        throw error;
      };
      try {
        await core.createNamespacedPod({
          namespace: template.namespace,
          body: sandboxPod(template, name, runnerInstance),
        });
      } catch (error) {
        const reason = refusalReason(error);
        const code = apiErrorCode(error);
        // The server may have stored the pod before the reply was lost.
        if (code === null || code >= 500) await remove(name);
        return fail(
          reason,
          new Error(
            `the API server refused to create sandbox pod ${name} (${where}): ${apiErrorMessage(error)}`,
          ),
        );
      }
      try {
        await waitForRunning(kubeConfig, template.namespace, name, startTimeoutMs);
        return await attachInstance({
          kubeConfig,
          core,
          namespace: template.namespace,
          name,
          claim: (workspaceId) => claim(name, workspaceId),
          remove: () => remove(name),
          pingMs: Math.max(1_000, Math.floor(template.inputSilenceMs / 6)),
        });
      } catch (error) {
        await remove(name);
        return fail(error instanceof PodStartError ? error.reason : "AttachFailed", error as Error);
      }
    },
    async close() {
      clearInterval(sweeper);
    },
  };
}

/** The default cluster access: in-cluster when run in a pod, else KUBECONFIG / ~/.kube/config. */
function loadKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromDefault();
  return kubeConfig;
}
