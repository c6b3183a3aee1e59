/**
 * Every metric the Grafana dashboard and the PrometheusRule read is one the services really export: the
 * chart's services run as their own processes (metrics-stack.ts), their real `/metrics` is scraped, and
 * each name in the PromQL is looked up there — so renaming a metric in a service fails this test.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { render } from "./helm.ts";
import { type MetricsStack, metricFamilies, seriesNames, startMetricsStack } from "./metrics-stack.ts";
import { dashboardExprs, dashboardFile, metricNames, ruleGroups } from "./monitoring.ts";

/** Series Prometheus makes itself, not the services. */
const PROMETHEUS_OWN = new Set(["up"]);

let stack: MetricsStack | undefined;
/** series name → the components exporting it. */
const exported = new Map<string, Set<string>>();

before(async () => {
  stack = await startMetricsStack();
  for (const t of stack.targets) {
    const res = await fetch(t.metricsUrl, { signal: AbortSignal.timeout(10_000) });
    assert.equal(res.status, 200, `${t.component} /metrics`);
    for (const [name, type] of metricFamilies(await res.text())) {
      for (const s of seriesNames(name, type)) {
        if (!exported.has(s)) exported.set(s, new Set());
        exported.get(s)?.add(t.component);
      }
    }
  }
});

after(async () => {
  await stack?.close();
});

/** The names `exprs` read that no service exports (recorded `a:b:c` names must be recorded by `records`). */
function unknownNames(exprs: string[], records: Set<string>): string[] {
  const missing = new Set<string>();
  for (const expr of exprs) {
    for (const n of metricNames(expr)) {
      if (n.includes(":")) {
        if (!records.has(n)) missing.add(`${n} (not recorded by any rule)`);
      } else if (!exported.has(n) && !PROMETHEUS_OWN.has(n)) {
        missing.add(n);
      }
    }
  }
  return [...missing].sort();
}

test("every service's /metrics answers, and the SLO metrics are exported where the dashboard expects them", () => {
  assert.equal(stack?.targets.length, 8);
  const from = (series: string) => [...(exported.get(series) ?? [])];
  assert.deepEqual(from("gatehouse_approval_rpc_seconds_bucket"), ["approval"]);
  assert.deepEqual(from("gatehouse_approval_oldest_pending_seconds"), ["approval"]);
  assert.deepEqual(from("gatehouse_sandbox_execution_seconds_bucket"), ["sandbox-runner"]);
  assert.deepEqual(from("gatehouse_worker_approval_to_outcome_seconds_bucket"), ["worker"]);
  assert.deepEqual(from("gatehouse_gateway_request_seconds_bucket"), ["gateway"]);
  assert.deepEqual(from("gatehouse_gateway_notice_delivery_seconds_bucket"), ["gateway"]);
  // Every service counts its dropped trace spans (tracing is on in the metrics stack, towards a dead endpoint).
  for (const t of stack?.targets ?? []) {
    assert.ok(
      exported.get("gatehouse_tracing_spans_dropped_total")?.has(t.component),
      `${t.component} exports gatehouse_tracing_spans_dropped_total`,
    );
  }
  for (const c of ["mcp", "git", "postgres"])
    assert.deepEqual(from(`gatekeeper_${c}_rpcs_total`), [`gatekeeper-${c}`]);
});

test("every metric the dashboard reads is exported by a running service", () => {
  const exprs = dashboardExprs(dashboardFile());
  assert.deepEqual(unknownNames(exprs, new Set()), []);
});

test("every metric the PrometheusRule reads is exported by a running service or recorded by the rule itself", async () => {
  const groups = ruleGroups(await render(["minimal.yaml"], ["prometheusRule.enabled=true"]));
  const rules = groups.flatMap((g) => g.rules);
  const records = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])));
  assert.deepEqual(
    unknownNames(
      rules.map((r) => r.expr),
      records,
    ),
    [],
  );
});

test("a metric the services do not export is caught (a renamed metric fails the comparison)", () => {
  assert.deepEqual(
    unknownNames(
      ['histogram_quantile(0.99, sum by (le) (rate(gatehouse_inbox_seconds_bucket{namespace="gh"}[5m])))'],
      new Set(),
    ),
    ["gatehouse_inbox_seconds_bucket"],
  );
  assert.deepEqual(unknownNames(["gatehouse:never_recorded:ratio > 0"], new Set()), [
    "gatehouse:never_recorded:ratio (not recorded by any rule)",
  ]);
});
