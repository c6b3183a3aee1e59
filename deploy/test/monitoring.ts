/**
 * Test helpers for the chart's monitoring objects: the promtool binary (built by
 * scripts/build-promtool.sh into `<cache>/promtool/bin/promtool`, built here too when missing so the
 * tests never skip), the rendered PrometheusRule and dashboard, and the metric names their PromQL reads.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./cluster.ts";
import { type CommandResult, command, find, type K8sObject } from "./helm.ts";

/** Where scripts/build-promtool.sh puts promtool (it prints the path with --print-path). */
export async function promtoolBinary(): Promise<string> {
  const script = join(REPO, "scripts", "build-promtool.sh");
  const where = await command("bash", [script, "--print-path"]);
  if (!where.ok) throw new Error(`build-promtool.sh --print-path failed: ${where.stderr}`);
  const bin = where.stdout.trim();
  if (!existsSync(bin) || !(await command("bash", [script, "--check"])).ok) {
    // npm run setup builds it; a checkout that skipped setup builds it now (minutes), never skips.
    const built = await command("bash", [script], { timeoutMs: 60 * 60_000 });
    if (!built.ok) throw new Error(`building promtool failed:\n${built.stdout}\n${built.stderr}`);
  }
  return bin;
}

/** `promtool <args>` (never throws on a non-zero exit). */
export async function promtool(args: string[], opts: { cwd?: string } = {}): Promise<CommandResult> {
  return command(await promtoolBinary(), args, opts);
}

/** One rule of a PrometheusRule group. */
export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The rendered PrometheusRule's groups (`spec.groups`). */
export function ruleGroups(objects: K8sObject[], name = "t-gatehouse"): { name: string; rules: Rule[] }[] {
  return find(objects, "PrometheusRule", name).spec.groups;
}

/** Every alerting rule of the rendered PrometheusRule. */
export function alerts(objects: K8sObject[]): Rule[] {
  return ruleGroups(objects).flatMap((g) => g.rules.filter((r) => r.alert));
}

/** A Grafana panel as the dashboard JSON has it (only what the tests read). */
export interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
  fieldConfig?: { defaults: { thresholds?: { steps: { value: number | null }[] } } };
}

/** The dashboard JSON the ConfigMap carries, parsed. */
export function dashboardOf(objects: K8sObject[]): { panels: Panel[]; templating: { list: unknown[] } } {
  const cm = find(objects, "ConfigMap", "t-gatehouse-dashboard");
  return JSON.parse((cm.data as Record<string, string>)["gatehouse-slo.json"] as string);
}

/** deploy/helm/gatehouse/dashboards/gatehouse-slo.json as committed. */
export function dashboardFile(): { panels: Panel[] } {
  return JSON.parse(readFileSync(join(REPO, "deploy/helm/gatehouse/dashboards/gatehouse-slo.json"), "utf8"));
}

/**
 * A dashboard query made concrete for promtool: Grafana's `$__rate_interval` becomes 5m and the
 * `$namespace` variable "gh".
 */
export function concreteExpr(expr: string): string {
  return expr.replaceAll("$__rate_interval", "5m").replaceAll("$namespace", "gh");
}

/** Every PromQL expression of the dashboard's panels. */
export function dashboardExprs(dashboard: { panels: Panel[] }): string[] {
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}

/**
 * The metric names a PromQL expression reads: each identifier right before `{` (our expressions select
 * with braces), and each identifier of our prefixes (`gatehouse`, `gatekeeper`) outside braces and
 * strings (recorded series such as `gatehouse:…:ratio_rate1h`, or a bare selector).
 */
export function metricNames(expr: string): string[] {
  const names = new Set<string>();
  for (const m of expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{/g)) names.add(m[1] as string);
  const outside = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\{[^}]*\}/g, "{}");
  for (const m of outside.matchAll(/(?<![a-zA-Z0-9_:])((?:gatehouse|gatekeeper)[a-zA-Z0-9_:]*)/g)) {
    names.add(m[1] as string);
  }
  return [...names];
}
