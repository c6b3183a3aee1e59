/**
 * What the `gatehouse` command prints, run as a process against a real dev stack (real memory MCP
 * server, Temporal dev server): errors name CLI flags and commands rather than gRPC fields and RPCs,
 * `--timeout` takes a duration with a unit on `exec` and `turn`, a completed turn lists every
 * awaited action, `log` and `verify` say which number is a revision and which a count, and the
 * "cannot reach" hint names the dev.json it read and GATEHOUSE_DATA_DIR, a GATEHOUSE_DATA_DIR without
 * dev.json is refused rather than read as the default address (unless the address variables are set),
 * and an empty workspace list says so.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { freePort } from "@gatehouse/service-kit";
import { type Harness, returned, startHarness } from "../support/harness.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const MAIN = join(ROOT, "apps/cli/src/main.ts");
const run = promisify(execFile);

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI against the harness's services (or with `env` instead); never throws on exit 1. */
async function gatehouse(args: string[], env?: NodeJS.ProcessEnv): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ["--no-node-snapshot", "--import", "tsx", MAIN, ...args],
      {
        cwd: ROOT,
        timeout: 120_000,
        env: env ?? {
          ...process.env,
          GATEHOUSE_USER: "dev-approver",
          GATEHOUSE_KERNEL_ADDRESS: h.stack.addresses.kernel,
          GATEHOUSE_APPROVAL_ADDRESS: h.stack.addresses.approval,
        },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== "number") throw err;
    return { code: e.code, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

function snippet(name: string, code: string): string {
  const file = join(h.dir, name);
  writeFileSync(file, code);
  return file;
}

/** A workspace with memory, and an agent's write that another depends on, both pending. */
async function twoPending(): Promise<{ ws: string; root: number; leaf: number }> {
  const ws = await h.workspace("mcp://memory");
  const [root, leaf] = returned<number[]>(
    await h.exec(
      ws,
      `export default async (env: any) => {
        const root = await env.MEMORY.create_entities({ entities: [{ name: "W1", entityType: "t", observations: [] }] });
        const leaf = await env.MEMORY.add_observations({ observations: [{ entityName: "W1", contents: ["x"] }] }, { dependsOn: [root.actionId] });
        return [root.actionId, leaf.actionId];
      }`,
    ),
  ) as [number, number];
  return { ws, root, leaf };
}

test("service errors name the CLI's flags and commands, not gRPC fields or RPCs", async () => {
  const { ws, leaf } = await twoPending();

  const noReason = await gatehouse(["reject", ws, String(leaf), "--reason", ""]);
  assert.equal(noReason.code, 1);
  assert.match(noReason.stderr, /^gatehouse: --reason: a rejection needs a reason .*; pass --reason\n$/);

  const unknown = await gatehouse(["approve", ws, "999"]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /list actions with `gatehouse actions <workspace>`/);
  assert.doesNotMatch(unknown.stderr, /ListActions|action_id/);

  const deps = await gatehouse(["approve", ws, String(leaf)]);
  assert.equal(deps.code, 1);
  assert.ok(deps.stderr.includes(`use \`gatehouse approve ${ws} ${leaf} --with-deps\``), deps.stderr);
  assert.doesNotMatch(deps.stderr, /include_dependencies/);

  const json = await gatehouse(["--json", "reject", ws, String(leaf), "--reason", " "]);
  assert.equal(JSON.parse(json.stderr).error.code, "INVALID_ARGUMENT");
  assert.match(JSON.parse(json.stderr).error.message, /pass --reason/);
});

test("--timeout takes a duration with a unit on exec and on turn; bare numbers keep their old unit, with a note", async () => {
  const ws = await h.workspace("mcp://memory");
  const spin = snippet("spin.ts", "export default async () => { for (;;) {} };\n");
  const started = Date.now();
  const timed = await gatehouse(["exec", ws, spin, "--timeout", "1s"]);
  assert.equal(timed.code, 1);
  assert.match(timed.stdout, /time/i, "the snippet was stopped by its wall-time limit");
  assert.ok(Date.now() - started < 60_000);

  const tooLong = await gatehouse(["exec", ws, spin, "--timeout", "10m"]);
  assert.equal(tooLong.code, 1);
  assert.match(tooLong.stderr, /^gatehouse: --timeout must be at most 5m\n$/);
  const noUnit = await gatehouse(["exec", ws, spin, "--timeout", "soon"]);
  assert.match(noUnit.stderr, /--timeout must be a positive duration with a unit, e.g\. 500ms, 30s or 2m/);

  const quick = snippet("quick.ts", "export default async () => 1;\n");
  const bare = await gatehouse(["exec", ws, quick, "--timeout", "5000"]);
  assert.equal(bare.code, 0, bare.stderr);
  assert.match(bare.stderr, /--timeout 5000 has no unit and is read as 5000 ms; write 5000ms/);

  // A suspended turn: waiting 1 s times out, whether the timeout has a unit or is bare seconds.
  const r = await h.exec(
    ws,
    `export default async (env: any) => env.MEMORY.create_entities({ entities: [{ name: "W2", entityType: "t", observations: [] }] });`,
  );
  for (const timeout of ["1s", "1"]) {
    const waited = await gatehouse(["turn", ws, r.turnId, "--wait", "--timeout", timeout]);
    assert.equal(waited.code, 1, waited.stderr);
    assert.match(waited.stderr, /still suspended \(timed out waiting\)/);
    if (timeout === "1") assert.match(waited.stderr, /--timeout 1 has no unit and is read as 1 s; write 1s/);
  }
});

test("a turn completed by a rejection lists every awaited action with its result", async () => {
  const ws = await h.workspace("mcp://memory");
  const r = await h.exec(
    ws,
    `export default async (env: any) => {
      const a = await env.MEMORY.create_entities({ entities: [{ name: "T1", entityType: "t", observations: [] }] });
      const b = await env.MEMORY.add_observations({ observations: [{ entityName: "T1", contents: ["x"] }] }, { dependsOn: [a.actionId] });
      const c = await env.MEMORY.create_entities({ entities: [{ name: "T2", entityType: "t", observations: [] }] });
      return [a.actionId, b.actionId, c.actionId];
    }`,
  );
  const [a, b, c] = returned<number[]>(r) as [number, number, number];
  const rejected = await gatehouse(["reject", ws, String(a), "--reason", "not today"]);
  assert.equal(rejected.code, 0, rejected.stderr);
  const turn = await gatehouse(["turn", ws, r.turnId, "--wait", "--timeout", "60s"]);
  assert.equal(turn.code, 0, turn.stderr);
  const lines = turn.stdout.trimEnd().split("\n");
  assert.equal(lines[0], `turn ${r.turnId}: completed (awaiting ${a}, ${b}, ${c})`);
  assert.equal(lines[1], `  action ${a} was rejected: not today`);
  assert.equal(lines[2], `  action ${a}: rejected — not today`);
  assert.match(lines[3] ?? "", new RegExp(`^  action ${b}: rejected — .*\\b${a}\\b`));
  assert.equal(lines[4], `  action ${c}: pending — not decided when the turn completed`);
  assert.equal(lines.length, 5);
});

test("log and verify agree: the stream revision counts from 0, verify counts events", async () => {
  const { ws } = await twoPending();
  const log = await gatehouse(["log", ws]);
  const verify = await gatehouse(["verify", ws]);
  const m = /^workspace \S+ at stream revision (\d+) \((\d+) events; revisions count from 0\)$/m.exec(
    log.stdout,
  );
  assert.ok(m, log.stdout);
  const [, revision, count] = m.map(Number) as [number, number, number];
  assert.equal(count, revision + 1);
  assert.equal(
    verify.stdout.trim(),
    `ok: ${count} events (stream revisions 0 to ${revision}), hash chain intact`,
  );
});

test("an empty workspace list says so, and is [] with --json", async () => {
  const none = await gatehouse(["workspace", "list", "--person", "user:nobody-here"]);
  assert.equal(none.code, 0, none.stderr);
  assert.equal(none.stdout, "no workspaces for user:nobody-here\n");
  const json = await gatehouse(["--json", "workspace", "list", "--person", "user:nobody-here"]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), []);
});

test("the cannot-reach hint names the dev.json the CLI read and GATEHOUSE_DATA_DIR", async () => {
  const dir = join(h.dir, "other-data");
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  writeFileSync(join(dir, "dev.json"), JSON.stringify({ kernel: `127.0.0.1:${port}`, pid: 4242 }));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    GATEHOUSE_USER: "dev-approver",
    GATEHOUSE_DATA_DIR: dir,
    GATEHOUSE_KERNEL_ADDRESS: "",
  };
  const r = await gatehouse(["workspace", "list"], env);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    new RegExp(
      `cannot reach the kernel service at 127\\.0\\.0\\.1:${port}, the address in ${join(dir, "dev.json")} \\(GATEHOUSE_DATA_DIR=${dir}\\)`,
    ),
  );
  assert.match(
    r.stderr,
    /\(pid 4242\) is not answering: start `gatehouse dev` again with the same GATEHOUSE_DATA_DIR/,
  );
});

test("a GATEHOUSE_DATA_DIR without dev.json is refused, naming the directory and the fixes, not read as 127.0.0.1:7001", async () => {
  const missing = join(h.dir, "no-such-data");
  const empty = join(h.dir, "empty-data");
  mkdirSync(empty, { recursive: true });
  const env = (dir: string): NodeJS.ProcessEnv => {
    const e: NodeJS.ProcessEnv = { ...process.env, GATEHOUSE_USER: "dev-approver", GATEHOUSE_DATA_DIR: dir };
    delete e.GATEHOUSE_KERNEL_ADDRESS;
    delete e.GATEHOUSE_APPROVAL_ADDRESS;
    return e;
  };
  const gone = await gatehouse(["workspace", "list"], env(missing));
  assert.equal(gone.code, 1, gone.stdout);
  assert.equal(gone.stdout, "");
  assert.match(
    gone.stderr,
    new RegExp(
      `^gatehouse: GATEHOUSE_DATA_DIR is set to ${missing}, but the directory ${missing} does not exist`,
    ),
  );
  assert.match(gone.stderr, /does not fall back to the default 127\.0\.0\.1:7001/);
  assert.match(
    gone.stderr,
    new RegExp(`start \`gatehouse dev\` with GATEHOUSE_DATA_DIR=${missing}, correct GATEHOUSE_DATA_DIR`),
  );
  assert.match(gone.stderr, /or set GATEHOUSE_KERNEL_ADDRESS \(and GATEHOUSE_APPROVAL_ADDRESS\)/);
  const none = await gatehouse(["reject", "w", "1", "--reason", "x"], env(empty));
  assert.equal(none.code, 1, none.stdout);
  assert.match(none.stderr, new RegExp(`but there is no ${join(empty, "dev.json")} `));
  assert.match(
    none.stderr,
    /where the approval service listens; it does not fall back to the default 127\.0\.0\.1:7002/,
  );
  assert.match(none.stderr, /or set GATEHOUSE_APPROVAL_ADDRESS \(and GATEHOUSE_KERNEL_ADDRESS\)/);
});

test("the address variables win over a GATEHOUSE_DATA_DIR without dev.json", async () => {
  const ws = await h.workspaceOf("user:data-dir-probe");
  const r = await gatehouse(["--json", "workspace", "list", "--person", "user:data-dir-probe"], {
    ...process.env,
    GATEHOUSE_DATA_DIR: join(h.dir, "no-such-data"),
    GATEHOUSE_KERNEL_ADDRESS: h.stack.addresses.kernel,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(
    JSON.parse(r.stdout).some((w: { id: string }) => w.id === ws),
    r.stdout,
  );
});
