/**
 * A pod that cannot start shows up in `helm test`, not as a hang. On the real local cluster: with the
 * sandbox runner's image missing on the node, the end-to-end test fails fast naming the runner and
 * what to look for; with every image missing, the test pod itself ends at its deadline (well before
 * helm's --timeout), and the output carries NOTES' guidance for ErrImageNeverPull.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { clusterEnv, ensureCluster, kubectl, type TestCluster, waitFor } from "./cluster.ts";
import { ensureDeps } from "./deps.ts";
import { CHART, helm, valuesFile } from "./helm.ts";
import { cleanNamespace, ensureImages, prepareNamespace } from "./install.ts";

const NS = "gh-missing";
const RELEASE = "gh";
/** How long each helm test check waits (tests.deadlineSeconds); a test pod's own deadline is this + 60 s. */
const DEADLINE_S = 20;

let cluster: TestCluster | undefined;
let base: string[] = [];

before(async () => {
  cluster = await ensureCluster();
  const images = await ensureImages();
  await ensureDeps();
  await prepareNamespace(NS);
  base = [
    "-n",
    NS,
    "-f",
    valuesFile("local-cluster.yaml"),
    "--set",
    `tests.deadlineSeconds=${DEADLINE_S}`,
    ...(images.registry ? ["--set", `global.image.registry=${images.registry}`] : []),
  ];
});

after(async () => {
  await helm(["uninstall", RELEASE, "-n", NS, "--wait", "--timeout", "3m"], { env: clusterEnv() }).catch(
    () => {},
  );
  await cleanNamespace(NS);
  await cluster?.stop();
});

/** Waits until the Deployment of `component` has a Ready pod of its current revision. */
async function rolledOut(component: string): Promise<void> {
  await waitFor(
    `${component} rolled out`,
    async () =>
      (
        await kubectl([
          "-n",
          NS,
          "rollout",
          "status",
          `deploy/${RELEASE}-gatehouse-${component}`,
          "--timeout=5s",
        ])
      ).ok || undefined,
    300_000,
    async () => (await kubectl(["-n", NS, "get", "pods", "-o", "wide"])).stdout,
  );
}

/** `helm test` with a 10 min --timeout; returns its combined output, whether it passed, and how long it took. */
async function helmTest(): Promise<{ ok: boolean; out: string; ms: number }> {
  const t0 = Date.now();
  const r = await helm(["test", RELEASE, "-n", NS, "--timeout", "10m"], {
    env: clusterEnv(),
    timeoutMs: 11 * 60_000,
  });
  return { ok: r.ok, out: r.stdout + r.stderr, ms: Date.now() - t0 };
}

test("the sandbox image missing on the node: helm test fails fast, naming the sandbox runner and the cause to look for", async () => {
  const install = await helm(
    ["install", RELEASE, CHART, ...base, "--set", "sandboxRunner.image.tag=not-on-this-node"],
    { env: clusterEnv() },
  );
  assert.ok(install.ok, install.stderr);
  for (const c of ["kernel", "approval", "worker", "gateway", "gatekeeper-mcp", "gatekeeper-git"])
    await rolledOut(c);
  const r = await helmTest();
  assert.equal(r.ok, false, r.out);
  assert.match(
    r.out,
    /TEST SUITE: +gh-gatehouse-test-healthz\n(?:.*\n){2}Phase: +Succeeded/,
    "the services' /healthz still pass",
  );
  assert.match(r.out, /FAIL snippet: the sandbox runner did not answer within 20 s/);
  assert.match(
    r.out,
    /component=sandbox-runner: ErrImagePull\/ErrImageNeverPull = the sandbox image is missing/,
  );
  // The snippet waits DEADLINE_S for a runner that may still be starting, then stops asking.
  assert.ok(r.ms < 150_000, `helm test took ${r.ms} ms`);
  const runner = await kubectl([
    "-n",
    NS,
    "get",
    "pods",
    "-l",
    "app.kubernetes.io/component=sandbox-runner",
    "-o",
    "jsonpath={.items[*].status.containerStatuses[0].state.waiting.reason}",
  ]);
  assert.match(runner.stdout, /ErrImageNeverPull/, "what the hint sends the user to see");
});

test("every image missing: the test pod ends at its own deadline, not helm's --timeout, and the output says what to check", async () => {
  const upgrade = await helm(
    ["upgrade", RELEASE, CHART, ...base, "--set", "global.image.tag=not-on-this-node"],
    {
      env: clusterEnv(),
    },
  );
  assert.ok(upgrade.ok, upgrade.stderr);
  const r = await helmTest();
  assert.equal(r.ok, false, r.out);
  assert.match(r.out, /pod gh-gatehouse-test-healthz failed/);
  assert.match(r.out, /ErrImagePull\/ErrImageNeverPull = image missing on the node/, "NOTES' guidance");
  // activeDeadlineSeconds = DEADLINE_S + 60 = 80 s, against helm's 10 min --timeout.
  assert.ok(r.ms < 4 * 60_000, `helm test took ${r.ms} ms`);
  const reason = await kubectl([
    "-n",
    NS,
    "get",
    "pod",
    `${RELEASE}-gatehouse-test-healthz`,
    "-o",
    "jsonpath={.status.reason}",
  ]);
  assert.equal(reason.stdout, "DeadlineExceeded");
});
