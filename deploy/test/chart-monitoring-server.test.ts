/**
 * The chart's monitoring objects against a real API server (the local cluster, `npm run cluster -- up`):
 * the Prometheus Operator's CRDs (generated from its Go API types by scripts/build-monitoring-crds.sh)
 * are installed, then the rendered PrometheusRule, ServiceMonitors, dashboard ConfigMap and the
 * Deployments and NetworkPolicies with tracing on pass `kubectl apply --dry-run=server`; a `for` the CRD's
 * pattern refuses is refused by the server too.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ensureCluster, kubectl, kubectlOk, REPO, type TestCluster } from "./cluster.ts";
import { CHART, command, helm, KUBE_VERSION, parseManifests, valuesFile } from "./helm.ts";

const NS = "gh-monitoring";
const RELEASE = "gh";
/** The CRDs the chart's monitoring objects need. */
const CRDS = ["prometheusrules", "servicemonitors"];

let cluster: TestCluster | undefined;
/** CRDs this test installed (a cluster that had them keeps them). */
const installed: string[] = [];

before(async () => {
  cluster = await ensureCluster();
  const script = join(REPO, "scripts", "build-monitoring-crds.sh");
  const built = await command("bash", [script], { timeoutMs: 30 * 60_000 });
  if (!built.ok) throw new Error(`build-monitoring-crds.sh failed:\n${built.stdout}\n${built.stderr}`);
  const dir = (await command("bash", [script, "--print-dir"])).stdout.trim();
  for (const plural of CRDS) {
    const name = `${plural}.monitoring.coreos.com`;
    if ((await kubectl(["get", "crd", name])).ok) continue;
    // Server-side apply: the generated CRDs are too large for client-side apply's annotation.
    await kubectlOk(["apply", "--server-side", "-f", "-"], {
      input: readFileSync(join(dir, `monitoring.coreos.com_${plural}.yaml`), "utf8"),
    });
    installed.push(name);
    await kubectlOk(["wait", "--for=condition=Established", `crd/${name}`, "--timeout=60s"]);
  }
  await kubectl(["delete", "namespace", NS, "--wait=true", "--ignore-not-found"], { timeoutMs: 300_000 });
  await kubectlOk(["create", "namespace", NS]);
  await kubectlOk(["label", "namespace", NS, "pod-security.kubernetes.io/enforce=restricted"]);
});

after(async () => {
  await kubectl(["delete", "namespace", NS, "--wait=true", "--ignore-not-found"], { timeoutMs: 300_000 });
  for (const name of installed) await kubectl(["delete", "crd", name, "--ignore-not-found"]);
  await cluster?.stop();
});

/** `helm template` of the release with the local cluster's values and `sets`. */
async function rendered(sets: string[]): Promise<string> {
  const args = ["template", RELEASE, CHART, "-n", NS, "--kube-version", KUBE_VERSION];
  args.push("-f", valuesFile("local-cluster.yaml"));
  for (const s of sets) args.push("--set", s);
  const r = await helm(args);
  assert.ok(r.ok, r.stderr);
  return r.stdout;
}

/** `kubectl apply --dry-run=server` of the rendered objects of `kinds`; returns kubectl's result. */
async function dryRun(manifests: string, kinds: string[]) {
  const items = parseManifests(manifests).filter((o) => kinds.includes(o.kind));
  assert.ok(items.length > 0, `nothing of ${kinds.join(", ")} rendered`);
  return kubectl(["-n", NS, "apply", "--dry-run=server", "-f", "-"], {
    input: JSON.stringify({ apiVersion: "v1", kind: "List", items }),
  });
}

test("the PrometheusRule, ServiceMonitors and dashboard ConfigMap pass the API server's validation", async () => {
  const manifests = await rendered([
    "prometheusRule.enabled=true",
    "serviceMonitor.enabled=true",
    "grafanaDashboard.enabled=true",
    "prometheusRule.alertLabels.team=platform",
  ]);
  const applied = await dryRun(manifests, ["PrometheusRule", "ServiceMonitor", "ConfigMap"]);
  assert.ok(applied.ok, applied.stderr);
  for (const object of [
    `prometheusrule.monitoring.coreos.com/${RELEASE}-gatehouse created (server dry run)`,
    `servicemonitor.monitoring.coreos.com/${RELEASE}-gatehouse-kernel created (server dry run)`,
    `configmap/${RELEASE}-gatehouse-dashboard created (server dry run)`,
  ]) {
    assert.ok(applied.stdout.includes(object), `${object}:\n${applied.stdout}`);
  }
});

test("the API server refuses a PrometheusRule whose for is not a duration (the CRD's validation is real)", async () => {
  const manifests = (await rendered(["prometheusRule.enabled=true"])).replace("for: 10m", "for: 10 minutes");
  const refused = await dryRun(manifests, ["PrometheusRule"]);
  assert.equal(refused.ok, false, refused.stdout);
  assert.match(refused.stderr, /spec\.groups\[\d+\]\.rules\[\d+\]\.for.*should match/);
});

test("with tracing on, every Deployment and NetworkPolicy passes the API server's validation", async () => {
  const manifests = await rendered([
    "tracing.endpoint=http://otel-collector.observability:4317",
    "tracing.sandboxRunner=true",
    "networkPolicy.tracing.sandboxRunnerCidrs={10.0.5.7/32}",
    "tracing.headers.existingSecret=otel-auth",
    "networkPolicy.tracing.to[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name=observability",
  ]);
  const applied = await dryRun(manifests, ["Deployment", "NetworkPolicy"]);
  assert.ok(applied.ok, applied.stderr);
  assert.doesNotMatch(applied.stderr, /would violate PodSecurity/);
  assert.match(
    applied.stdout,
    new RegExp(`networkpolicy.networking.k8s.io/${RELEASE}-gatehouse-sandbox-runner created`),
  );
});
