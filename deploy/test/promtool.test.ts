/**
 * The chart's PrometheusRule and Grafana dashboard checked by Prometheus's own promtool (built from the
 * Go module proxy by scripts/build-promtool.sh): `promtool check rules` on the rendered rule groups,
 * `promtool test rules` showing each alert fires on a bad series and stays quiet on a good one
 * (test/rules/alerts.test.yaml), and every dashboard query parsed as a recording rule.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { render } from "./helm.ts";
import {
  concreteExpr,
  dashboardExprs,
  dashboardFile,
  dashboardOf,
  promtool,
  ruleGroups,
} from "./monitoring.ts";

const dir = mkdtempSync(join(tmpdir(), "gatehouse-promtool-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `groups` as a Prometheus rule file in the temp dir; returns its path. */
function ruleFile(file: string, groups: unknown): string {
  const path = join(dir, file);
  writeFileSync(path, stringify({ groups }));
  return path;
}

const ON = ["prometheusRule.enabled=true", "grafanaDashboard.enabled=true"];

test("promtool check rules accepts the rendered PrometheusRule, and refuses it once an expression is broken", async () => {
  const objects = await render(["minimal.yaml"], ON);
  const groups = ruleGroups(objects);
  const checked = await promtool(["check", "rules", ruleFile("rules.yaml", groups)]);
  assert.ok(checked.ok, checked.stdout + checked.stderr);
  const rules = groups.reduce((n, g) => n + g.rules.length, 0);
  assert.match(checked.stdout, new RegExp(`SUCCESS: ${rules} rules found`));
  // The check is real: one unbalanced parenthesis in one alert is refused, naming the rule's expression.
  const broken = structuredClone(groups);
  const first = broken[1]?.rules[0];
  assert.ok(first);
  first.expr = `${first.expr})`;
  const bad = await promtool(["check", "rules", ruleFile("broken.yaml", broken)]);
  assert.equal(bad.ok, false);
  assert.match(bad.stdout + bad.stderr, /parse error|unexpected/);
});

test("promtool check rules accepts the PrometheusRule with every alert's values changed", async () => {
  const objects = await render(
    ["minimal.yaml"],
    [
      ...ON,
      "prometheusRule.alerts.applyOutcomeUnknown.for=1h30m",
      "prometheusRule.alerts.pendingBacklogOld.thresholdSeconds=3600",
      "prometheusRule.alertLabels.team=platform",
      'prometheusRule.selector=namespace=~"gh|gh-2"',
    ],
  );
  const checked = await promtool(["check", "rules", ruleFile("custom.yaml", ruleGroups(objects))]);
  assert.ok(checked.ok, checked.stdout + checked.stderr);
});

test("promtool test rules: each alert fires on a bad series and stays quiet on a good one", async () => {
  const objects = await render(["minimal.yaml"], ON);
  // Annotations are checked by `check rules` above; unit tests compare labels only.
  const groups = ruleGroups(objects).map((g) => ({
    ...g,
    rules: g.rules.map(({ annotations: _, ...r }) => r),
  }));
  ruleFile("rules.yaml", groups);
  const tests = join(dir, "alerts.test.yaml");
  copyFileSync(join(dirname(fileURLToPath(import.meta.url)), "rules", "alerts.test.yaml"), tests);
  const r = await promtool(["test", "rules", tests], { cwd: dir });
  assert.ok(r.ok, r.stdout + r.stderr);
  assert.match(r.stdout, /SUCCESS/);
  // Every alert the chart defines is exercised by the unit tests.
  const tested = new Set(
    [...(await import("node:fs")).readFileSync(tests, "utf8").matchAll(/alertname: (\w+)/g)].map((m) => m[1]),
  );
  for (const g of groups) {
    for (const rule of g.rules)
      if (rule.alert) assert.ok(tested.has(rule.alert), `${rule.alert} has unit tests`);
  }
});

test("promtool test rules fails when an alert's threshold moves (the unit tests can fail)", async () => {
  // A 5 s inbox objective: the "inbox between 1 and 2.5 s" series no longer breaks it.
  const objects = await render(["minimal.yaml"], [...ON, "slo.inbox.p95Seconds=5"]);
  const groups = ruleGroups(objects).map((g) => ({
    ...g,
    rules: g.rules.map(({ annotations: _, ...r }) => r),
  }));
  ruleFile("rules.yaml", groups);
  const tests = join(dir, "alerts.test.yaml");
  copyFileSync(join(dirname(fileURLToPath(import.meta.url)), "rules", "alerts.test.yaml"), tests);
  const r = await promtool(["test", "rules", tests, "--run", "inbox"], { cwd: dir });
  assert.equal(r.ok, false, r.stdout);
  assert.match(r.stdout + r.stderr, /GatehouseInboxSlow/);
});

test("every query of the dashboard parses (promtool check rules, each as a recording rule)", async () => {
  const exprs = dashboardExprs(dashboardFile());
  assert.ok(exprs.length >= 30, `${exprs.length} queries`);
  const rules = exprs.map((expr, i) => ({
    record: `gatehouse_dashboard:query_${i}`,
    expr: concreteExpr(expr),
  }));
  const checked = await promtool([
    "check",
    "rules",
    ruleFile("dashboard.yaml", [{ name: "dashboard", rules }]),
  ]);
  assert.ok(checked.ok, checked.stdout + checked.stderr);
  assert.match(checked.stdout, new RegExp(`SUCCESS: ${rules.length} rules found`));
  // The rendered ConfigMap carries the same queries.
  const objects = await render(["minimal.yaml"], ON);
  assert.deepEqual(dashboardExprs(dashboardOf(objects)), exprs);
});
