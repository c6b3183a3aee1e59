/**
 * scripts/test-plan.ts: which units exist (packages with tests, one per e2e surface, scripts), which a
 * person's arguments select, which a change touches (with the packages that depend on it), and the
 * longest-first order. On a small fixture repository, then on this one.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, test } from "node:test";
import { allUnits, longestFirst, selectUnits, unitsForChanges, workspacePackages } from "../test-plan.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const fixture = mkdtempSync(join(tmpdir(), "test-plan-"));
after(() => rmSync(fixture, { recursive: true, force: true }));

function write(path: string, text = ""): void {
  mkdirSync(join(fixture, path, ".."), { recursive: true });
  writeFileSync(join(fixture, path), text);
}
const pkg = (name: string, deps: Record<string, string> = {}) => JSON.stringify({ name, dependencies: deps });
write("package.json", JSON.stringify({ workspaces: ["packages/*", "services/*", "e2e"] }));
write("packages/core/package.json", pkg("@x/core"));
write("packages/core/test/core.test.ts");
write("packages/untested/package.json", pkg("@x/untested"));
write("services/api/package.json", pkg("@x/api", { "@x/core": "*" }));
write("services/api/test/api.test.ts");
write("services/api/test/escape/deep.test.ts");
write("e2e/package.json", pkg("@x/e2e", { "@x/api": "*" }));
write("e2e/web/web.test.ts");
write("e2e/cli/a.test.ts");
write("e2e/cli/b.test.ts");
write("e2e/support/harness.ts");
write("scripts/test/setup.test.ts");

const units = allUnits(fixture);
const packages = workspacePackages(fixture);
const names = (us: { name: string }[]) => us.map((u) => u.name);

test("units: scripts, each package with tests (its npm test), one per e2e surface with its files", () => {
  assert.deepEqual(names(units), ["scripts", "packages/core", "services/api", "e2e/cli", "e2e/web"]);
  assert.deepEqual(units[2]?.command, ["npm", "test", "--silent"]);
  const cli = units.find((u) => u.name === "e2e/cli");
  assert.equal(cli?.cwd, "e2e");
  assert.deepEqual(cli?.command.slice(-2), ["cli/a.test.ts", "cli/b.test.ts"]);
  assert.deepEqual(units[0]?.command.at(-1), "test/setup.test.ts");
});

test("a selection by unit, package folder or package name; a wrong one is refused naming the units", () => {
  assert.deepEqual(names(selectUnits(units, packages, ["e2e/web"])), ["e2e/web"]);
  assert.deepEqual(names(selectUnits(units, packages, ["e2e/", "@x/core"])), [
    "packages/core",
    "e2e/cli",
    "e2e/web",
  ]);
  assert.throws(
    () => selectUnits(units, packages, ["servics/api"]),
    /"servics\/api" is not a test unit, package folder or package name\. Units: scripts, packages\/core/,
  );
});

test("a change touches its unit and every package depending on it; docs touch nothing; a root file all", () => {
  assert.deepEqual(names(unitsForChanges(units, packages, ["packages/core/src/a.ts"])), [
    "packages/core",
    "services/api",
    "e2e/cli",
    "e2e/web",
  ]);
  assert.deepEqual(names(unitsForChanges(units, packages, ["e2e/cli/a.test.ts"])), ["e2e/cli"]);
  assert.deepEqual(names(unitsForChanges(units, packages, ["e2e/support/harness.ts"])), [
    "e2e/cli",
    "e2e/web",
  ]);
  assert.deepEqual(names(unitsForChanges(units, packages, ["scripts/setup.sh", "README.md", "docs/x.md"])), [
    "scripts",
  ]);
  assert.deepEqual(names(unitsForChanges(units, packages, ["package-lock.json"])), names(units));
});

test("longest first by the recorded times; a unit never timed starts early", () => {
  const order = longestFirst(units, { "e2e/web": 300, "packages/core": 5, scripts: 10, "e2e/cli": 500 }, 120);
  assert.deepEqual(names(order), ["e2e/cli", "e2e/web", "services/api", "scripts", "packages/core"]);
});

test("this repository: every package with tests is a unit, and the runner lists its plan and refuses bad options", () => {
  const real = names(allUnits(ROOT));
  for (const u of [
    "scripts",
    "services/approval",
    "e2e/web",
    "e2e/core",
    "deploy",
    "apps/cli",
    "sandbox-runner",
  ])
    assert.ok(real.includes(u), `${u} in ${real.join(", ")}`);
  assert.ok(!real.includes("e2e"), "e2e runs by surface");
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "scripts/test-run.ts"), ...args], {
      cwd: ROOT,
      encoding: "utf8",
    });
  const list = run("--list", "e2e/web", "@gatehouse/approval");
  assert.equal(list.status, 0, list.stderr);
  assert.match(list.stdout, /^e2e\/web\t/m);
  assert.match(list.stdout, /^services\/approval\t/m);
  assert.match(list.stdout, /^check: biome \(selected\)\t.*biome ci services\/approval e2e\/web$/m);
  const jobs = run("--jobs", "0", "--list");
  assert.equal(jobs.status, 2);
  assert.match(jobs.stderr, /--jobs \(or GATEHOUSE_TEST_JOBS\) must be a whole number from 1 to 16, got "0"/);
  const option = run("--bogus");
  assert.equal(option.status, 2);
  assert.match(option.stderr, /^test: Unknown option '--bogus'\. Options: --changed, --jobs N, --list/);
  const unknown = run("--list", "nope");
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /"nope" is not a test unit/);
});
