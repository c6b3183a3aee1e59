/**
 * The Kubernetes backend's pure pieces: the sandbox pod spec, the leftover rules, the starting-pod
 * verdicts and the SANDBOX_K8S_* configuration. The backend against a real cluster is tested in
 * deploy/test/sandbox-pods.test.ts.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { V1Pod } from "@kubernetes/client-node";
import { loadConfig } from "../src/config.ts";
import { judgeStartingPod, PodStartError } from "../src/kubernetes/pod-start.ts";
import { leftoverReason } from "../src/kubernetes/reconcile.ts";
import { DEFAULT_COMMAND, LABELS, sandboxPod, workspaceLabel } from "../src/kubernetes/template.ts";

const TEMPLATE = {
  namespace: "sandboxes",
  image: "gatehouse/sandbox:1",
  imagePullPolicy: "IfNotPresent" as const,
  imagePullSecrets: ["pull"],
  runtimeClassName: "gvisor",
  runnerName: "runner-0",
  cpuRequest: "100m",
  cpuLimit: "1",
  memoryRequestMb: 256,
  memoryLimitMb: 2560,
  ephemeralMb: 256,
  command: DEFAULT_COMMAND,
  inputSilenceMs: 30_000,
};

test("the sandbox pod: gVisor, no token, no links, non-root, read-only, limits, stdinOnce, labels", () => {
  const pod = sandboxPod(TEMPLATE, "gh-sb-runner-0-ab", "i1");
  const spec = pod.spec!;
  const c = spec.containers[0]!;
  assert.equal(spec.runtimeClassName, "gvisor");
  assert.equal(spec.automountServiceAccountToken, false);
  assert.equal(spec.enableServiceLinks, false);
  assert.equal(spec.restartPolicy, "Never");
  assert.equal(spec.securityContext?.runAsNonRoot, true);
  assert.equal(c.securityContext?.readOnlyRootFilesystem, true);
  assert.equal(c.securityContext?.allowPrivilegeEscalation, false);
  assert.deepEqual(c.securityContext?.capabilities?.drop, ["ALL"]);
  assert.equal(c.stdin, true);
  assert.equal(c.stdinOnce, true);
  assert.deepEqual(
    c.env?.map((e) => e.name),
    ["GATEHOUSE_SCRATCH", "GATEHOUSE_INPUT_SILENCE_MS"],
  );
  assert.deepEqual(c.resources?.limits, { cpu: "1", memory: "2560Mi", "ephemeral-storage": "256Mi" });
  assert.deepEqual(spec.imagePullSecrets, [{ name: "pull" }]);
  assert.equal(pod.metadata?.labels?.[LABELS.sandbox], "true");
  assert.equal(pod.metadata?.labels?.[LABELS.runner], "runner-0");
  assert.equal(pod.metadata?.labels?.[LABELS.state], "warm");
  assert.deepEqual(
    c.volumeMounts?.map((m) => [m.mountPath, m.readOnly ?? false]),
    [
      ["/tmp", false],
      ["/dev/shm", true],
    ],
  );
});

test("the workspace label is a hash: 32 hex digits, never the id", () => {
  const label = workspaceLabel("Acme Corp / payments");
  assert.match(label, /^[0-9a-f]{32}$/);
  assert.notEqual(workspaceLabel("a"), workspaceLabel("b"));
});

const pod = (phase: string, labels: Record<string, string>, ageMs = 0): V1Pod => ({
  metadata: {
    name: "p",
    labels: { [LABELS.sandbox]: "true", ...labels },
    creationTimestamp: new Date(Date.now() - ageMs),
  },
  status: { phase },
});
const scope = {
  namespace: "n",
  runnerName: "r1",
  runnerInstance: "mine",
  stalePendingMs: 120_000,
  startedAt: Date.now() - 60_000,
};

test("leftovers: ended pods, this runner's earlier process, long-Pending pods; never others' running pods", () => {
  assert.match(String(leftoverReason(pod("Succeeded", { [LABELS.runner]: "r2" }), scope)), /ended/);
  assert.match(
    String(
      leftoverReason(
        pod("Running", { [LABELS.runner]: "r1", [LABELS.runnerInstance]: "old" }, 120_000),
        scope,
      ),
    ),
    /earlier process/,
  );
  // Same name, made after this process started: another live process (reported, not deleted).
  assert.equal(
    leftoverReason(pod("Running", { [LABELS.runner]: "r1", [LABELS.runnerInstance]: "twin" }, 1_000), scope),
    null,
  );
  // The sweep at start (before this process made a pod): a same-name pod made a moment ago is the
  // earlier process's, however close its timestamp is to now.
  assert.match(
    String(
      leftoverReason(pod("Running", { [LABELS.runner]: "r1", [LABELS.runnerInstance]: "old" }, 0), {
        ...scope,
        startedAt: Number.POSITIVE_INFINITY,
      }),
    ),
    /earlier process/,
  );
  assert.match(
    String(
      leftoverReason(
        pod("Pending", { [LABELS.runner]: "r1", [LABELS.runnerInstance]: "mine" }, 600_000),
        scope,
      ),
    ),
    /Pending for 600 s/,
  );
  assert.equal(
    leftoverReason(pod("Running", { [LABELS.runner]: "r1", [LABELS.runnerInstance]: "mine" }), scope),
    null,
  );
  assert.equal(
    leftoverReason(pod("Running", { [LABELS.runner]: "r2", [LABELS.runnerInstance]: "x" }), scope),
    null,
  );
  assert.equal(leftoverReason(pod("Pending", { [LABELS.runner]: "r2" }, 1_000), scope), null);
  assert.match(
    String(leftoverReason(pod("Pending", { [LABELS.runner]: "r2" }, 600_000), scope)),
    /Pending for 600 s/,
  );
});

test("a starting pod: running, still starting, or a PodStartError with Kubernetes' reason", () => {
  const running: V1Pod = {
    metadata: { name: "p" },
    status: { phase: "Running", containerStatuses: [{ name: "sandbox", state: { running: {} } } as never] },
  };
  assert.equal(judgeStartingPod(running).verdict, "running");
  const pulling: V1Pod = {
    metadata: { name: "p" },
    status: {
      phase: "Pending",
      containerStatuses: [
        {
          name: "sandbox",
          state: { waiting: { reason: "ErrImageNeverPull", message: "image not present" } },
        } as never,
      ],
    },
  };
  const verdict = judgeStartingPod(pulling).verdict;
  assert.ok(verdict instanceof PodStartError);
  assert.equal(verdict.reason, "ErrImageNeverPull");
  assert.match(verdict.message, /sandbox pod p cannot start: ErrImageNeverPull: image not present/);
  const unscheduled: V1Pod = {
    metadata: { name: "p" },
    status: {
      phase: "Pending",
      conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message: "0/1 nodes" }],
    },
  };
  const judged = judgeStartingPod(unscheduled);
  assert.equal(judged.verdict, null);
  assert.equal(judged.hint, "Unschedulable: 0/1 nodes");
});

test("SANDBOX_MODE=kubernetes needs SANDBOX_K8S_NAMESPACE and SANDBOX_K8S_IMAGE, and checks the names", () => {
  assert.throws(
    () => loadConfig({ SANDBOX_MODE: "kubernetes", SANDBOX_K8S_IMAGE: "i" }),
    /SANDBOX_K8S_NAMESPACE is required with SANDBOX_MODE=kubernetes/,
  );
  assert.throws(
    () => loadConfig({ SANDBOX_MODE: "kubernetes", SANDBOX_K8S_NAMESPACE: "n" }),
    /SANDBOX_K8S_IMAGE is required/,
  );
  assert.throws(
    () => loadConfig({ SANDBOX_MODE: "kubernetes", SANDBOX_K8S_NAMESPACE: "Bad_NS", SANDBOX_K8S_IMAGE: "i" }),
    /SANDBOX_K8S_NAMESPACE is invalid/,
  );
  assert.throws(
    () =>
      loadConfig({
        SANDBOX_MODE: "kubernetes",
        SANDBOX_K8S_NAMESPACE: "n",
        SANDBOX_K8S_IMAGE: "i",
        SANDBOX_K8S_CPU_LIMIT: "lots",
      }),
    /SANDBOX_K8S_CPU_LIMIT is invalid: a cpu quantity/,
  );
  const c = loadConfig({
    SANDBOX_MODE: "kubernetes",
    SANDBOX_K8S_NAMESPACE: "sandboxes",
    SANDBOX_K8S_IMAGE: "gatehouse/sandbox:1",
    SANDBOX_K8S_RUNNER_NAME: "runner-0",
    SANDBOX_K8S_IMAGE_PULL_SECRETS: "a, b",
  });
  assert.equal(c.kubernetes?.runtimeClassName, "gvisor");
  assert.deepEqual(c.kubernetes?.imagePullSecrets, ["a", "b"]);
  assert.equal(c.kubernetes?.memoryLimitMb, 2560);
  assert.equal(loadConfig({}).kubernetes, null);
});

test("no cluster to use (no service account, no kubeconfig) is refused at start, saying what to set", async () => {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const { createKubernetesBackend } = await import("../src/kubernetes/backend.ts");
  const pino = (await import("pino")).default;
  await assert.rejects(
    createKubernetesBackend({
      template: TEMPLATE,
      kubeConfig: new KubeConfig(),
      logger: pino({ level: "silent" }),
    }),
    /found no cluster to use: not in a pod \(KUBERNETES_SERVICE_HOST is unset\) and no kubeconfig.*set KUBECONFIG/,
  );
});
