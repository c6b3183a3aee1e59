/**
 * `helm upgrade` without errors for clients, on the local cluster with the PostgreSQL profile
 * (eventStore.backend=postgres: kernel, approval and worker roll like the gateway, a new pod Ready
 * before the old one stops). A steady stream of API requests (every 100 ms, the kernel's and the
 * approval service's routes in turn) goes to the gateway's Service address, as in-cluster clients and
 * ingresses reach it, while an upgrade with one changed value replaces every pod: none may fail.
 * The PostgreSQL server is a real one on the host (Debian's postgresql), listening on the bridge
 * address the cluster's Pods reach the host at.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type PostgresServer, startPostgresServer } from "@gatehouse/event-store/postgres-server";
import { clusterEnv, ensureCluster, kubectl, kubectlOk, type TestCluster } from "./cluster.ts";
import { ensureDeps } from "./deps.ts";
import { Gateway } from "./gateway-client.ts";
import { CHART, COMPONENTS, helm, valuesFile } from "./helm.ts";
import { cleanNamespace, ensureImages, prepareNamespace } from "./install.ts";
import { allReady } from "./release-pods.ts";
import { type LoopReport, startRequestLoop } from "./request-loop.ts";

const NS = "gh-upgrade";
const RELEASE = "gh";
const TOKEN = "helm-install-approver-token-0123";
/** The Pods' range on the local cluster (deploy/cluster/lib.sh) and the host's address on its bridge (.1). */
const POD_CIDR = process.env.GATEHOUSE_CLUSTER_POD_CIDR ?? "10.244.0.0/24";
const HOST_ON_BRIDGE = POD_CIDR.replace(/\.\d+\/\d+$/, ".1");

let cluster: TestCluster | undefined;
let postgres: PostgresServer | undefined;
let imageArgs: string[] = [];
/** Figures printed at the end (docs/helm.md, Upgrades). */
const figures: Record<string, number | string> = {};

before(async () => {
  cluster = await ensureCluster();
  const images = await ensureImages();
  imageArgs = images.registry ? ["--set", `global.image.registry=${images.registry}`] : [];
  await ensureDeps();
  await prepareNamespace(NS);
  postgres = await startPostgresServer({
    migrate: true,
    alsoListenOn: [HOST_ON_BRIDGE],
    trustNetworks: [POD_CIDR],
  });
});

after(async () => {
  console.log(`chart-upgrade figures: ${JSON.stringify(figures)}`);
  await helm(["uninstall", RELEASE, "-n", NS, "--wait"], { env: clusterEnv() }).catch(() => {});
  await cleanNamespace(NS);
  await postgres?.stop();
  await cluster?.stop();
});

/**
 * Installs the release with `values`, starts the request loop against the gateway's Service address,
 * upgrades with global.logLevel=debug (every pod replaced) and keeps the loop going until 50 more
 * requests are answered. Figures go to `figures` under `<key>…`. @returns the loop's report.
 */
async function upgradeUnderLoad(key: string, values: string[]): Promise<LoopReport> {
  const install = await helm(["install", RELEASE, CHART, "-n", NS, ...values, "--wait", "--timeout", "15m"], {
    env: clusterEnv(),
    timeoutMs: 16 * 60_000,
  });
  assert.ok(install.ok, `${install.stderr}\n${(await kubectl(["-n", NS, "get", "pods,events"])).stdout}`);
  const firstPods = await allReady(NS, RELEASE, 120_000);
  // The Service's address: kube-proxy sends each new connection to a Ready pod, as it does for
  // in-cluster clients and ingress controllers (a port-forward would stick to one pod).
  const ip = (
    await kubectlOk([
      "-n",
      NS,
      "get",
      "svc",
      `${RELEASE}-gatehouse-gateway`,
      "-o",
      "jsonpath={.spec.clusterIP}",
    ])
  ).trim();
  const base = `http://${ip}:80`;
  const gateway = new Gateway(base, TOKEN);
  const ws = await gateway.request<{ id: string }>("POST", "/api/workspaces", { name: "upgrade" });

  const loop = startRequestLoop(base, TOKEN, ["/api/workspaces", `/api/workspaces/${ws.id}/log`]);
  let upgradeMs = 0;
  let report: LoopReport | undefined;
  try {
    await loop.answered(20);
    const t0 = Date.now();
    const upgrade = await helm(
      [
        "upgrade",
        RELEASE,
        CHART,
        "-n",
        NS,
        ...values,
        "--set",
        "global.logLevel=debug",
        "--wait",
        "--timeout",
        "10m",
      ],
      { env: clusterEnv(), timeoutMs: 11 * 60_000 },
    );
    assert.ok(upgrade.ok, upgrade.stderr);
    // --wait returns once the new pods are Ready; the old ones may still be draining.
    const now = await allReady(NS, RELEASE, 180_000);
    upgradeMs = Date.now() - t0;
    for (const c of COMPONENTS) assert.notEqual(now.get(c), firstPods.get(c), `${c}'s pod was replaced`);
    await loop.answered(50);
  } finally {
    report = await loop.stop();
    const held = report.outcomes.filter((o) => o.ms >= 2000);
    if (report.failed.length) {
      // What the gateway and the kernel logged, for a failure's diagnosis.
      for (const c of ["gateway", "kernel"]) {
        const logs = await kubectl([
          "-n",
          NS,
          "logs",
          "-l",
          `app.kubernetes.io/component=${c}`,
          "--tail=40",
          "--prefix",
        ]);
        console.log(`${c} logs:\n${logs.stdout}${logs.stderr}`);
      }
    }
    Object.assign(figures, {
      [`${key}UpgradeMs`]: upgradeMs,
      [`${key}Requests`]: report.outcomes.length,
      [`${key}Failed`]: report.failed.length,
      [`${key}FailureWindowMs`]: report.failureWindowMs,
      [`${key}SlowestMs`]: report.slowestMs,
      // Requests held 2 s or more (waiting for a restarting service): how many, and from the first one's
      // sending to the last one's answer.
      [`${key}Held2sOrMore`]: held.length,
      [`${key}HeldWindowMs`]: held.length
        ? Math.round(
            Math.max(...held.map((o) => o.sentAtMs + o.ms)) - Math.min(...held.map((o) => o.sentAtMs)),
          )
        : 0,
      [`${key}Failures`]: report.failed
        .slice(0, 5)
        .map((f) => `${Math.round(f.sentAtMs)} ms ${f.path}: ${f.what.slice(0, 120)}`)
        .join(" | "),
    });
  }
  return report;
}

test("helm upgrade with a changed value on the PostgreSQL profile, during a steady stream of requests: every pod replaced, 0 failed requests", async () => {
  assert.ok(postgres);
  const report = await upgradeUnderLoad("postgres", [
    "-f",
    valuesFile("local-cluster.yaml"),
    "--set",
    "eventStore.backend=postgres",
    "--set",
    `eventStore.url=postgres://gatehouse@${HOST_ON_BRIDGE}:${postgres.port}/gatehouse`,
    ...imageArgs,
  ]);
  assert.deepEqual(
    report.failed.map((f) => `${Math.round(f.sentAtMs)} ms ${f.path}: ${f.what}`),
    [],
    `${report.failed.length} of ${report.outcomes.length} requests failed during the upgrade`,
  );
  const un = await helm(["uninstall", RELEASE, "-n", NS, "--wait", "--timeout", "5m"], {
    env: clusterEnv(),
    timeoutMs: 6 * 60_000,
  });
  assert.ok(un.ok, un.stderr);
});

test("helm upgrade on the SQLite profile (one writer: kernel, approval and worker stop before their new pods start) during the same stream: the window of failed or held requests is measured", async () => {
  const report = await upgradeUnderLoad("sqlite", ["-f", valuesFile("local-cluster.yaml"), ...imageArgs]);
  // What a client may see: the gateway's own answers (503 unavailable, 504 deadline) while the kernel is
  // down, never a refused or reset connection (the gateway drains).
  for (const f of report.failed)
    assert.match(f.what, /^50[34] /, `${Math.round(f.sentAtMs)} ms ${f.path}: ${f.what}`);
});
