/**
 * scripts/setup.sh installs by need (--for demo|test|cluster) and says what it does: one line per step
 * it runs — the build step too, whose `buf generate` and web build print nothing for a while — and with
 * --quiet only the steps that do work. Runs the real script on this checkout, where everything is
 * installed already (`npm test` runs the set-up step first), so nothing is built: only turbo restores
 * its cached build. Steps whose tools are missing are simulated with an empty GATEHOUSE_CACHE_DIR and
 * read with --plan, which runs nothing.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";

const ROOT = resolve(import.meta.dirname, "../..");

function setup(
  args: string[],
  env: Record<string, string> = {},
): { code: number | null; out: string; ms: number } {
  const started = Date.now();
  const r = spawnSync("bash", [join(ROOT, "scripts/setup.sh"), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1", ...env },
    timeout: 600_000,
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}`, ms: Date.now() - started };
}

/** `setup.sh --plan` as [step, "todo" | "present"] pairs, and its total of cold minutes still to do. */
function plan(
  args: string[],
  env: Record<string, string> = {},
): { steps: [string, string][]; todoMinutes: number } {
  const r = setup(["--plan", ...args], env);
  assert.equal(r.code, 0, r.out);
  const lines = r.out.trim().split("\n");
  const total = lines.pop() ?? "";
  assert.match(total, /^total-todo-minutes \d+$/);
  const steps = lines.map((line) => {
    assert.match(line, /^[a-z-]+ (todo|present) \d+$/);
    const [step, state] = line.split(" ");
    return [step, state] as [string, string];
  });
  return { steps, todoMinutes: Number(total.split(" ")[1]) };
}

/** An empty cache folder: the cluster's binaries, promtool, Jaeger and the CRDs look missing there. */
function withEmptyCache(run: (env: Record<string, string>) => void): void {
  const dir = mkdtempSync(join(tmpdir(), "setup-test-cache-"));
  try {
    run({ GATEHOUSE_CACHE_DIR: dir });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Output without the quiet build step's line: turbo rebuilds (and setup reports it) when a source file
 * changed since the last build, which a working tree may have; a checkout just set up has none.
 */
function withoutRebuild(out: string): string {
  return out.replace(/^setup: build … done in \d+ s\n/m, "");
}

const BUILD_LINE =
  /^setup: building the generated code \(buf generate: proto → TypeScript\), the sandbox bundle, the compiled CLI and the web app \(turbo restores cached builds\)$/m;

test("setup announces its build step with its time, and says nothing on a set-up machine with --quiet", () => {
  const loud = setup([]);
  assert.equal(loud.code, 0, loud.out);
  assert.match(loud.out, BUILD_LINE);
  assert.match(loud.out, /^setup: build … done in \d+ s$/m);
  assert.match(loud.out, /^setup: done\. Next: npm run demo/m);
  const quiet = setup(["--quiet"]);
  assert.equal(quiet.code, 0, quiet.out);
  assert.equal(withoutRebuild(quiet.out), "", "nothing to do: nothing said");
});

test("setup --for demo on a machine where everything is there does nothing, in seconds", () => {
  const r = setup(["--quiet", "--for", "demo"]);
  assert.equal(r.code, 0, r.out);
  assert.equal(withoutRebuild(r.out), "");
  assert.ok(r.ms < 60_000, `took ${r.ms} ms`);
});

test("each need's plan lists its steps: the demo's leave out everything only the tests use", () => {
  const demo = plan(["--for", "demo"]);
  assert.deepEqual(
    demo.steps.map(([s]) => s),
    ["debian-packages", "temporal-cli", "npm-packages", "build"],
  );
  const forTest = plan(["--for=test"]);
  assert.deepEqual(
    forTest.steps.map(([s]) => s),
    [
      "debian-packages",
      "temporal-cli",
      "python-mcp",
      "cluster-binaries",
      "promtool",
      "jaeger",
      "monitoring-crds",
      "npm-packages",
      "build",
    ],
  );
  assert.deepEqual(plan([]).steps, forTest.steps, "no --for: what npm test needs");
  assert.deepEqual(
    plan(["--for", "cluster"]).steps.map(([s]) => s),
    ["debian-packages", "cluster-binaries"],
  );
  // On this set-up machine only the build (turbo decides) is left, and it counts no cold minutes.
  for (const p of [demo, forTest]) {
    assert.deepEqual(
      p.steps.filter(([, state]) => state === "todo").map(([s]) => s),
      ["build"],
    );
    assert.equal(p.todoMinutes, 0);
  }
});

test("with the test-only tools missing, the plan says so and the demo's set-up names them in one line", () => {
  withEmptyCache((env) => {
    const p = plan(["--for", "test", "--quiet"], env);
    const todo = p.steps.filter(([, state]) => state === "todo").map(([s]) => s);
    assert.deepEqual(todo, ["cluster-binaries", "promtool", "jaeger", "monitoring-crds", "build"]);
    assert.ok(p.todoMinutes > 10, `${p.todoMinutes} min`);
    // The demo's own steps are all there: it installs nothing and says what npm test will add.
    const r = setup(["--for", "demo", "--quiet"], env);
    assert.equal(r.code, 0, r.out);
    assert.match(
      withoutRebuild(r.out),
      /^setup: ready for the demo\. npm test will first install what only the tests use: the local cluster's binaries, promtool, Jaeger, the monitoring CRDs \(about \d+ min cold on 2 cores; npm run setup -- --for test does it ahead\)\n$/,
    );
  });
});

test("setup refuses an unknown option or need, naming what it takes (exit 2)", () => {
  const unknown = setup(["--fast"]);
  assert.equal(unknown.code, 2);
  assert.match(
    unknown.out,
    /^setup: unknown option --fast \(options: --for demo\|test\|cluster, --quiet, --plan\)$/m,
  );
  const need = setup(["--for", "prod"]);
  assert.equal(need.code, 2);
  assert.match(need.out, /^setup: --for takes demo, test or cluster \(got "prod"\)$/m);
  const bare = setup(["--quiet", "--for"]);
  assert.equal(bare.code, 2);
  assert.match(bare.out, /^setup: --for needs a value: demo, test or cluster$/m);
});

/**
 * A fake `go` (first on PATH) that sleeps instead of building, with the Temporal CLI hidden (PATH without
 * /usr/local/bin, GOBIN in a temp folder): `--for demo` then has exactly one Go step to run, cheaply.
 * Progress lines come every second. Returns the environment, its folder (also the marker value of
 * SETUP_TEST_MARK, which every process of the run inherits) and a function removing it.
 */
function fakeGo(seconds: number): { env: Record<string, string>; dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "setup-test-go-"));
  mkdirSync(join(dir, "path"));
  mkdirSync(join(dir, "gobin"));
  writeFileSync(join(dir, "path", "go"), `#!/bin/bash\n[ "$1" = env ] && exit 0\nexec sleep ${seconds}\n`, {
    mode: 0o755,
  });
  const env = {
    GATEHOUSE_CACHE_DIR: join(dir, "cache"),
    GOBIN: join(dir, "gobin"),
    PATH: [join(dir, "path"), dirname(process.execPath), "/usr/bin", "/bin", "/usr/sbin", "/sbin"].join(":"),
    GATEHOUSE_SETUP_TICK_SECONDS: "1",
    SETUP_TEST_MARK: dir,
  };
  return { env, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Pids of live processes whose environment holds `entry` ("NAME=value"); unreadable ones are skipped. */
function processesWith(entry: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, "latin1").split("\0").includes(entry))
        pids.push(Number(name));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

test("a long step says it is still running, then its time", (t) => {
  const go = fakeGo(3);
  t.after(go.remove);
  const r = setup(["--for", "demo", "--quiet"], go.env);
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /^setup: temporal-cli …$/m);
  assert.match(r.out, /^setup: temporal-cli … still running \(\d+ s\)$/m);
  assert.match(r.out, /^setup: temporal-cli … done in [34] s$/m);
});

test("an interrupted set-up stops its background Go build and leaves no process behind", async (t) => {
  const go = fakeGo(120);
  t.after(go.remove);
  const child = spawn("bash", [join(ROOT, "scripts/setup.sh"), "--for", "demo", "--quiet"], {
    cwd: ROOT,
    env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1", ...go.env },
  });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
    if (out.includes("setup: temporal-cli … still running")) child.kill("SIGTERM");
  });
  const code = await new Promise<number | null>((done) => child.on("exit", done));
  assert.equal(code, 130, out);
  // The fake go's sleep and the ticker end with the set-up (a killed process takes a moment to go).
  const mark = `SETUP_TEST_MARK=${go.dir}`;
  for (let i = 0; i < 50 && processesWith(mark).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(processesWith(mark), []);
});
