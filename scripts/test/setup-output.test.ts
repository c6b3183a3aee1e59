/**
 * scripts/setup.sh says what it does: one line per step it runs — the build step too, whose
 * `buf generate` and web build print nothing for a while — and with --quiet only the steps that
 * install something. Runs the real script on this checkout, where everything is installed already
 * (`npm test` runs the set-up step first), so only the (cached) build step does work.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");

function setup(...args: string[]): { code: number | null; out: string } {
  const r = spawnSync("bash", [join(ROOT, "scripts/setup.sh"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" },
    timeout: 600_000,
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

const BUILD_LINE =
  /^setup: building the generated code \(buf generate: proto → TypeScript\), the sandbox bundle, the compiled CLI and the web app \(turbo restores cached builds\)$/m;

test("setup announces its build step, and says nothing about it with --quiet", () => {
  const loud = setup();
  assert.equal(loud.code, 0, loud.out);
  assert.match(loud.out, BUILD_LINE);
  assert.match(loud.out, /^setup: done\. Next: npm run demo/m);
  const quiet = setup("--quiet");
  assert.equal(quiet.code, 0, quiet.out);
  assert.doesNotMatch(quiet.out, /^setup: building the generated code/m);
  assert.doesNotMatch(quiet.out, /^setup: done/m);
});

test("setup refuses an unknown option naming the one it takes", () => {
  const r = setup("--fast");
  assert.equal(r.code, 2);
  assert.match(r.out, /^setup: unknown option --fast \(the only option is --quiet\)$/m);
});
