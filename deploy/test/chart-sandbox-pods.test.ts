/**
 * The chart with sandbox.backend=kubernetes on the local cluster (`npm run cluster -- up`): the render
 * passes the API server's validation and PodSecurity restricted in both namespaces (the release's and
 * the sandbox pods'); installed, the runner's ServiceAccount may touch pods in the sandbox namespace
 * only, a snippet through the gateway runs in a sandbox pod (none in the runner's own pod), and after
 * the runner pod is force-deleted its sandbox pods are gone and a snippet runs again. The chart's
 * ValidatingAdmissionPolicy refuses, to the runner's own ServiceAccount, a runc pod, a root pod and a pod
 * with a token in the sandbox namespace (real creates, each refusal naming its rule), and admits a gVisor
 * pod made like the runner's; an install into a namespace without Pod Security restricted is refused
 * naming the `kubectl label` command, and an acknowledged weakening is printed by NOTES and reported by the
 * gateway's /healthz after an upgrade. `helm uninstall` keeps the caller-token Secret for the next install.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { workspaceLabel } from "@gatehouse/sandbox-runner";
import {
  clusterEnv,
  ensureCluster,
  kubectl,
  kubectlOk,
  portForward,
  type TestCluster,
  waitFor,
} from "./cluster.ts";
import { ensureDeps } from "./deps.ts";
import { Gateway, type McpSession } from "./gateway-client.ts";
import { CHART, helm, type K8sObject, KUBE_VERSION, parseManifests, valuesFile } from "./helm.ts";
import { cleanNamespace, ensureImages, prepareNamespace } from "./install.ts";
import { allReady, releasePods } from "./release-pods.ts";
import { sandboxPods } from "./sandbox-pods.ts";

const NS = "gh-k8schart-pods";
/** The chart's default sandbox namespace for NS. */
const SANDBOX_NS = `${NS}-sandboxes`;
const RELEASE = "gh";
/** local-cluster.yaml's approver token. */
const TOKEN = "helm-install-approver-token-0123";
/** Figures printed at the end. */
const figures: Record<string, number> = {};

let cluster: TestCluster | undefined;
let imageArgs: string[] = [];
let apiServerArgs: string[] = [];

/**
 * The kubernetes Service's endpoint as networkPolicy.apiServer values: what `kubectl get endpointslices
 * -n default -l kubernetes.io/service-name=kubernetes` lists (docs/helm.md).
 */
async function apiServerValues(): Promise<string[]> {
  const out = await kubectlOk([
    "get",
    "endpointslices",
    "-n",
    "default",
    "-l",
    "kubernetes.io/service-name=kubernetes",
    "-o",
    "json",
  ]);
  type Slice = { endpoints: { addresses: string[] }[]; ports: { port: number }[] };
  const slices = JSON.parse(out).items as Slice[];
  const ips = [...new Set(slices.flatMap((s) => s.endpoints.flatMap((e) => e.addresses)))];
  const ports = [...new Set(slices.flatMap((s) => s.ports.map((p) => p.port)))];
  assert.ok(ips.length > 0 && ports.length > 0, `the kubernetes Service has an endpoint: ${out}`);
  return [
    "--set",
    `networkPolicy.apiServer.cidrs={${ips.map((ip) => `${ip}/${ip.includes(":") ? 128 : 32}`).join(",")}}`,
    "--set",
    `networkPolicy.apiServer.ports={${ports.join(",")}}`,
  ];
}

before(async () => {
  cluster = await ensureCluster();
  const images = await ensureImages();
  imageArgs = images.registry ? ["--set", `global.image.registry=${images.registry}`] : [];
  apiServerArgs = await apiServerValues();
  await ensureDeps();
  await kubectl(["delete", "namespace", SANDBOX_NS, "--wait=true", "--ignore-not-found"], {
    timeoutMs: 300_000,
  });
  await prepareNamespace(NS);
});

after(async () => {
  console.log(`chart-sandbox-pods figures: ${JSON.stringify(figures)}`);
  await helm(["uninstall", RELEASE, "-n", NS, "--wait"], { env: clusterEnv() }).catch(() => {});
  await kubectl(["delete", "namespace", SANDBOX_NS, "--wait=true", "--ignore-not-found"], {
    timeoutMs: 300_000,
  });
  await cleanNamespace(NS);
  await cluster?.stop();
});

const values = ["-f", valuesFile("local-cluster.yaml"), "--set", "sandbox.backend=kubernetes"];

test("the kubernetes backend's render passes the API server's validation and PodSecurity restricted (kubectl apply --dry-run=server)", async () => {
  const r = await helm([
    "template",
    RELEASE,
    CHART,
    "-n",
    NS,
    "--kube-version",
    KUBE_VERSION,
    ...values,
    ...apiServerArgs,
    ...imageArgs,
  ]);
  assert.ok(r.ok, r.stderr);
  // A dry run creates nothing: the Role, RoleBinding and policy in the sandbox namespace need it to
  // exist, and the helm test Pods name the chart's ServiceAccount. Make both for the check.
  await kubectlOk(["create", "--save-config", "namespace", SANDBOX_NS]);
  await kubectlOk(["-n", NS, "create", "--save-config", "serviceaccount", `${RELEASE}-gatehouse`]);
  try {
    // kubectl takes one namespace per apply: the objects the chart puts in the sandbox namespace, then the rest.
    const objects = parseManifests(r.stdout);
    const inSandboxNs = (o: K8sObject) => (o.metadata as { namespace?: string }).namespace === SANDBOX_NS;
    let stdout = "";
    for (const [ns, items] of [
      [SANDBOX_NS, objects.filter(inSandboxNs)],
      [NS, objects.filter((o) => !inSandboxNs(o))],
    ] as const) {
      const applied = await kubectl(["-n", ns, "apply", "--dry-run=server", "-f", "-"], {
        input: JSON.stringify({ apiVersion: "v1", kind: "List", items }),
      });
      assert.ok(applied.ok, applied.stderr);
      assert.doesNotMatch(applied.stderr, /would violate PodSecurity/);
      stdout += applied.stdout;
    }
    for (const object of [
      `namespace/${SANDBOX_NS} configured`,
      `serviceaccount/${RELEASE}-gatehouse-sandbox-runner created`,
      `role.rbac.authorization.k8s.io/${RELEASE}-gatehouse-sandbox-runner created`,
      `rolebinding.rbac.authorization.k8s.io/${RELEASE}-gatehouse-sandbox-runner created`,
      `networkpolicy.networking.k8s.io/${RELEASE}-gatehouse-sandbox-deny-all created`,
      `deployment.apps/${RELEASE}-gatehouse-sandbox-runner created`,
    ]) {
      assert.ok(stdout.includes(`${object} (server dry run)`), `${object}:\n${stdout}`);
    }
  } finally {
    await kubectl(["-n", NS, "delete", "serviceaccount", `${RELEASE}-gatehouse`]);
    await kubectl(["delete", "namespace", SANDBOX_NS, "--wait=true"], { timeoutMs: 300_000 });
  }
});

test("helm install --dry-run=server: into an existing namespace without Pod Security restricted it is refused naming the kubectl label command; an acknowledged weakening is printed by NOTES", async () => {
  const bare = `${NS}-bare`;
  await kubectl(["delete", "namespace", bare, "--wait=true", "--ignore-not-found"], { timeoutMs: 300_000 });
  await kubectlOk(["create", "namespace", bare]);
  try {
    const refused = await helm(
      ["install", RELEASE, CHART, "-n", bare, "--dry-run=server", ...values, ...apiServerArgs, ...imageArgs],
      { env: clusterEnv() },
    );
    assert.equal(refused.ok, false, refused.stdout);
    assert.match(
      refused.stderr,
      new RegExp(
        `the release namespace ${bare} does not enforce Pod Security restricted .*kubectl label namespace ${bare} pod-security\\.kubernetes\\.io/enforce=restricted`,
      ),
    );
  } finally {
    await kubectl(["delete", "namespace", bare, "--wait=false"]);
  }
  const weakened = await helm(
    [
      "install",
      "gh-weakened",
      CHART,
      "-n",
      NS,
      "--dry-run=server",
      ...values,
      ...apiServerArgs,
      ...imageArgs,
      "--set",
      "networkPolicy.enabled=false",
      "--set",
      "unsafeAcknowledgeWeakenedSandbox=true",
    ],
    { env: clusterEnv() },
  );
  assert.ok(weakened.ok, weakened.stderr);
  assert.match(weakened.stdout, /\nSANDBOX WEAKENED: networkPolicy\.enabled=false\n/);
  assert.match(weakened.stdout, /name: GATEHOUSE_SANDBOX_WEAKENED\n\s+value: "networkPolicy\.enabled=false"/);
});

/** The spec of sandbox pod `name` (the fields the test reads). */
async function podSpec(name: string): Promise<{
  runtimeClassName?: string;
  automountServiceAccountToken?: boolean;
  containers: { command?: string[] }[];
}> {
  return JSON.parse(await kubectlOk(["-n", SANDBOX_NS, "get", "pod", name, "-o", "json"])).spec;
}

/** The workspace's leased sandbox pods: name and the runner label of each. */
async function leasedPods(
  workspaceId: string,
): Promise<{ name: string; runner?: string; managedBy?: string }[]> {
  const pods = await sandboxPods(
    SANDBOX_NS,
    `gatehouse.dev/sandbox=true,gatehouse.dev/state=leased,gatehouse.dev/workspace=${workspaceLabel(workspaceId)}`,
  );
  return [...pods]
    .filter(([, p]) => !p.deleting)
    .map(([name, p]) => ({
      name,
      runner: p.labels["gatehouse.dev/runner"],
      managedBy: p.labels["app.kubernetes.io/managed-by"],
    }));
}

/** The running sandbox runner pod's name. */
async function runnerPod(): Promise<string> {
  const runner = (await releasePods(NS, RELEASE)).find((p) => p.component === "sandbox-runner" && p.ready);
  assert.ok(runner, "a Ready sandbox runner pod");
  return runner.name;
}

/** Runs a snippet that proves it computed, and returns its value. */
async function snippet(session: McpSession): Promise<unknown> {
  const r = await session.executeCode(
    "export default async () => ({ sum: [1, 2, 3].reduce((a, b) => a + b, 0) })",
  );
  assert.ok(r.ok, JSON.stringify(r));
  assert.deepEqual(r.returnValue, { sum: 6 });
  return r.returnValue;
}

/**
 * What `kubectl auth can-i <verb> <resource> [--subresource s] -n <ns>` answers for the runner's
 * ServiceAccount; `resource` may be "pods/attach" (can-i reads "pods/x" as the pod named x, so the
 * subresource goes in its flag).
 */
async function runnerCan(verb: string, resource: string, ns: string): Promise<string> {
  const [type, sub] = resource.split("/");
  const r = await kubectl([
    "auth",
    "can-i",
    verb,
    type!,
    ...(sub ? ["--subresource", sub] : []),
    "-n",
    ns,
    "--as",
    `system:serviceaccount:${NS}:${RELEASE}-gatehouse-sandbox-runner`,
  ]);
  return `${verb} ${resource} in ${ns}: ${r.stdout.trim() || r.stderr.trim()}`;
}

/** The runner's ServiceAccount, as kubectl --as names it. */
const RUNNER_SA = `system:serviceaccount:${NS}:${RELEASE}-gatehouse-sandbox-runner`;

/** A pod as the sandbox runner makes one (gVisor, non-root, read-only, no capabilities, no token); `change` edits it. */
function sandboxPod(name: string, change: (spec: Record<string, unknown>) => void = () => {}) {
  const spec: Record<string, unknown> = {
    runtimeClassName: "gvisor",
    automountServiceAccountToken: false,
    restartPolicy: "Never",
    securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: "RuntimeDefault" } },
    containers: [
      {
        name: "isolate-host",
        image: "gatehouse/sandbox:dev",
        command: ["true"],
        securityContext: {
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ["ALL"] },
        },
      },
    ],
  };
  change(spec);
  return { apiVersion: "v1", kind: "Pod", metadata: { name, labels: { "gatehouse.dev/test": "vap" } }, spec };
}

/** `kubectl create` of `pod` in the sandbox namespace as the runner's ServiceAccount (a real create unless dryRun). */
function createAsRunner(pod: object, dryRun = false) {
  return kubectl(
    [
      "-n",
      SANDBOX_NS,
      "create",
      "--as",
      RUNNER_SA,
      ...(dryRun ? ["--dry-run=server"] : []),
      "-o",
      "name",
      "-f",
      "-",
    ],
    { input: JSON.stringify(pod) },
  );
}

/**
 * Asserts a real create of `pod` as the runner is refused by the chart's admission policy naming `rule`;
 * polls (30 s) while another admission step (Pod Security, a namespace label not yet seen) refuses it first.
 */
async function refusedByPolicy(pod: { metadata: { name: string } }, rule: string): Promise<string> {
  let last = "";
  try {
    return await waitFor(
      `the admission policy refusing ${pod.metadata.name} with rule ${rule}`,
      async () => {
        const r = await createAsRunner(pod);
        assert.equal(r.ok, false, `${pod.metadata.name} was created: ${r.stdout}`);
        last = r.stderr;
        return new RegExp(
          `ValidatingAdmissionPolicy '[^']+' with binding '[^']+' denied request: rule ${rule}:`,
        ).test(r.stderr)
          ? r.stderr
          : undefined;
      },
      30_000,
      () => `the last refusal: ${last}`,
    );
  } finally {
    await kubectl([
      "-n",
      SANDBOX_NS,
      "delete",
      "pod",
      pod.metadata.name,
      "--ignore-not-found",
      "--wait=false",
    ]);
  }
}

test("installed with sandbox.backend=kubernetes: snippets run in sandbox pods; a force-deleted runner's sandbox pods are gone once the next runner is Ready, and snippets run again", async (t) => {
  const t0 = Date.now();
  const install = await helm(
    [
      "install",
      RELEASE,
      CHART,
      "-n",
      NS,
      ...values,
      ...apiServerArgs,
      ...imageArgs,
      "--wait",
      "--timeout",
      "15m",
    ],
    { env: clusterEnv(), timeoutMs: 16 * 60_000 },
  );
  assert.ok(install.ok, `${install.stderr}\n${(await kubectl(["-n", NS, "get", "pods,events"])).stdout}`);
  await allReady(NS, RELEASE, 60_000);
  figures.helmInstallToAllReadyMs = Date.now() - t0;
  assert.ok(
    install.stdout.includes(`kubectl get pods -n ${SANDBOX_NS} -l gatehouse.dev/sandbox=true`),
    `NOTES say how to see the sandbox pods:\n${install.stdout}`,
  );

  await t.test(
    "the runner's ServiceAccount may create, watch and attach to pods in the sandbox namespace, and nothing else",
    async () => {
      const answers = await Promise.all([
        runnerCan("create", "pods", SANDBOX_NS),
        runnerCan("watch", "pods", SANDBOX_NS),
        runnerCan("patch", "pods", SANDBOX_NS),
        runnerCan("create", "pods/attach", SANDBOX_NS),
        runnerCan("create", "pods/exec", SANDBOX_NS),
        runnerCan("get", "pods/log", SANDBOX_NS),
        runnerCan("get", "secrets", SANDBOX_NS),
        runnerCan("create", "pods", NS),
        runnerCan("create", "pods/attach", NS),
        runnerCan("get", "secrets", NS),
        runnerCan("list", "nodes", ""),
      ]);
      const want = ["yes", "yes", "yes", "yes", "no", "no", "no", "no", "no", "no", "no"];
      assert.deepEqual(
        answers.map((a) => a.split(": ").pop()),
        want,
        answers.join("\n"),
      );
    },
  );

  await t.test(
    "the admission policy: the runner's ServiceAccount cannot create a runc pod, a root pod or a pod with a token in the sandbox namespace (each refusal names its rule); a gVisor pod made like the runner's is admitted",
    async () => {
      const admitted = await createAsRunner(sandboxPod("vap-good"), true);
      assert.ok(admitted.ok, `a pod like the runner's is admitted: ${admitted.stderr}`);
      assert.match(admitted.stdout, /pod\/vap-good/);
      // No runtimeClassName: the node's default runtime (runc), which Pod Security does not judge.
      await refusedByPolicy(
        sandboxPod("vap-runc", (spec) => delete spec.runtimeClassName),
        "runtimeClassName",
      );
      await refusedByPolicy(
        sandboxPod("vap-token", (spec) => {
          spec.automountServiceAccountToken = true;
        }),
        "serviceAccountToken",
      );
      const root = sandboxPod("vap-root", (spec) => {
        spec.securityContext = {
          runAsNonRoot: false,
          runAsUser: 0,
          seccompProfile: { type: "RuntimeDefault" },
        };
      });
      const rootRefused = await createAsRunner(root);
      assert.equal(rootRefused.ok, false, `the root pod was created: ${rootRefused.stdout}`);
      assert.match(rootRefused.stderr, /runAsNonRoot|runAsUser/, "Pod Security restricted refuses it first");
      // The backstop holds without Pod Security too (a namespace relabelled by someone): the policy
      // itself refuses the root pod and a pod with NET_RAW, naming their rules.
      await kubectlOk([
        "label",
        "namespace",
        SANDBOX_NS,
        "--overwrite",
        "pod-security.kubernetes.io/enforce=privileged",
      ]);
      try {
        await refusedByPolicy(root, "runAsNonRoot");
        await refusedByPolicy(
          sandboxPod("vap-netraw", (spec) => {
            (
              spec.containers as { securityContext: Record<string, unknown> }[]
            )[0]!.securityContext.capabilities = {
              drop: ["ALL"],
              add: ["NET_RAW"],
            };
          }),
          "capabilities",
        );
        await refusedByPolicy(
          sandboxPod("vap-hostnet", (spec) => {
            spec.hostNetwork = true;
          }),
          "hostNamespaces",
        );
      } finally {
        await kubectlOk([
          "label",
          "namespace",
          SANDBOX_NS,
          "--overwrite",
          "pod-security.kubernetes.io/enforce=restricted",
        ]);
      }
      // The runner's own pods are held to the same rules (but its token): one without gVisor is refused.
      const runnerLike = {
        ...sandboxPod("vap-runner-runc", (spec) => delete spec.runtimeClassName),
        metadata: {
          name: "vap-runner-runc",
          labels: { "app.kubernetes.io/instance": RELEASE, "app.kubernetes.io/component": "sandbox-runner" },
        },
      };
      const r = await kubectl(["-n", NS, "create", "--dry-run=server", "-f", "-"], {
        input: JSON.stringify(runnerLike),
      });
      assert.equal(r.ok, false, r.stdout);
      assert.match(r.stderr, /denied request: rule runtimeClassName: /);
    },
  );

  const gw = await portForward(NS, `${RELEASE}-gatehouse-gateway`, 80);
  const gateway = new Gateway(`http://${gw.local}`, TOKEN);
  try {
    const ws = await gateway.request<{ id: string }>("POST", "/api/workspaces", { name: "sandbox-pods" });
    const oldRunner = await runnerPod();

    await t.test(
      "a snippet through the gateway runs in a leased gVisor sandbox pod; the runner's pod runs no isolate host",
      async () => {
        const session = await gateway.mcp(ws.id);
        try {
          await snippet(session);
        } finally {
          await session.close();
        }
        const mine = await leasedPods(ws.id);
        assert.equal(mine.length, 1, `one leased pod for the workspace: ${JSON.stringify(mine)}`);
        const pod = mine[0]!;
        assert.equal(pod.runner, oldRunner);
        assert.equal(pod.managedBy, "gatehouse-sandbox-runner");
        const spec = await podSpec(pod.name);
        assert.equal(spec.runtimeClassName, "gvisor");
        assert.equal(spec.automountServiceAccountToken, false);
        assert.match(JSON.stringify(spec.containers[0]?.command), /isolate-host/);
        const procs = await kubectlOk([
          "-n",
          NS,
          "exec",
          oldRunner,
          "--",
          "node",
          "-e",
          `const fs=require("fs");const out=[];for(const p of fs.readdirSync("/proc")){if(!/^[0-9]+$/.test(p))continue;try{out.push(fs.readFileSync("/proc/"+p+"/cmdline","utf8").split("\\0").join(" ").trim())}catch{}}console.log(JSON.stringify(out))`,
        ]);
        const cmdlines = JSON.parse(procs) as string[];
        assert.ok(cmdlines.length > 0, procs);
        assert.deepEqual(
          cmdlines.filter((c) => c.includes("isolate-host")),
          [],
          `the runner's pod: ${procs}`,
        );
      },
    );

    await t.test(
      "kubectl delete pod --force on the runner: once the next runner is Ready its sandbox pods are gone, and a snippet runs again",
      async () => {
        const ofOldRunner = () =>
          sandboxPods(SANDBOX_NS, `gatehouse.dev/sandbox=true,gatehouse.dev/runner=${oldRunner}`);
        assert.ok((await ofOldRunner()).size > 0, "the old runner holds sandbox pods");
        const t1 = Date.now();
        await kubectlOk(["-n", NS, "delete", "pod", oldRunner, "--force", "--grace-period=0"]);
        const newRunner = await waitFor(
          "a new sandbox runner pod Ready",
          async () => {
            const r = (await releasePods(NS, RELEASE)).find(
              (p) => p.component === "sandbox-runner" && p.ready && p.name !== oldRunner,
            );
            return r?.name;
          },
          300_000,
          async () => (await kubectl(["-n", NS, "get", "pods,events", "-o", "wide"])).stdout,
        );
        figures.runnerDeleteToNewRunnerReadyMs = Date.now() - t1;
        await waitFor(
          `no sandbox pod labelled with ${oldRunner}`,
          async () => ((await ofOldRunner()).size === 0 ? true : undefined),
          300_000,
          async () =>
            (
              await kubectl([
                "-n",
                SANDBOX_NS,
                "get",
                "pods",
                "-L",
                "gatehouse.dev/runner,gatehouse.dev/state",
              ])
            ).stdout,
        );
        figures.runnerDeleteToOrphansGoneMs = Date.now() - t1;
        // The kernel's connection to the runner comes back on its own (gRPC reconnects to the Service).
        let attempts = 0;
        let lastError = "";
        const session = await gateway.mcp(ws.id);
        try {
          await waitFor(
            "a snippet running after the runner restart",
            async () => {
              attempts++;
              try {
                return await snippet(session);
              } catch (e) {
                lastError = String(e);
                return undefined;
              }
            },
            120_000,
            () => `after ${attempts} attempts, the last: ${lastError}`,
          );
        } finally {
          await session.close();
        }
        figures.snippetAttemptsAfterRestart = attempts;
        assert.deepEqual(
          (await leasedPods(ws.id)).map((p) => p.runner),
          [newRunner],
          "the workspace's pod is now the new runner's",
        );
      },
    );
  } finally {
    await gw.close();
  }

  await t.test(
    "helm upgrade with an acknowledged weakening (networkPolicy.enabled=false): NOTES print SANDBOX WEAKENED and the gateway's /healthz reports it",
    async () => {
      const t2 = Date.now();
      const upgrade = await helm(
        [
          "upgrade",
          RELEASE,
          CHART,
          "-n",
          NS,
          ...values,
          ...apiServerArgs,
          ...imageArgs,
          "--set",
          "networkPolicy.enabled=false",
          "--set",
          "unsafeAcknowledgeWeakenedSandbox=true",
          "--wait",
          "--timeout",
          "5m",
        ],
        { env: clusterEnv(), timeoutMs: 6 * 60_000 },
      );
      assert.ok(upgrade.ok, upgrade.stderr);
      assert.match(upgrade.stdout, /\nSANDBOX WEAKENED: networkPolicy\.enabled=false\n/);
      await allReady(NS, RELEASE, 120_000);
      const fwd = await portForward(NS, `${RELEASE}-gatehouse-gateway`, 80);
      try {
        const health = await waitFor(
          "the gateway's /healthz reporting the weakened sandbox",
          async () => {
            const res = await fetch(`http://${fwd.local}/healthz`).catch(() => undefined);
            const body = res?.ok ? ((await res.json()) as { sandboxWeakened?: string[] }) : undefined;
            return body?.sandboxWeakened ? body : undefined;
          },
          120_000,
        );
        assert.deepEqual(health, { ok: true, sandboxWeakened: ["networkPolicy.enabled=false"] });
      } finally {
        await fwd.close();
      }
      figures.weakenedUpgradeToHealthzMs = Date.now() - t2;
    },
  );
});

/** The caller-token Secret's data and helm's owner annotation, or undefined when there is none. */
async function callerTokenSecret(): Promise<{ data: string; release?: string } | undefined> {
  const r = await kubectl(["-n", NS, "get", "secret", `${RELEASE}-gatehouse-caller-token`, "-o", "json"]);
  if (!r.ok) return undefined;
  const o = JSON.parse(r.stdout) as {
    data: Record<string, string>;
    metadata: { annotations?: Record<string, string> };
  };
  return {
    data: JSON.stringify(o.data),
    ...(o.metadata.annotations?.["meta.helm.sh/release-name"]
      ? { release: o.metadata.annotations["meta.helm.sh/release-name"] }
      : {}),
  };
}

test("helm uninstall keeps the caller-token Secret, and a reinstall takes it over with the same value (tokens issued before stay valid)", async () => {
  const before = await callerTokenSecret();
  assert.ok(before, "the install made the caller-token Secret");
  const uninstall = await helm(["uninstall", RELEASE, "-n", NS, "--wait", "--timeout", "5m"], {
    env: clusterEnv(),
    timeoutMs: 6 * 60_000,
  });
  assert.ok(uninstall.ok, uninstall.stderr);
  assert.match(uninstall.stdout + uninstall.stderr, /caller-token/, "helm says what it kept");
  assert.deepEqual(await callerTokenSecret(), before, "kept, unchanged");
  // Without --wait: only the objects matter here (after() uninstalls again).
  const reinstall = await helm(
    ["install", RELEASE, CHART, "-n", NS, ...values, ...apiServerArgs, ...imageArgs],
    {
      env: clusterEnv(),
    },
  );
  assert.ok(reinstall.ok, reinstall.stderr);
  assert.deepEqual(
    await callerTokenSecret(),
    { ...before, release: RELEASE },
    "the same value, owned by the release",
  );
});
