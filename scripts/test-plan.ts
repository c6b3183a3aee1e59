/**
 * Which test units the test command runs, and in what order.
 *
 * A unit is a folder whose tests run as one `node --test` process: each workspace package with a
 * `test/` folder (its own `npm test`), each surface folder of `e2e/` (the system tests are grouped by
 * surface so they can run side by side), and `scripts/` (the set-up's own tests; not a package).
 * Units run longest first, using the times the last run recorded, so the long ones never start last.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One unit: its folder (relative to the repo root, "/"-separated) and how to run its tests. */
export interface TestUnit {
  /** e.g. "services/approval", "e2e/web", "scripts" */
  name: string;
  /** The workspace package it belongs to (a folder), or undefined for `scripts`. */
  packageDir: string | undefined;
  /** Working directory of the command, relative to the repo root. */
  cwd: string;
  /** argv of the command. */
  command: string[];
}

/** A workspace package: its folder, name and the workspace packages it depends on. */
export interface WorkspacePackage {
  dir: string;
  name: string;
  dependsOn: string[];
}

/** Folders whose tests are split into one unit per subfolder (the system tests, by surface). */
const SPLIT_BY_FOLDER = new Set(["e2e"]);
/** The node flags every package's `npm test` uses; the split units use them too. */
const NODE_TEST = ["node", "--no-node-snapshot", "--import", "tsx", "--test", "--test-concurrency=1"];

function testFiles(dir: string): string[] {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith(".test.ts"))
        .sort()
    : [];
}

function hasTests(dir: string): boolean {
  return testFiles(dir).length > 0;
}

/**
 * The workspace packages, from the root package.json's `workspaces` globs (only `dir` and `dir/*` forms,
 * the ones this repository uses).
 * @throws Error when a workspace glob has another form
 */
export function workspacePackages(root: string): WorkspacePackage[] {
  const globs: string[] = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).workspaces;
  const dirs: string[] = [];
  for (const g of globs) {
    if (g.endsWith("/*")) {
      const parent = g.slice(0, -2);
      for (const d of readdirSync(join(root, parent), { withFileTypes: true }))
        if (d.isDirectory() && existsSync(join(root, parent, d.name, "package.json")))
          dirs.push(`${parent}/${d.name}`);
    } else if (!g.includes("*")) {
      if (existsSync(join(root, g, "package.json"))) dirs.push(g);
    } else throw new Error(`test-plan: workspace glob "${g}" is not of the form "dir" or "dir/*"`);
  }
  const pkgs = dirs.map((dir) => {
    const json = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
    return { dir, name: json.name as string, deps: { ...json.dependencies, ...json.devDependencies } };
  });
  const names = new Set(pkgs.map((p) => p.name));
  return pkgs.map((p) => ({
    dir: p.dir,
    name: p.name,
    dependsOn: Object.keys(p.deps).filter((d) => names.has(d)),
  }));
}

/** Every test unit of the repository, in folder order. */
export function allUnits(root: string): TestUnit[] {
  const units: TestUnit[] = [];
  if (hasTests(join(root, "scripts/test")))
    units.push({
      name: "scripts",
      packageDir: undefined,
      cwd: "scripts",
      command: [...NODE_TEST.slice(0, 5), ...testFiles(join(root, "scripts/test")).map((f) => `test/${f}`)],
    });
  for (const p of workspacePackages(root)) {
    if (SPLIT_BY_FOLDER.has(p.dir)) {
      for (const d of readdirSync(join(root, p.dir), { withFileTypes: true }).sort((a, b) =>
        a.name.localeCompare(b.name),
      ))
        if (d.isDirectory() && d.name !== "node_modules" && hasTests(join(root, p.dir, d.name)))
          units.push({
            name: `${p.dir}/${d.name}`,
            packageDir: p.dir,
            cwd: p.dir,
            command: [...NODE_TEST, ...testFiles(join(root, p.dir, d.name)).map((f) => `${d.name}/${f}`)],
          });
      continue;
    }
    const dir = join(root, p.dir);
    const testable = readdirSync(dir, { withFileTypes: true }).some(
      (d) => d.isDirectory() && d.name !== "node_modules" && hasTests(join(dir, d.name)),
    );
    if (testable)
      units.push({ name: p.dir, packageDir: p.dir, cwd: p.dir, command: ["npm", "test", "--silent"] });
  }
  return units;
}

/**
 * The units the person asked for: each argument is a unit ("e2e/web"), a package folder ("e2e",
 * "services/approval", selecting all its units) or a package name ("@gatehouse/approval").
 * @throws Error naming the argument and the known units when one matches nothing
 */
export function selectUnits(units: TestUnit[], packages: WorkspacePackage[], args: string[]): TestUnit[] {
  const chosen = new Set<TestUnit>();
  for (const raw of args) {
    const arg = raw.replace(/\/+$/, "").replace(/^\.\//, "");
    const byName = packages.find((p) => p.name === arg)?.dir;
    const matches = units.filter(
      (u) => u.name === arg || u.packageDir === arg || (byName && u.packageDir === byName),
    );
    if (matches.length === 0)
      throw new Error(
        `test: "${raw}" is not a test unit, package folder or package name. Units: ${units.map((u) => u.name).join(", ")}`,
      );
    for (const m of matches) chosen.add(m);
  }
  return units.filter((u) => chosen.has(u));
}

/**
 * The units a set of changed files touches: the unit (or package) holding each file, and every package
 * that depends on a touched package, directly or not. A change outside every package (root config, the
 * lock file, proto sources feed packages/proto) touches what it feeds; an unknown root file touches all.
 * @param files changed paths relative to the repo root, "/"-separated
 */
export function unitsForChanges(
  units: TestUnit[],
  packages: WorkspacePackage[],
  files: string[],
): TestUnit[] {
  const touchedPackages = new Set<string>();
  const touchedUnits = new Set<string>();
  let everything = false;
  for (const f of files) {
    if (f.startsWith("scripts/")) {
      touchedUnits.add("scripts");
      continue;
    }
    if (f.startsWith("proto/")) {
      touchedPackages.add("packages/proto");
      continue;
    }
    const pkg = packages
      .filter((p) => f.startsWith(`${p.dir}/`))
      .sort((a, b) => b.dir.length - a.dir.length)[0];
    if (pkg) {
      const unit = units.find(
        (u) => u.packageDir === pkg.dir && u.name !== pkg.dir && f.startsWith(`${u.name}/`),
      );
      // A file in one e2e surface touches that surface; a shared file (e2e/support) touches them all.
      if (unit) touchedUnits.add(unit.name);
      else touchedPackages.add(pkg.dir);
      continue;
    }
    // Documentation changes no test; any other root file (package-lock.json, turbo.json, tsconfig) may change all.
    if (f.endsWith(".md") || f.startsWith("docs/")) continue;
    everything = true;
  }
  if (everything) return units;
  const byName = new Map(packages.map((p) => [p.name, p.dir]));
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of packages)
      if (!touchedPackages.has(p.dir) && p.dependsOn.some((d) => touchedPackages.has(byName.get(d) ?? ""))) {
        touchedPackages.add(p.dir);
        grew = true;
      }
  }
  return units.filter((u) => touchedUnits.has(u.name) || (u.packageDir && touchedPackages.has(u.packageDir)));
}

/**
 * Orders units longest first by the recorded times (seconds; a unit never timed counts as `unknownSeconds`,
 * so a new unit starts early rather than last), ties by name.
 */
export function longestFirst<T extends { name: string }>(
  units: T[],
  times: Record<string, number>,
  unknownSeconds = 120,
): T[] {
  const t = (u: T) => times[u.name] ?? unknownSeconds;
  return [...units].sort((a, b) => t(b) - t(a) || a.name.localeCompare(b.name));
}
