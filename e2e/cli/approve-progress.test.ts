/**
 * `gatehouse approve --all` follows its batch to the end with progress, run as the compiled CLI
 * (dist/, no tsx) against the real services in one process (approval service, lifecycle worker on
 * a real Temporal dev server, the real memory MCP server from npm): JSON lines with the counts,
 * a final line once every action is applied or failed, exit 1 naming the failed one; then
 * `actions --state` lists each state, and the table rows for people.
 *
 * `gatehouse approve <ws> <id>` (one id) follows its action the same way: a real MCP server whose
 * write finishes only when the test releases it (the gatekeeper-mcp tests' slow-tool server) shows
 * that the command waits while the action is applying, with progress on stderr, and ends with the
 * final record, the batch's exit codes (1 for a failure or a stall, 130 on Ctrl-C) and messages.
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { devRegistry } from "@gatehouse/dev-stack";
import { waitUntil } from "@gatehouse/service-kit";
import { type Harness, returned, startHarness } from "../support/harness.ts";

const BIN = join(import.meta.dirname, "../../apps/cli/bin/gatehouse.js");
const run = promisify(execFile);
/** A real MCP server (SDK, stdio) whose `slow_write {label}` finishes once `release-<label>` exists. */
const SLOW_TOOL_SERVER = join(
  import.meta.dirname,
  "../../services/gatekeeper-mcp/test/fixtures/slow-tool-server.ts",
);

let h: Harness;
/** The slow server's directory: its calls.log and the release files. */
let slowDir: string;
before(async () => {
  h = await startHarness((dir) => {
    const registry = devRegistry(dir);
    slowDir = join(dir, "slow");
    mkdirSync(slowDir, { recursive: true });
    registry.servers.slow = {
      ...registry.servers.memory!,
      command: process.execPath,
      args: ["--import", "tsx", SLOW_TOOL_SERVER],
      env: { SLOW_DIR: slowDir },
      vetted: true,
    };
    return registry;
  });
});
after(async () => {
  await h.close();
});

/** The compiled CLI against the harness's services; never throws (exit code in `code`). */
async function gatehouse(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: {
        ...process.env,
        GATEHOUSE_KERNEL_ADDRESS: h.stack.addresses.kernel,
        GATEHOUSE_APPROVAL_ADDRESS: h.stack.addresses.approval,
        GATEHOUSE_USER: "dev-approver",
      },
      timeout: 300_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

const WRITES = 10;

test("approve --all --json streams counts until every action is final, and names the one that failed", async () => {
  const ws = await h.workspace("mcp://memory");
  const r = await h.exec(
    ws,
    `export default async (env: any) => {
      for (let i = 0; i < ${WRITES}; i++)
        await env.MEMORY.create_entities({ entities: [{ name: "Batch" + i, entityType: "test", observations: [] }] });
      // Accepted when submitted; the memory server refuses it when applied (no such entity).
      return env.MEMORY.add_observations({ observations: [{ entityName: "Nobody", contents: ["x"] }] });
    }`,
  );
  const failing = returned<{ actionId: number }>(r).actionId;

  const out = await gatehouse("approve", ws, "--all", "--json");
  assert.equal(out.code, 1, out.stderr);
  const lines = out.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const last = lines.at(-1)!;
  assert.deepEqual(
    { done: last.done, approved: last.approved, applied: last.applied, failed: last.failed },
    { done: true, approved: WRITES + 1, applied: WRITES, failed: 1 },
  );
  assert.deepEqual(last.failedIds, [failing]);
  assert.deepEqual(last.notFinalIds, []);
  // Progress lines before it: counts that never go down, each naming the batch's size.
  const progress = lines.slice(0, -1);
  for (const [i, p] of progress.entries()) {
    assert.equal(typeof p.applied, "number");
    if (i > 0) assert.ok((p.applied as number) >= (progress[i - 1]!.applied as number));
  }
  assert.match(out.stderr, new RegExp(`1 approved action\\(s\\) failed to apply: ${failing}\\n`));
  // Applied once each, in the memory server's own state.
  const state = h.memoryState();
  for (let i = 0; i < WRITES; i++) {
    assert.equal(state.filter((l) => l.includes(`"Batch${i}"`)).length, 1, `Batch${i} applied once`);
  }

  const failed = await gatehouse("actions", ws, "--state", "failed", "--json");
  assert.deepEqual(
    (JSON.parse(failed.stdout) as Array<{ id: number }>).map((a) => a.id),
    [failing],
  );
  const applied = await gatehouse("actions", ws, "--state", "applied");
  assert.equal(applied.stdout.match(/│ applied │/g)?.length, WRITES);
  const wrong = await gatehouse("actions", ws, "--state", "done");
  assert.equal(wrong.code, 1);
  assert.match(
    wrong.stderr,
    /--state must be one of pending, approved, applying, applied, failed, rejected \(got "done"\)/,
  );
});

test("approve of several ids without --json prints their table and a summary line", async () => {
  const ws = await h.workspace("mcp://memory");
  const ids: number[] = [];
  for (const name of ["Left", "Right"]) {
    const r = await h.exec(
      ws,
      `export default async (env: any) => env.MEMORY.create_entities({ entities: [{ name: "${name}", entityType: "test", observations: [] }] });`,
    );
    ids.push(returned<{ actionId: number }>(r).actionId);
  }
  const out = await gatehouse("approve", ws, ...ids.map(String));
  assert.equal(out.code, 0, out.stderr);
  for (const id of ids) assert.match(out.stdout, new RegExp(`│ ${id} +│ applied │`));
  assert.match(out.stdout, /approved 2: 2\/2 final: 2 applied, 0 failed, 0 rejected/);
});

/** The compiled CLI started in the background: its output so far, and its exit. */
function started(...args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: {
      ...process.env,
      GATEHOUSE_KERNEL_ADDRESS: h.stack.addresses.kernel,
      GATEHOUSE_APPROVAL_ADDRESS: h.stack.addresses.approval,
      GATEHOUSE_USER: "dev-approver",
    },
  });
  const out = { stdout: "", stderr: "", code: undefined as number | undefined };
  child.stdout.on("data", (b: Buffer) => {
    out.stdout += b.toString();
  });
  child.stderr.on("data", (b: Buffer) => {
    out.stderr += b.toString();
  });
  const exited = new Promise<typeof out>((resolve) =>
    child.on("close", (code) => {
      out.code = code ?? -1;
      resolve(out);
    }),
  );
  return { child, out, exited };
}

/** Submits `slow_write {label}` in `ws` (binding SLOW); returns its action id. */
async function slowWrite(ws: string, label: string): Promise<number> {
  const r = await h.exec(
    ws,
    `export default async (env: any) => env.SLOW.slow_write({ label: ${JSON.stringify(label)} });`,
  );
  return returned<{ actionId: number }>(r).actionId;
}

const slowStarted = (label: string) =>
  existsSync(join(slowDir, "calls.log")) &&
  readFileSync(join(slowDir, "calls.log"), "utf8").includes(`started ${label}\n`);
const release = (label: string) => writeFileSync(join(slowDir, `release-${label}`), "");

test("approve of one id waits while its action is applying, with progress on stderr, and prints its applied record (--json: a JSON array), exit 0", async () => {
  const ws = await h.workspace("mcp://slow");
  const id = await slowWrite(ws, "one");
  const cli = started("approve", ws, String(id), "--json");
  // The gatekeeper is inside the write and the command still runs, saying so on stderr.
  await waitUntil("the write applying and the command's progress line", () =>
    slowStarted("one") && /approving: 0\/1 final/.test(cli.out.stderr) ? true : undefined,
  );
  assert.equal(cli.out.code, undefined, "the command has not returned while the action is applying");
  assert.equal(cli.out.stdout, "", "nothing on stdout before the outcome");
  release("one");
  const out = await cli.exited;
  assert.equal(out.code, 0, out.stderr);
  const records = JSON.parse(out.stdout) as Array<{ id: number; status: string }>;
  assert.deepEqual(
    records.map((a) => [a.id, a.status]),
    [[id, "ACTION_STATUS_APPLIED"]],
  );
});

test("approve of one id that fails to apply exits 1 naming it, and prints its failed record and the dependent its failure rejected", async () => {
  const ws = await h.workspace("mcp://memory");
  const r = await h.exec(
    ws,
    `export default async (env: any) => {
      const bad = await env.MEMORY.add_observations({ observations: [{ entityName: "Nobody", contents: ["x"] }] });
      const next = await env.MEMORY.create_entities({ entities: [{ name: "After", entityType: "test", observations: [] }] }, { dependsOn: [bad.actionId] });
      return [bad.actionId, next.actionId];
    }`,
  );
  const [id, dependent] = returned<[number, number]>(r);
  const out = await gatehouse("approve", ws, String(id));
  assert.equal(out.code, 1, out.stderr);
  assert.match(out.stdout, new RegExp(`│ ${id} +│ failed +│`));
  assert.match(out.stdout, new RegExp(`│ ${dependent} +│ rejected +│`), "the cascade is in the table");
  assert.match(out.stderr, new RegExp(`gatehouse: 1 approved action\\(s\\) failed to apply: ${id}\\n`));
});

test("approve <id> --with-deps follows the dependencies it approved too, until each is applied", async () => {
  const ws = await h.workspace("mcp://memory");
  const r = await h.exec(
    ws,
    `export default async (env: any) => {
      const dep = await env.MEMORY.create_entities({ entities: [{ name: "Dep", entityType: "test", observations: [] }] });
      const obs = await env.MEMORY.add_observations({ observations: [{ entityName: "Dep", contents: ["seen"] }] }, { dependsOn: [dep.actionId] });
      return [dep.actionId, obs.actionId];
    }`,
  );
  const [dep, obs] = returned<[number, number]>(r);
  const out = await gatehouse("approve", ws, String(obs), "--with-deps", "--json");
  assert.equal(out.code, 0, out.stderr);
  const records = JSON.parse(out.stdout) as Array<{ id: number; status: string }>;
  assert.deepEqual(
    records.map((a) => [a.id, a.status]),
    [
      [dep, "ACTION_STATUS_APPLIED"],
      [obs, "ACTION_STATUS_APPLIED"],
    ],
  );
  assert.ok(h.memoryState().some((l) => l.includes('"Dep"') && l.includes('"seen"')));
});

test("approve of one id whose apply does not end within --stall-timeout exits 1 saying it is applying and how to follow it", async () => {
  const ws = await h.workspace("mcp://slow");
  const id = await slowWrite(ws, "stalled");
  try {
    const out = await gatehouse("approve", ws, String(id), "--stall-timeout", "2s");
    assert.equal(out.code, 1, out.stderr);
    assert.match(out.stdout, new RegExp(`│ ${id} +│ (approved|applying) +│`));
    assert.match(
      out.stderr,
      new RegExp(
        `nothing happened to the batch for 2 s \\(--stall-timeout\\): 1 of 1 action\\(s\\) are not final: .*${id}.*follow them with \`gatehouse actions ${ws} --state approved\``,
      ),
    );
  } finally {
    release("stalled");
  }
});

test("approve of one id interrupted with Ctrl-C exits 130: the approval is recorded and goes on applying, and the message says how to follow it", async () => {
  const ws = await h.workspace("mcp://slow");
  const id = await slowWrite(ws, "interrupted");
  const cli = started("approve", ws, String(id));
  try {
    await waitUntil("the write applying", () => (slowStarted("interrupted") ? true : undefined));
    cli.child.kill("SIGINT");
    const out = await cli.exited;
    assert.equal(out.code, 130, out.stderr);
    assert.match(
      out.stderr,
      new RegExp(
        `interrupted; the 1 approval\\(s\\) are recorded .* and 1 still applying: applying continues on the server without this command \\(${id}\\); follow them with \`gatehouse actions ${ws} --state approved --state applying\``,
      ),
    );
  } finally {
    release("interrupted");
  }
  // It does go on: applied on the server after the command ended.
  await waitUntil("the interrupted approval applied", async () => {
    const out = await gatehouse("actions", ws, "--state", "applied", "--json");
    return (JSON.parse(out.stdout) as Array<{ id: number }>).some((a) => a.id === id) ? true : undefined;
  });
});

test("approve --no-wait returns once the approval is recorded, printing the approved record and how to follow it; it then applies on the server", async () => {
  const ws = await h.workspace("mcp://slow");
  const id = await slowWrite(ws, "no-wait");
  try {
    // The write cannot finish before the release below: the command returned without waiting for it.
    const out = await gatehouse("approve", ws, String(id), "--no-wait", "--json");
    assert.equal(out.code, 0, out.stderr);
    const records = JSON.parse(out.stdout) as Array<{ id: number; status: string }>;
    assert.deepEqual(
      records.map((a) => [a.id, a.status]),
      [[id, "ACTION_STATUS_APPROVED"]],
    );
    assert.match(
      out.stderr,
      new RegExp(
        `1 approval\\(s\\) recorded; not waiting for the applies \\(--no-wait\\): follow them with \`gatehouse actions ${ws} --state approved --state applying\``,
      ),
    );
  } finally {
    release("no-wait");
  }
  await waitUntil("the approval applied on the server", async () => {
    const out = await gatehouse("actions", ws, "--state", "applied", "--json");
    return (JSON.parse(out.stdout) as Array<{ id: number }>).some((a) => a.id === id) ? true : undefined;
  });
});
