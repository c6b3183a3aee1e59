/**
 * `gatehouse approve --all` follows its batch to the end with progress, run as the compiled CLI
 * (dist/, no tsx) against the real services in one process (approval service, lifecycle worker on
 * a real Temporal dev server, the real memory MCP server from npm): JSON lines with the counts,
 * a final line once every action is applied or failed, exit 1 naming the failed one; then
 * `actions --state` lists each state, and the table rows for people.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { type Harness, returned, startHarness } from "./harness.ts";

const BIN = join(import.meta.dirname, "..", "bin", "gatehouse.js");
const run = promisify(execFile);

let h: Harness;
before(async () => {
  h = await startHarness();
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
