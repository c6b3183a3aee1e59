/**
 * The repository's own scripts: every one that runs turbo turns its anonymous telemetry off
 * (TURBO_TELEMETRY_DISABLED=1), so building or testing Gatehouse sends nothing anywhere.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");
const WORKSPACES = ["packages", "services", "apps"].flatMap((d) =>
  readdirSync(join(ROOT, d)).map((n) => join(d, n)),
);

/** Lines that run turbo (comments and echoed text aside). */
function turboCommands(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.replace(/#.*$/, "").replace(/"[^"]*"/g, '""'))
    .filter((l) => /\bturbo\b/.test(l));
}

test("every package.json script that runs turbo sets TURBO_TELEMETRY_DISABLED=1", () => {
  const problems: string[] = [];
  for (const dir of [".", ...WORKSPACES, "sandbox-runner", "web", "e2e", "bench", "deploy", "loadtests"]) {
    let pkg: { scripts?: Record<string, string> };
    try {
      pkg = JSON.parse(readFileSync(join(ROOT, dir, "package.json"), "utf8"));
    } catch {
      continue;
    }
    for (const [name, script] of Object.entries(pkg.scripts ?? {})) {
      if (/\bturbo\b/.test(script) && !/\bTURBO_TELEMETRY_DISABLED=1 /.test(script))
        problems.push(`${dir}/package.json "${name}": ${script}`);
    }
  }
  assert.deepEqual(problems, []);
});

test("every shell script that runs turbo, and CI's entry, export TURBO_TELEMETRY_DISABLED=1", () => {
  const files = [
    ...readdirSync(join(ROOT, "scripts"))
      .filter((f) => f.endsWith(".sh"))
      .map((f) => join("scripts", f)),
    ".ci/run",
  ];
  const problems: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), "utf8");
    const runsTurbo = turboCommands(text).length > 0 || file === ".ci/run";
    if (runsTurbo && !/^export TURBO_TELEMETRY_DISABLED=1$/m.test(text)) problems.push(file);
  }
  assert.ok(files.includes("scripts/test.sh"));
  assert.deepEqual(problems, []);
});
