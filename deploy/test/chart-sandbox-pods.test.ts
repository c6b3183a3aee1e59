/**
 * The chart with sandbox.backend=kubernetes on the local cluster (`npm run cluster -- up`): the render
 * passes the API server's validation and PodSecurity restricted in both namespaces (the release's and
 * the sandbox pods').
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ensureCluster, kubectl, kubectlOk, type TestCluster } from "./cluster.ts";
import { CHART, helm, type K8sObject, KUBE_VERSION, parseManifests, valuesFile } from "./helm.ts";
import { cleanNamespace, ensureImages, prepareNamespace } from "./install.ts";

const NS = "gh-k8schart-pods";
/** The chart's default sandbox namespace for NS. */
const SANDBOX_NS = `${NS}-sandboxes`;
const RELEASE = "gh";

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
  await kubectl(["delete", "namespace", SANDBOX_NS, "--wait=true", "--ignore-not-found"], {
    timeoutMs: 300_000,
  });
  await prepareNamespace(NS);
});

after(async () => {
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
