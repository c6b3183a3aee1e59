/**
 * Test helpers: the helm and kubectl binaries, and rendering the chart with values files.
 *
 * helm comes from the cluster cache (`$GATEHOUSE_CACHE_DIR` or `$XDG_CACHE_HOME/gatehouse` or
 * `~/.cache/gatehouse`, then `cluster/bin/helm`, built by `npm run cluster -- build`), else from PATH.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";
import { SERVICE_COMPONENTS } from "../images/spec.ts";

const run = promisify(execFile);

/** deploy/helm/gatehouse, absolute. */
export const CHART = join(dirname(fileURLToPath(import.meta.url)), "..", "helm", "gatehouse");
/** deploy/test/values/<name>, absolute. */
export const valuesFile = (name: string): string =>
  join(dirname(fileURLToPath(import.meta.url)), "values", name);

/** The Kubernetes version `helm template` renders for (the local cluster's). */
export const KUBE_VERSION = "1.34.4";

/** Components the chart deploys only when their values turn them on (gatekeeperPostgres.enabled; off by default). */
export const OPTIONAL_COMPONENTS: readonly string[] = ["gatekeeper-postgres"];

/**
 * Every component the chart deploys with its default values: the services image's components but the
 * optional ones, then the sandbox runner.
 */
export const COMPONENTS: readonly string[] = [
  ...SERVICE_COMPONENTS.filter((c) => !OPTIONAL_COMPONENTS.includes(c)),
  "sandbox-runner",
];

/** Every component the chart can deploy: {@link COMPONENTS} and the optional ones. */
export const ALL_COMPONENTS: readonly string[] = [...COMPONENTS, ...OPTIONAL_COMPONENTS];

/** The cluster cache folder agreed with deploy/cluster (binaries in bin/, runtime state in run/). */
export function clusterCache(): string {
  const base =
    process.env.GATEHOUSE_CACHE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "gatehouse");
  return join(base, "cluster");
}

/**
 * The helm binary: `<cluster cache>/bin/helm`, else `helm` on PATH.
 * @throws Error saying how to build it when neither exists.
 */
export function helmBinary(): string {
  const cached = join(clusterCache(), "bin", "helm");
  if (existsSync(cached)) return cached;
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir && existsSync(join(dir, "helm"))) return join(dir, "helm");
  }
  throw new Error(`helm not found at ${cached} nor on PATH: build it with \`npm run cluster -- build\``);
}

/** The outcome of a helm (or kubectl) command: exit code 0 or not, with both streams. */
export interface CommandResult {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** Runs `file args…` (never throws on a non-zero exit: ok=false). */
export async function command(
  file: string,
  args: string[],
  opts: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {},
): Promise<CommandResult> {
  const child = run(file, args, {
    env: { ...process.env, ...opts.env },
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
    maxBuffer: 64 * 1024 * 1024,
    timeout: opts.timeoutMs ?? 120_000,
  });
  if (opts.input !== undefined) {
    child.child.stdin?.end(opts.input);
  }
  try {
    const { stdout, stderr } = await child;
    return { ok: true, stdout, stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return { ok: false, stdout: e.stdout ?? "", stderr: e.stderr ?? e.message };
  }
}

/** `helm <args>`. */
export function helm(args: string[], opts: Parameters<typeof command>[2] = {}): Promise<CommandResult> {
  return command(helmBinary(), args, opts);
}

/**
 * `helm template t <chart> --kube-version 1.34.4 -f <each file> --set <each>`: files are names under
 * test/values/ or absolute paths.
 */
export function template(files: string[], sets: string[] = [], extra: string[] = []): Promise<CommandResult> {
  const args = ["template", "t", CHART, "--kube-version", KUBE_VERSION, "--namespace", "gh"];
  for (const f of files) args.push("-f", f.startsWith("/") ? f : valuesFile(f));
  for (const s of sets) args.push("--set", s);
  return helm([...args, ...extra]);
}

/** A Kubernetes object as rendered (only the fields the tests read are typed). */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  // biome-ignore lint/suspicious/noExplicitAny: rendered manifests are read field by field
  spec?: any;
  [key: string]: unknown;
}

/** Parses a multi-document manifest stream, dropping empty documents. */
export function parseManifests(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null && typeof o === "object");
}

/** Renders the chart (must succeed) and parses it. */
export async function render(files: string[], sets: string[] = []): Promise<K8sObject[]> {
  const r = await template(files, sets);
  if (!r.ok) throw new Error(`helm template failed: ${r.stderr}`);
  return parseManifests(r.stdout);
}

/** The one object of `kind` named `name` (throws naming what exists when absent). */
export function find(objects: K8sObject[], kind: string, name: string): K8sObject {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) {
    const names = objects.filter((x) => x.kind === kind).map((x) => x.metadata.name);
    throw new Error(`no ${kind} ${name}; rendered: ${names.join(", ")}`);
  }
  return o;
}

/** A container's env entry by name (the whole EnvVar: value or valueFrom). */
export function envVar(objects: K8sObject[], c: string, key: string) {
  const env = find(objects, "Deployment", `t-gatehouse-${c}`).spec.template.spec.containers[0].env as {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } };
  }[];
  return env.find((e) => e.name === key);
}

/** A Deployment's container env (name -> value) and its volumes by mount path. */
export function podFiles(objects: K8sObject[], c: string) {
  const pod = find(objects, "Deployment", `t-gatehouse-${c}`).spec.template.spec;
  const container = pod.containers[0];
  const env: Record<string, string> = Object.fromEntries(
    container.env.map((e: { name: string; value?: string }) => [e.name, e.value]),
  );
  const mounts = container.volumeMounts as { name: string; mountPath: string; readOnly?: boolean }[];
  const volumes = pod.volumes as {
    name: string;
    secret?: { secretName: string; items: { key: string; path: string }[] };
  }[];
  /** The Secret and key a mounted file comes from (undefined: no such file is mounted). */
  const source = (file: string) => {
    const m = mounts.find((x) => file.startsWith(`${x.mountPath}/`));
    const v = m && volumes.find((x) => x.name === m.name);
    const item = v?.secret?.items.find((i) => `${m?.mountPath}/${i.path}` === file);
    return item && v?.secret
      ? { secret: v.secret.secretName, key: item.key, readOnly: m?.readOnly }
      : undefined;
  };
  return { env, source, volumes: volumes.map((v) => v.name) };
}

/** The components a policy's rules name as peers (by app.kubernetes.io/component), sorted. */
export function peers(rules: { from?: unknown[]; to?: unknown[] }[], side: "from" | "to"): string[] {
  const out = new Set<string>();
  for (const rule of rules) {
    for (const p of (rule[side] ?? []) as { podSelector?: { matchLabels?: Record<string, string> } }[]) {
      const c = p.podSelector?.matchLabels?.["app.kubernetes.io/component"];
      if (c && ALL_COMPONENTS.includes(c)) out.add(c);
    }
  }
  return [...out].sort();
}
