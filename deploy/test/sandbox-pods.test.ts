/**
 * The sandbox runner's Kubernetes backend on the real local cluster (`npm run cluster`): a runner on this
 * host creates gVisor sandbox pods through the API server and talks to them over their attach streams.
 * Proves: snippets run in pods (pod name in describe(), labels, gVisor's kernel inside), one pod per
 * workspace, eviction at the cap, a pod deleted mid-execution fails only that execution, leftovers of a
 * killed runner are deleted, a missing RuntimeClass and a quota refusal are named; and, from inside a
 * sandbox pod, no DNS, no TCP anywhere, no token, nothing writable but the scratch dir.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  executeSnippet,
  SANDBOX_POD_COMMAND,
  type SandboxRunnerHandle,
  startSandboxRunner,
  workspaceLabel,
} from "@gatehouse/sandbox-runner";
import { createKubernetesBackend } from "@gatehouse/sandbox-runner/kubernetes";
import pino from "pino";
import {
  ensureCluster,
  ensureNetpol,
  KUBECONFIG,
  kubectlOk,
  REPO,
  type TestAgent,
  type TestCluster,
  waitFor,
} from "./cluster.ts";
import { ensureImages } from "./install.ts";
import {
  assertDenied,
  backendOptions,
  probeScript,
  sandboxNamespace,
  sandboxPods,
  template,
} from "./sandbox-pods.ts";

const NS = "gh-sbpods";
const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
let cluster: TestCluster;
let agent: TestAgent;
let registry = "";
let runner: SandboxRunnerHandle;

const run = (code: string, workspaceId: string, wallTimeMs = 30_000) =>
  executeSnippet(`127.0.0.1:${runner.port}`, {
    executionId: `sbpods-${workspaceId}-${Date.now()}-${Math.random()}`,
    workspaceId,
    code,
    bindings: {},
    limits: { wallTimeMs },
  });

/** The pod serving a workspace, from the pool's description. */
const podOf = (workspaceId: string) =>
  runner.pool.describe().find((s) => s.workspaceId === workspaceId)?.instanceId ?? null;

before(async () => {
  cluster = await ensureCluster();
  agent = await ensureNetpol();
  ({ registry } = await ensureImages());
  await sandboxNamespace(NS);
  runner = await startSandboxRunner({
    mode: "kubernetes",
    host: "127.0.0.1",
    port: 0,
    logger,
    pool: { warm: 1, maxSandboxes: 2, idleMs: 600_000, readyTimeoutMs: 180_000 },
    kubernetes: backendOptions(template(NS, "gh-sbpods-runner", registry)),
  });
});

after(async () => {
  await runner?.close();
  await kubectlOk(["delete", "namespace", NS, "--wait=false", "--ignore-not-found"]).catch(() => undefined);
  await agent?.stop();
  await cluster?.stop();
});

describe("the kubernetes sandbox backend", { timeout: 30 * 60_000 }, () => {
  test("a snippet runs in a sandbox pod of its own, labelled with the workspace's hash, under gVisor", async () => {
    await runner.pool.whenWarm(180_000);
    const r = await run("export default () => 6 * 7", "ws-a");
    assert.equal(r.ok, true, r.error?.message);
    assert.equal(r.returnJson, "42");
    const pod = podOf("ws-a");
    assert.ok(pod?.startsWith("gh-sb-gh-sbpods-runner-"), `pod name in describe(): ${pod}`);
    if (!pod) return;
    // The claim (a label patch) is confirmed concurrently with the first execution.
    const spec = await waitFor(
      "the pod to be labelled leased",
      async () => {
        const p = JSON.parse(await kubectlOk(["get", "pod", "-n", NS, pod, "-o", "json"]));
        return p.metadata.labels["gatehouse.dev/state"] === "leased" ? p : undefined;
      },
      60_000,
    );
    assert.equal(spec.metadata.labels["gatehouse.dev/workspace"], workspaceLabel("ws-a"));
    assert.ok(!JSON.stringify(spec.metadata.labels).includes("ws-a"), "the label never names the workspace");
    assert.equal(spec.spec.runtimeClassName, "gvisor");
    assert.equal(spec.spec.automountServiceAccountToken, false);
    assert.equal(spec.spec.enableServiceLinks, false);
    assert.equal(spec.spec.containers[0].securityContext.readOnlyRootFilesystem, true);
    const metrics = await runner.metrics.registry.metrics();
    assert.match(metrics, /gatehouse_sandbox_claim_seconds_count\{source="warm"\} [1-9]/);
  });

  test("two workspaces never share a pod; a third beyond the cap evicts exactly one idle pod", async () => {
    const a = podOf("ws-a");
    const rb = await run("export default () => 'b'", "ws-b");
    assert.equal(rb.ok, true, rb.error?.message);
    const b = podOf("ws-b");
    assert.ok(a && b && a !== b, `ws-a on ${a}, ws-b on ${b}`);
    const rc = await run("export default () => 'c'", "ws-c");
    assert.equal(rc.ok, true, rc.error?.message);
    const c = podOf("ws-c");
    assert.ok(c && c !== a && c !== b);
    // The least recently used (ws-a) was evicted: its pod is deleted, ws-b's is untouched.
    await waitFor(
      "ws-a's pod to be deleted",
      async () => ((await sandboxPods(NS)).has(a) ? undefined : true),
      120_000,
    );
    const pods = await sandboxPods(NS);
    assert.ok(pods.has(b) && !pods.get(b)?.deleting, "ws-b's pod survives");
    assert.ok(pods.has(c));
    assert.equal(podOf("ws-a"), null);
    assert.match(
      await runner.metrics.registry.metrics(),
      /gatehouse_sandbox_pool_events_total\{event="evicted"\} 1\b/,
    );
  });

  test("a pod deleted mid-execution fails that execution naming the pod; the next runs in a fresh pod", async () => {
    const ready = await run("export default () => 'b'", "ws-b");
    assert.equal(ready.ok, true, ready.error?.message);
    const before = podOf("ws-b");
    assert.ok(before);
    const pending = run("export default () => { for (;;) {} }", "ws-b", 120_000);
    await waitFor(
      "ws-b's execution to be running",
      async () => (runner.pool.describe().some((s) => s.workspaceId === "ws-b" && s.busy) ? true : undefined),
      60_000,
    );
    await kubectlOk(["delete", "pod", "-n", NS, before, "--force", "--grace-period=0"]);
    const r = await pending;
    assert.equal(r.ok, false);
    assert.equal(r.error?.name, "SandboxCrashError");
    assert.match(r.error?.message ?? "", new RegExp(`sandbox pod ${before} was deleted`));
    const next = await run("export default () => 'again'", "ws-b");
    assert.equal(next.ok, true, next.error?.message);
    const after = podOf("ws-b");
    assert.ok(after && after !== before, `a fresh pod: ${after}`);
  });

  test("inside a sandbox pod: gVisor's kernel, no DNS, no TCP to the API server, kubelet, pods, Services or metadata, no token, only the scratch dir writable", async () => {
    const endpoints = JSON.parse(
      await kubectlOk(["get", "endpoints", "kubernetes", "-n", "default", "-o", "json"]),
    );
    const apiIp = endpoints.subsets[0].addresses[0].ip as string;
    const apiPort = endpoints.subsets[0].ports[0].port as number;
    const dnsSvc = (
      await kubectlOk(["get", "svc", "-n", "kube-system", "kube-dns", "-o", "jsonpath={.spec.clusterIP}"])
    ).trim();
    const dnsPod = (
      await kubectlOk([
        "get",
        "pods",
        "-n",
        "kube-system",
        "-l",
        "k8s-app=kube-dns",
        "-o",
        "jsonpath={.items[0].status.podIP}",
      ])
    ).trim();
    const body = `
await attempt("kernel", () => require("fs").readFileSync("/proc/version", "utf8"));
await attempt("dns", () => require("dns").promises.lookup("kubernetes.default.svc.cluster.local"));
await attempt("apiService", () => tcp("10.96.0.1", 443));
await attempt("apiEndpoint", () => tcp(${JSON.stringify(apiIp)}, ${apiPort}));
await attempt("kubelet", () => tcp(${JSON.stringify(apiIp)}, 10250));
await attempt("dnsService", () => tcp(${JSON.stringify(dnsSvc)}, 53));
await attempt("dnsPod", () => tcp(${JSON.stringify(dnsPod)}, 53));
await attempt("metadata", () => tcp("169.254.169.254", 80));
await attempt("token", () => require("fs").readdirSync("/var/run/secrets/kubernetes.io"));
for (const dir of ["/", "/app", "/etc", "/home", "/var", "/usr", "/dev/shm", "/run"])
  await attempt("write:" + dir, () => require("fs").writeFileSync(require("path").join(dir, "probe"), "x"));
await attempt("write:/tmp", () => require("fs").writeFileSync("/tmp/probe", "x"));
await attempt("uid", () => process.getuid());
await attempt("capEff", () => require("fs").readFileSync("/proc/self/status", "utf8").match(/CapEff:\\s*(\\w+)/)[1]);
await attempt("env", () => Object.keys(process.env).sort());
`;
    const seen = await probePod(NS, body);
    assert.match(String(seen.kernel?.value), /gvisor|4\.4\.0 #1 SMP Sun Jan 10 15:06:54 PST 2016/i);
    assertDenied(seen.dns, "DNS lookup");
    for (const what of ["apiService", "apiEndpoint", "kubelet", "dnsService", "dnsPod", "metadata"])
      assertDenied(seen[what], what);
    assertDenied(seen.token, "reading the service-account token dir");
    for (const dir of ["/", "/app", "/etc", "/home", "/var", "/usr", "/dev/shm", "/run"])
      assertDenied(seen[`write:${dir}`], `writing ${dir}`);
    assert.equal(seen["write:/tmp"]?.ok, true, "the scratch dir (/tmp) is writable");
    assert.equal(seen.uid?.value, 65532);
    assert.equal(seen.capEff?.value, "0000000000000000");
    const env = seen.env?.value as string[];
    const unexpected = env.filter(
      (k) =>
        !/^(GATEHOUSE_SCRATCH|GATEHOUSE_INPUT_SILENCE_MS|HOSTNAME|HOME|PATH|NODE_ENV|NODE_OPTIONS|KUBERNETES_(SERVICE|PORT)\w*)$/.test(
          k,
        ),
    );
    assert.deepEqual(unexpected, [], `env beyond the isolate host's needs: ${unexpected.join(", ")}`);
    // Control: the same probe in a namespace without the deny-all policy reaches CoreDNS, so the
    // refusals above are the policy's, not a broken probe.
    await sandboxNamespace(`${NS}-open`, false);
    try {
      const open = await probePod(
        `${NS}-open`,
        `await attempt("dnsPod", () => tcp(${JSON.stringify(dnsPod)}, 53));`,
      );
      assert.equal(open.dnsPod?.ok, true, `control probe failed: ${JSON.stringify(open.dnsPod)}`);
    } finally {
      await kubectlOk(["delete", "namespace", `${NS}-open`, "--wait=false"]);
    }
  });

  test("a RuntimeClass or a namespace that does not exist is refused at start, by name", async () => {
    await assert.rejects(
      startSandboxRunner({
        mode: "kubernetes",
        logger,
        pool: { warm: 0 },
        kubernetes: backendOptions(
          template(NS, "gh-sbpods-badclass", registry, { runtimeClassName: "no-such-class" }),
        ),
      }),
      (error: Error) => {
        assert.equal(error.name, "ConfigError");
        assert.match(error.message, /RuntimeClass "no-such-class" not found/);
        assert.match(error.message, /SANDBOX_K8S_RUNTIME_CLASS/);
        return true;
      },
    );
    assert.equal((await sandboxPods(NS, "gatehouse.dev/runner=gh-sbpods-badclass")).size, 0);
    await assert.rejects(
      startSandboxRunner({
        mode: "kubernetes",
        logger,
        pool: { warm: 0 },
        kubernetes: backendOptions(template("gh-sbpods-missing", "gh-sbpods-nons", registry)),
      }),
      /namespaces "gh-sbpods-missing" not found; create namespace gh-sbpods-missing .* or set SANDBOX_K8S_NAMESPACE/,
    );
  });

  test("pod creation refused by a ResourceQuota fails the execution naming the refusal", async () => {
    const ns = `${NS}-quota`;
    await sandboxNamespace(ns);
    await kubectlOk(["create", "quota", "one-pod", "-n", ns, "--hard=pods=1"]);
    const quotaRunner = await startSandboxRunner({
      mode: "kubernetes",
      logger,
      pool: { warm: 0, maxSandboxes: 4, readyTimeoutMs: 180_000 },
      kubernetes: backendOptions(template(ns, "gh-sbpods-quota", registry)),
    });
    try {
      const exec = (ws: string) =>
        executeSnippet(`127.0.0.1:${quotaRunner.port}`, {
          executionId: `quota-${ws}-${Date.now()}`,
          workspaceId: ws,
          code: "export default () => 1",
          bindings: {},
          limits: {},
        });
      const first = await exec("ws-q1");
      assert.equal(first.ok, true, first.error?.message);
      // The runner answers UNAVAILABLE with the API server's refusal (the kernel passes it on).
      await assert.rejects(exec("ws-q2"), /UNAVAILABLE: could not start a sandbox.*exceeded quota: one-pod/);
      assert.match(
        await quotaRunner.metrics.registry.metrics(),
        /gatehouse_sandbox_start_failures_total\{reason="ExceededQuota"\} [1-9]/,
      );
    } finally {
      await quotaRunner.close();
      await kubectlOk(["delete", "namespace", ns, "--wait=false"]);
    }
  });

  test("a killed runner's pods are deleted: by its next process (same name) at start, by any runner once they ended", async () => {
    const name = "gh-sbpods-killed";
    const child = startRunnerProcess(name);
    try {
      await runningPodOf(name, child);
    } finally {
      child.process.kill("SIGKILL");
    }
    // Its stream closed with it: the isolate host saw end of input and exited. (An ended pod may already
    // be swept by the other runner between two looks: gone counts as ended.)
    let seen = "";
    await waitFor(
      "the killed runner's pods to end",
      async () => {
        const pods = await sandboxPods(NS, `gatehouse.dev/runner=${name}`);
        seen = JSON.stringify([...pods].map(([pod, p]) => [pod, p.phase]));
        return [...pods.values()].every((p) => p.phase === "Succeeded" || p.phase === "Failed")
          ? true
          : undefined;
      },
      120_000,
      () => `pods seen last: ${seen}`,
    );
    // The runner of the first tests (another name) sweeps ended pods every 5 s.
    await waitFor(
      "the ended pods to be swept",
      async () => ((await sandboxPods(NS, `gatehouse.dev/runner=${name}`)).size === 0 ? true : undefined),
      120_000,
    );

    // Same name again (a container restart in the same pod): its new process deletes the old one's pods at start.
    const again = startRunnerProcess(name);
    let restarted: SandboxRunnerHandle | null = null;
    try {
      await runningPodOf(name, again);
      again.process.kill("SIGKILL");
      const left = [...(await sandboxPods(NS, `gatehouse.dev/runner=${name}`)).keys()];
      restarted = await startSandboxRunner({
        mode: "kubernetes",
        logger,
        pool: { warm: 0 },
        kubernetes: { ...backendOptions(template(NS, name, registry)), sweepIntervalMs: 600_000 },
      });
      const now = await sandboxPods(NS, `gatehouse.dev/runner=${name}`);
      for (const pod of left)
        assert.ok(!now.has(pod) || now.get(pod)?.deleting, `leftover ${pod} deleted at start`);
    } finally {
      again.process.kill("SIGKILL");
      await restarted?.close();
    }
    await waitFor(
      "no pod of the killed runner",
      async () => ((await sandboxPods(NS, `gatehouse.dev/runner=${name}`)).size === 0 ? true : undefined),
      120_000,
    );
  });
});

/** Starts a probe pod through the backend (same template, command = the probe script) and returns its results. */
async function probePod(namespace: string, body: string) {
  const backend = await createKubernetesBackend({
    ...backendOptions(
      template(namespace, "gh-sbpods-probe", registry, {
        command: [SANDBOX_POD_COMMAND[0] as string, "-e", probeScript(body)],
      }),
    ),
    logger,
  });
  const instance = await backend.start("probe");
  try {
    let out = "";
    const line = await new Promise<string>((resolve, reject) => {
      instance.onData((chunk) => {
        out += chunk;
        const found = out.split("\n").find((l) => l.startsWith("PROBE-RESULT "));
        if (found) resolve(found);
      });
      instance.onExit((exit) =>
        reject(new Error(`the probe pod ended first: ${exit.reason} ${exit.stderrTail}`)),
      );
    });
    return JSON.parse(line.slice("PROBE-RESULT ".length)) as Record<
      string,
      { ok: boolean; value?: unknown; code?: string }
    >;
  } finally {
    await instance.destroy();
    await backend.close();
  }
}

/** Waits until a pod of runner `name` runs (its warm sandbox); the error carries the runner's log. */
function runningPodOf(name: string, runner: { log(): string }): Promise<true> {
  return waitFor(
    `a running pod of runner ${name}`,
    async () => {
      const pods = await sandboxPods(NS, `gatehouse.dev/runner=${name}`);
      return [...pods.values()].some((p) => p.phase === "Running") ? true : undefined;
    },
    240_000,
    () => runner.log(),
  );
}

/** The runner as its own process (src/main.ts), so a test can SIGKILL it. */
function startRunnerProcess(name: string): { process: ChildProcess; log(): string } {
  const t = template(NS, name, registry);
  let log = "";
  const child = spawn(
    process.execPath,
    ["--no-node-snapshot", "--import", "tsx", join(REPO, "sandbox-runner", "src", "main.ts")],
    {
      cwd: join(REPO, "sandbox-runner"),
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        KUBECONFIG,
        SANDBOX_MODE: "kubernetes",
        SANDBOX_RUNNER_ADDR: "127.0.0.1:0",
        SANDBOX_RUNNER_METRICS_ADDR: "127.0.0.1:0",
        SANDBOX_WARM: "1",
        SANDBOX_K8S_NAMESPACE: NS,
        SANDBOX_K8S_IMAGE: t.image,
        SANDBOX_K8S_IMAGE_PULL_POLICY: "Never",
        SANDBOX_K8S_RUNNER_NAME: name,
        SANDBOX_K8S_CPU_REQUEST: "50m",
        SANDBOX_K8S_MEMORY_REQUEST_MB: "128",
        SANDBOX_MEMORY_MB: "1024",
        SANDBOX_K8S_EPHEMERAL_MB: "64",
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  child.stdout?.on("data", (d) => {
    log = (log + d).slice(-4000);
  });
  child.stderr?.on("data", (d) => {
    log = (log + d).slice(-4000);
  });
  return { process: child, log: () => log };
}
