/**
 * The chart's monitoring objects (issue 18), rendered without a cluster: the Grafana dashboard ConfigMap
 * with the sidecar label and the SLO threshold lines, the PrometheusRule's alerts with their values and
 * runbook links, the OpenTelemetry env on every Deployment with egress to the collector — each only when
 * asked — and the bad values refused naming the key.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { REPO } from "./cluster.ts";
import {
  ALL_COMPONENTS,
  CHART,
  find,
  helm,
  type K8sObject,
  KUBE_VERSION,
  parseManifests,
  render,
  template,
  valuesFile,
} from "./helm.ts";
import { alerts, dashboardFile, dashboardOf } from "./monitoring.ts";

const name = (c: string) => `t-gatehouse-${c}`;
const ON = ["prometheusRule.enabled=true", "grafanaDashboard.enabled=true"];
/** Every component deployed: the defaults plus gatekeeper-postgres. */
const EVERYTHING = ["minimal.yaml", "postgres-gatekeeper.yaml"];
const TRACING = ["tracing.endpoint=http://otel-collector.observability:4317"];

/**
 * `--set-json key=value` for each entry: fractional numbers must go this way (or in a values file), since
 * helm's `--set` passes "0.3" on as a string, which the schema refuses (docs/helm.md says so).
 */
const setJson = (values: Record<string, unknown>): string[] =>
  Object.entries(values).flatMap(([k, v]) => ["--set-json", `${k}=${JSON.stringify(v)}`]);

/** Renders (must succeed) with files, `--set`s and `--set-json`s. */
async function renderWith(
  files: string[],
  sets: string[],
  json: Record<string, unknown>,
): Promise<K8sObject[]> {
  const r = await template(files, sets, setJson(json));
  if (!r.ok) throw new Error(`helm template failed: ${r.stderr}`);
  return parseManifests(r.stdout);
}

/** The OTEL_* entries of a component's container env. */
function otelEnv(objects: K8sObject[], c: string): Record<string, unknown> {
  const env = find(objects, "Deployment", name(c)).spec.template.spec.containers[0].env as {
    name: string;
    value?: string;
    valueFrom?: unknown;
  }[];
  return Object.fromEntries(
    env.filter((e) => e.name.startsWith("OTEL_")).map((e) => [e.name, e.value ?? e.valueFrom]),
  );
}

/** A component NetworkPolicy's egress rules. */
function egress(objects: K8sObject[], c: string): { to?: unknown[]; ports?: { port: number }[] }[] {
  return find(objects, "NetworkPolicy", name(c)).spec.egress;
}

/** Titles of the panels whose threshold line a value sets, with the value's key and default. */
const THRESHOLD_PANELS: Record<string, [string, number]> = {
  "Observation append p99": ["slo.observationAppend.p99Seconds", 0.025],
  "executeCode p99 on a warm sandbox": ["slo.executeCodeWarm.p99Seconds", 1],
  "Approve → applied p99": ["slo.approveToApplied.p99Seconds", 2],
  "Inbox p95 (GET /api/inbox)": ["slo.inbox.p95Seconds", 0.5],
  "Notice → browser p95 (published → sent on SSE)": ["slo.noticeDelivery.p95Seconds", 1],
  "Availability (answered without a server error)": ["slo.availability", 0.999],
  "Oldest pending approval": ["prometheusRule.alerts.pendingBacklogOld.thresholdSeconds", 86_400],
};

/** The value of a panel's threshold line (its second step). */
function thresholdOf(dashboard: ReturnType<typeof dashboardFile>, title: string): number | null | undefined {
  const panel = dashboard.panels.find((p) => p.title === title);
  assert.ok(panel, `no panel titled ${title}`);
  return panel.fieldConfig?.defaults.thresholds?.steps[1]?.value;
}

test("helm lint --strict passes with the dashboard, the rules, the ServiceMonitors and tracing on", async () => {
  const r = await helm([
    "lint",
    CHART,
    "--strict",
    "--kube-version",
    KUBE_VERSION,
    "-f",
    valuesFile("minimal.yaml"),
    ...[...ON, "serviceMonitor.enabled=true", ...TRACING].flatMap((s) => ["--set", s]),
  ]);
  assert.ok(r.ok, r.stdout + r.stderr);
  assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
});

test("by default: no PrometheusRule, no dashboard ConfigMap, no OTEL_* env and no egress to a collector", async () => {
  const objects = await render(EVERYTHING);
  assert.equal(
    objects.some((o) => o.kind === "PrometheusRule"),
    false,
  );
  assert.equal(
    objects.some((o) => o.kind === "ConfigMap" && o.metadata.name.endsWith("-dashboard")),
    false,
  );
  for (const c of ALL_COMPONENTS) {
    assert.deepEqual(otelEnv(objects, c), {}, `${c} has no OTEL_* variable`);
    assert.doesNotMatch(JSON.stringify(egress(objects, c) ?? []), /4317/, c);
  }
});

test("the dashboard ConfigMap carries the sidecar label, and each SLO panel's threshold line is the slo value", async () => {
  const objects = await render(["minimal.yaml"], ["grafanaDashboard.enabled=true"]);
  const cm = find(objects, "ConfigMap", "t-gatehouse-dashboard");
  assert.equal(cm.metadata.labels?.grafana_dashboard, "1", "kube-prometheus-stack's default sidecar label");
  assert.equal((cm.metadata as { namespace?: string }).namespace, "gh");
  const shipped = dashboardFile();
  const rendered = dashboardOf(objects);
  assert.equal(rendered.panels.length, shipped.panels.length);
  for (const [title, [key, value]] of Object.entries(THRESHOLD_PANELS)) {
    assert.equal(thresholdOf(rendered, title), value, `${title}: default ${key}`);
    assert.equal(thresholdOf(shipped, title), value, `${title}: the JSON file agrees with values.yaml`);
  }
  // Every SLO of the issue has its panel, and every panel queries something.
  for (const p of rendered.panels.filter((x) => x.type === "timeseries")) {
    assert.ok((p.targets ?? []).length > 0, `${p.title} has queries`);
  }

  const custom = await renderWith(
    ["minimal.yaml"],
    [
      "grafanaDashboard.enabled=true",
      "grafanaDashboard.label=dashboards.example.com/grafana",
      "grafanaDashboard.labelValue=gatehouse",
      "grafanaDashboard.namespace=monitoring",
      "grafanaDashboard.annotations.grafana_folder=Gatehouse",
      "prometheusRule.alerts.pendingBacklogOld.thresholdSeconds=7200",
    ],
    { "slo.inbox.p95Seconds": 0.3, "slo.availability": 0.995 },
  );
  const cm2 = find(custom, "ConfigMap", "t-gatehouse-dashboard");
  assert.equal(cm2.metadata.labels?.["dashboards.example.com/grafana"], "gatehouse");
  assert.equal(cm2.metadata.labels?.grafana_dashboard, undefined);
  assert.equal((cm2.metadata as { namespace?: string }).namespace, "monitoring");
  assert.equal(cm2.metadata.annotations?.grafana_folder, "Gatehouse");
  const d2 = dashboardOf(custom);
  assert.equal(thresholdOf(d2, "Inbox p95 (GET /api/inbox)"), 0.3);
  assert.equal(thresholdOf(d2, "Availability (answered without a server error)"), 0.995);
  assert.equal(thresholdOf(d2, "Oldest pending approval"), 7200);
  assert.equal(thresholdOf(d2, "Observation append p99"), 0.025, "the others keep their defaults");
});

test("the PrometheusRule alerts on every SLO and operations signal, with thresholds, for and labels from values", async () => {
  const objects = await render(["minimal.yaml"], ON);
  const rule = find(objects, "PrometheusRule", "t-gatehouse");
  assert.equal(rule.apiVersion, "monitoring.coreos.com/v1");
  const byName = new Map(alerts(objects).map((a) => [a.alert as string, a]));
  assert.deepEqual([...byName.keys()].sort(), [
    "GatehouseApplyFailing",
    "GatehouseApplyOutcomeUnknown",
    "GatehouseApproveToAppliedSlow",
    "GatehouseExecuteCodeWarmSlow",
    "GatehouseGrpcErrorBudgetBurnFast",
    "GatehouseGrpcErrorBudgetBurnSlow",
    "GatehouseHttpErrorBudgetBurnFast",
    "GatehouseHttpErrorBudgetBurnSlow",
    "GatehouseInboxSlow",
    "GatehouseNoticeDeliverySlow",
    "GatehouseObservationAppendSlow",
    "GatehousePendingBacklogOld",
    "GatehouseSandboxAdmissionQueued",
    "GatehouseSandboxStartFailing",
    "GatehouseSandboxWarmPoolEmpty",
    "GatehouseTargetDown",
    "GatehouseTraceSpansDropped",
  ]);
  const inbox = byName.get("GatehouseInboxSlow")!;
  assert.match(inbox.expr, /histogram_quantile\(0\.95, .*route="\/api\/inbox", method="GET".*\) > 0\.5$/);
  assert.equal(inbox.for, "10m");
  assert.equal(byName.get("GatehouseHttpErrorBudgetBurnFast")?.labels?.severity, "critical");
  assert.match(byName.get("GatehouseHttpErrorBudgetBurnFast")!.expr, /14\.4 \* \(1 - 0\.999\)/);
  // Every expression selects the release's namespace.
  for (const [n, a] of byName) assert.match(a.expr, /namespace="gh"|ratio_rate/, n);

  // Each alert links its runbook section, and docs/alerts.md has it.
  const runbooks = readFileSync(join(REPO, "docs", "alerts.md"), "utf8");
  const anchors = new Set(
    [...runbooks.matchAll(/^#{2,4} (.+)$/gm)].map((m) =>
      (m[1] as string).toLowerCase().replace(/[^a-z0-9]+/g, ""),
    ),
  );
  for (const [n, a] of byName) {
    const url = a.annotations?.runbook_url ?? "";
    assert.ok(
      url.startsWith("https://github.com/gatehouse/gatehouse/blob/main/docs/alerts.md#"),
      `${n}: ${url}`,
    );
    assert.ok(
      anchors.has(url.split("#")[1] as string),
      `${n}: docs/alerts.md has a section ${url.split("#")[1]}`,
    );
    assert.ok(a.annotations?.summary && a.annotations.description, `${n} has a summary and a description`);
  }

  const custom = await renderWith(
    ["minimal.yaml"],
    [
      ...ON,
      "prometheusRule.alerts.inboxSlow.for=20m",
      "prometheusRule.alerts.inboxSlow.severity=page",
      "prometheusRule.alerts.traceSpansDropped.enabled=false",
      "prometheusRule.alertLabels.team=platform",
      "prometheusRule.labels.release=kube-prometheus-stack",
      'prometheusRule.selector=namespace="gh"\\, cluster="eu-1"',
    ],
    { "slo.inbox.p95Seconds": 0.3, "slo.availability": 0.99 },
  );
  const c = new Map(alerts(custom).map((a) => [a.alert as string, a]));
  assert.match(c.get("GatehouseInboxSlow")!.expr, /> 0\.3$/);
  assert.match(c.get("GatehouseInboxSlow")!.expr, /namespace="gh", cluster="eu-1"/);
  assert.equal(c.get("GatehouseInboxSlow")!.for, "20m");
  assert.deepEqual(c.get("GatehouseInboxSlow")!.labels, { severity: "page", team: "platform" });
  assert.match(c.get("GatehouseGrpcErrorBudgetBurnSlow")!.expr, /6 \* \(1 - 0\.99\)/);
  assert.equal(c.has("GatehouseTraceSpansDropped"), false, "a disabled alert is not rendered");
  assert.equal(
    find(custom, "PrometheusRule", "t-gatehouse").metadata.labels?.release,
    "kube-prometheus-stack",
  );
});

test("tracing.endpoint set: every service Deployment gets the standard OTEL_* env and egress to the collector; the sandbox runner only when asked", async () => {
  const objects = await render(EVERYTHING, TRACING);
  for (const c of ALL_COMPONENTS.filter((x) => x !== "sandbox-runner")) {
    assert.deepEqual(
      otelEnv(objects, c),
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel-collector.observability:4317",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_SERVICE_NAME: `gatehouse-${c}`,
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.1",
      },
      c,
    );
    assert.deepEqual(
      egress(objects, c).filter((r) => r.ports?.some((p) => p.port === 4317)),
      [{ ports: [{ port: 4317, protocol: "TCP" }] }],
      `${c}: egress to the collector's port`,
    );
  }
  // The runner's pod runs agent code and has no egress: tracing does not open one unless asked.
  assert.deepEqual(otelEnv(objects, "sandbox-runner"), {});
  assert.deepEqual(egress(objects, "sandbox-runner"), []);

  const runner = await render(EVERYTHING, [
    "tracing.endpoint=https://otel.example.com:4318/v1/traces",
    "tracing.protocol=http/protobuf",
    "tracing.sampler=always_on",
    "tracing.samplerArg=",
    "tracing.sandboxRunner=true",
    "tracing.resourceAttributes.deployment\\.environment=prod",
    "tracing.headers.existingSecret=otel-auth",
    "networkPolicy.tracing.to[0].ipBlock.cidr=10.0.5.0/24",
    "networkPolicy.tracing.sandboxRunnerCidrs={10.0.5.7/32}",
  ]);
  for (const c of ALL_COMPONENTS) {
    const env = otelEnv(runner, c);
    assert.equal(env.OTEL_EXPORTER_OTLP_ENDPOINT, "https://otel.example.com:4318/v1/traces", c);
    assert.equal(env.OTEL_EXPORTER_OTLP_PROTOCOL, "http/protobuf", c);
    assert.equal(env.OTEL_SERVICE_NAME, `gatehouse-${c}`, c);
    assert.equal(env.OTEL_TRACES_SAMPLER, "always_on", c);
    assert.equal(env.OTEL_TRACES_SAMPLER_ARG, undefined, `${c}: no sampler argument when it is ""`);
    assert.equal(env.OTEL_RESOURCE_ATTRIBUTES, "deployment.environment=prod", c);
    assert.deepEqual(
      env.OTEL_EXPORTER_OTLP_HEADERS,
      { secretKeyRef: { name: "otel-auth", key: "headers" } },
      c,
    );
    // The sandbox runner reaches the collector's address alone (networkPolicy.tracing.sandboxRunnerCidrs).
    const to = c === "sandbox-runner" ? "10.0.5.7/32" : "10.0.5.0/24";
    assert.deepEqual(
      egress(runner, c).filter((r) => r.ports?.some((p) => p.port === 4318)),
      [{ ports: [{ port: 4318, protocol: "TCP" }], to: [{ ipBlock: { cidr: to } }] }],
      c,
    );
  }
  assert.equal(egress(runner, "sandbox-runner").length, 1, "the runner's only egress is the collector");
});

/** Renders with the minimal values and `sets` (or `--set-json`s); asserts a refusal matching every pattern. */
async function refused(sets: string[] | Record<string, unknown>, ...patterns: RegExp[]): Promise<void> {
  const r = Array.isArray(sets)
    ? await template(["minimal.yaml"], sets)
    : await template(["minimal.yaml"], [], setJson(sets));
  assert.equal(r.ok, false, `expected a refusal of ${JSON.stringify(sets)}`);
  for (const p of patterns) assert.match(r.stderr, p);
}

test("bad monitoring and tracing values are refused naming the key", async () => {
  await refused(
    ["prometheusRule.alerts.inboxSlow.for=10 minutes"],
    /\/prometheusRule\/alerts\/inboxSlow\/for/,
  );
  await refused(["prometheusRule.alerts.inboxSlow.fo=10m"], /additional properties 'fo' not allowed/);
  await refused({ "slo.availability": 1.5 }, /\/slo\/availability/, /exclusiveMaximum|1\.5/);
  await refused({ "slo.inbox.p95Seconds": 0 }, /\/slo\/inbox\/p95Seconds/);
  // `--set` hands helm "0.3" as a string: refused, naming the key and the type it wants.
  await refused(["slo.inbox.p95Seconds=0.3"], /\/slo\/inbox\/p95Seconds/, /got string, want number/);
  await refused(["grafanaDashboard.label=not a label"], /\/grafanaDashboard\/label/);
  await refused(["prometheusRule.selector=namespace=gh"], /\/prometheusRule\/selector/);
  await refused(["tracing.protocol=thrift"], /\/tracing\/protocol/, /grpc/);
  await refused(["tracing.sampler=sometimes"], /\/tracing\/sampler/);
  await refused(
    ["tracing.endpoint=otel-collector:4317"],
    /tracing\.endpoint: "otel-collector:4317" is not http\(s\):\/\/host:port/,
  );
  await refused(["tracing.endpoint=http://otel-collector"], /tracing\.endpoint: .* with its port/);
  await refused(
    [...TRACING, "tracing.samplerArg=2"],
    /tracing\.samplerArg: "2" with sampler parentbased_traceidratio must be the share of traces kept, from 0 to 1/,
  );
  await refused([...TRACING, "networkPolicy.tracing.ports[0]=70000"], /\/networkPolicy\/tracing\/ports\/0/);
});
