/**
 * The dependency direction, checked on every folder with code by dependency-cruiser against the
 * rules in .dependency-cruiser.cjs: libraries (packages/*) ← services/*, sandbox-runner, web ←
 * apps/* ← e2e, bench, deploy, loadtests, scripts, examples. No exceptions: no library imports a
 * service or an app, no service imports another, no relative import crosses into another workspace,
 * no import circles. The rules themselves are tested on a planted tree so a check that can no longer
 * fail is noticed.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");
const CONFIG = join(ROOT, ".dependency-cruiser.cjs");
const DEPCRUISE = join(ROOT, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs");
/** Every top-level folder that holds code, each checked. */
const CHECKED = [
  "packages",
  "services",
  "sandbox-runner",
  "web",
  "apps",
  "e2e",
  "bench",
  "deploy",
  "loadtests",
  "scripts",
  "examples",
];
/** Top-level folders with no TypeScript of their own. */
const NO_CODE = new Set([".git", ".ci", ".turbo", "node_modules", "docs", "proto"]);

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: { name: string }[];
}

/** Runs dependency-cruiser in `cwd` over `dirs` and returns each rule violation as one line. */
function violations(cwd: string, dirs: string[]): string[] {
  const run = spawnSync(
    process.execPath,
    [DEPCRUISE, "--config", CONFIG, "--output-type", "json", "--no-progress", ...dirs],
    { cwd, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 },
  );
  assert.ok(run.stdout.trim().startsWith("{"), `dependency-cruiser did not report: ${run.stderr}`);
  const report = JSON.parse(run.stdout) as { summary: { violations: Violation[] } };
  return report.summary.violations.map((v) =>
    v.cycle
      ? `${v.rule.name}: ${v.from} → ${v.cycle.map((c) => c.name).join(" → ")}`
      : `${v.rule.name}: ${v.from} → ${v.to}`,
  );
}

function hasCode(dir: string): boolean {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "dist") continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory() ? hasCode(p) : /\.(ts|tsx|mts|js|mjs|cjs)$/.test(name)) return true;
  }
  return false;
}

test("every folder with code is checked: a new top-level folder is added to the rules, never left out", () => {
  const unchecked = readdirSync(ROOT).filter(
    (name) =>
      statSync(join(ROOT, name)).isDirectory() &&
      !NO_CODE.has(name) &&
      !CHECKED.includes(name) &&
      hasCode(join(ROOT, name)),
  );
  assert.deepEqual(unchecked, [], "add these folders to CHECKED and a layer in .dependency-cruiser.cjs");
});

test("the repository keeps the import rules: no upward import, no service importing another, no cross-workspace relative import, no circle", () => {
  assert.deepEqual(violations(ROOT, CHECKED), []);
});

plantedTreeTests();

/** A throwaway tree shaped like the repository, with one planted violation per test. */
function plantedTreeTests(): void {
  const base = mkdtempSync(join(tmpdir(), "gatehouse-architecture-"));
  after(() => rmSync(base, { recursive: true, force: true }));
  let n = 0;

  function tree(files: Record<string, string>): string {
    const dir = join(base, String(n++));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    // Two workspaces reachable by package name, as npm links them.
    write(
      "packages/lib/package.json",
      JSON.stringify({ name: "@gatehouse/lib", exports: { ".": "./src/index.ts" } }),
    );
    write("packages/lib/src/index.ts", "export const lib = 1;\n");
    write(
      "services/svc/package.json",
      JSON.stringify({ name: "@gatehouse/svc", exports: { ".": "./src/index.ts" } }),
    );
    write("services/svc/src/index.ts", 'import { lib } from "@gatehouse/lib";\nexport const svc = lib;\n');
    write("services/other/src/index.ts", "export const other = 2;\n");
    mkdirSync(join(dir, "node_modules/@gatehouse"), { recursive: true });
    symlinkSync("../../packages/lib", join(dir, "node_modules/@gatehouse/lib"));
    symlinkSync("../../services/svc", join(dir, "node_modules/@gatehouse/svc"));
    for (const [path, text] of Object.entries(files)) write(path, text);
    return dir;
  }

  test("the rules pass a planted tree that keeps them (the check below is not failing for another reason)", () => {
    assert.deepEqual(violations(tree({}), ["packages", "services"]), []);
  });

  test("a planted upward import (a library importing a service by package name) fails the check", () => {
    const dir = tree({
      "packages/lib/src/up.ts": 'import { svc } from "@gatehouse/svc";\nexport const up = svc;\n',
    });
    assert.deepEqual(violations(dir, ["packages", "services"]), [
      "library-imports-upward: packages/lib/src/up.ts → services/svc/src/index.ts",
    ]);
  });

  test("a planted relative import into another workspace fails the check", () => {
    const dir = tree({
      "services/svc/src/reach.ts":
        'import { other } from "../../other/src/index.ts";\nexport const reach = other;\n',
    });
    assert.deepEqual(violations(dir, ["packages", "services"]).sort(), [
      "relative-import-into-another-workspace: services/svc/src/reach.ts → services/other/src/index.ts",
      "service-imports-another-service: services/svc/src/reach.ts → services/other/src/index.ts",
    ]);
  });

  test("a planted import circle fails the check, naming the files on it", () => {
    const dir = tree({
      "packages/lib/src/a.ts": 'import { b } from "./b.ts";\nexport const a = () => b;\n',
      "packages/lib/src/b.ts": 'import type { a } from "./a.ts";\nexport const b: typeof a | 0 = 0;\n',
    });
    assert.deepEqual(violations(dir, ["packages", "services"]), [
      "no-circular: packages/lib/src/a.ts → packages/lib/src/b.ts → packages/lib/src/a.ts",
    ]);
  });
}
