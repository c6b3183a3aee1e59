/**
 * Issue 13's crash acceptance test, black box against a split deployment (every service its own
 * process, real Temporal, the real filesystem MCP server from npm, the real sandbox): the approval
 * service and the lifecycle worker are killed (SIGKILL) in the middle of a batch and started again;
 * the batch completes, no write reaches the server twice, and the projection agrees with the server.
 *
 * Each write is an `edit_file` that inserts its own line before an end marker, which the server does
 * again if asked again: a second apply would leave the line twice (memory-server writes are idempotent
 * and could not show it). Size: GATEHOUSE_ACCEPTANCE_LARGE writes (default 5000, the issue's).
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ActionStatus } from "@gatehouse/proto";
import { callUnary, waitUntil } from "@gatehouse/service-kit";
import { returned } from "../support/harness.ts";
import { type SplitStack, startSplitStack } from "../support/split-stack.ts";
import { untilFinal } from "../support/until-final.ts";

const require = createRequire(import.meta.url);
const FILES_SERVER = require.resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
const N = Number(process.env.GATEHOUSE_ACCEPTANCE_LARGE ?? 5000);
if (!Number.isInteger(N) || N < 20) throw new Error("GATEHOUSE_ACCEPTANCE_LARGE must be an integer ≥ 20");
const END = "<<END>>";
const CHUNK = 500;
const HOUR = 3_600_000;

const dir = mkdtempSync(join(tmpdir(), "gatehouse-crash-"));
const file = join(dir, "files", "batch.txt");
let stack: SplitStack;
before(async () => {
  mkdirSync(join(dir, "files"));
  writeFileSync(file, `${END}\n`);
  stack = await startSplitStack(
    { files: { command: process.execPath, args: [FILES_SERVER, join(dir, "files")], vetted: true } },
    dir,
  );
});
after(async () => {
  await stack?.close();
});

/** The lines the server wrote, in the file's order (the end marker aside). */
function lines(): string[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "" && l !== END);
}

/** Writes from..to-1: each inserts line `w-<i>` before the end marker. */
function snippet(from: number, to: number): string {
  return `export default async (env: any) => {
  const ids: number[] = [];
  for (let i = ${from}; i < ${to}; i++) {
    const r = await env.FILES.edit_file({ path: ${JSON.stringify(file)}, edits: [{ oldText: "${END}", newText: "w-" + i + "\\n${END}" }] });
    ids.push(r.actionId);
  }
  return ids;
};`;
}

test("the approval service and the worker killed mid-batch and restarted: the batch completes, no write applied twice, the projection agrees with the server", async (t) => {
  const { kernel, decisions } = stack;
  const ws = (
    await callUnary(kernel, kernel.createWorkspace, { name: "crash", owner: "user:dev-admin", members: [] })
  ).id;
  await callUnary(kernel, kernel.introduceResource, { workspaceId: ws, url: "mcp://files", name: "" });
  const ids: number[] = [];
  const began = Date.now();
  for (let from = 0; from < N; from += CHUNK) {
    const r = await callUnary(
      kernel,
      kernel.executeCode,
      {
        workspaceId: ws,
        code: snippet(from, Math.min(N, from + CHUNK)),
        caller: { kind: "agent", id: "chat-crash" },
        limits: { wallTimeMs: 300_000, heapMb: 0, outputBytes: 0 },
        executionId: "",
      },
      310_000,
    );
    ids.push(...returned<number[]>(r));
  }
  assert.equal(ids.length, N);
  assert.deepEqual(lines(), [], "nothing reached the server before the approval");
  t.diagnostic(`${N} writes submitted in ${Date.now() - began} ms`);
  const approvedAt = Date.now();

  // Approve all; the service answers once the approvals are recorded (or, on an engine that waits for
  // the applies, the kill below cuts the call: either way the approvals are in the stream).
  const approving = callUnary(
    decisions,
    decisions.approveBatch,
    {
      workspaceId: ws,
      actionIds: [],
      decidedBy: "user:dev-approver",
      all: true,
      returnOnceRecorded: true,
      descriptionDigests: {},
    },
    HOUR,
  ).catch((err: Error) => err);
  const killAt = Math.max(1, Math.floor(N / 10));
  await waitUntil(`${killAt} of ${N} writes on the server`, () => lines().length >= killAt, {
    timeoutMs: 600_000,
    intervalMs: 20,
  });
  await Promise.all([stack.kill("approval"), stack.kill("worker")]);
  const atKill = lines().length;
  t.diagnostic(`killed the approval service and the worker with ${atKill} of ${N} writes on the server`);
  assert.ok(atKill < N, "the kill came in the middle of the batch");
  await approving;
  await Promise.all([stack.start("approval"), stack.start("worker")]);
  t.diagnostic(`restarted ${Date.now() - approvedAt} ms after the approval`);

  await untilFinal(decisions, ws, ids, { stallMs: 300_000 }).catch((err: Error) => {
    throw new Error(
      `${err.message}\n--- worker\n${stack.log("worker")}\n--- approval\n${stack.log("approval")}`,
    );
  });
  t.diagnostic(`every action final ${Date.now() - approvedAt} ms after the approval`);
  const records = new Map(
    (
      await callUnary(decisions, decisions.listActions, { workspaceId: ws, pendingOnly: false }, 120_000)
    ).actions.map((a) => [a.id, a]),
  );
  const onServer = lines();
  const times = new Map<string, number>();
  for (const l of onServer) times.set(l, (times.get(l) ?? 0) + 1);
  assert.deepEqual(
    [...times].filter(([, n]) => n > 1),
    [],
    "no write reached the server twice",
  );
  let unknown = 0;
  for (const [i, id] of ids.entries()) {
    const a = records.get(id);
    const seen = times.get(`w-${i}`) ?? 0;
    if (a?.status === ActionStatus.ACTION_STATUS_APPLIED) {
      assert.equal(seen, 1, `applied action ${id} (write ${i}) is on the server once`);
    } else {
      assert.equal(
        a?.status,
        ActionStatus.ACTION_STATUS_FAILED,
        `action ${id} is applied or failed: ${a?.reason}`,
      );
      assert.equal(
        a?.outcomeUnknown,
        true,
        `action ${id} failed only because its outcome is unknown: ${a?.reason}`,
      );
      assert.match(a?.reason ?? "", /outcome is unknown/);
      unknown++;
    }
  }
  assert.equal(times.size, onServer.length);
  assert.ok(
    onServer.every((l) => /^w-\d+$/.test(l) && ids[Number(l.slice(2))] !== undefined),
    "every line on the server is one of the batch's writes",
  );
  const order = onServer.map((l) => Number(l.slice(2)));
  assert.deepEqual(
    order,
    [...order].sort((a, b) => a - b),
    "the writes reached the server in submission order",
  );
  t.diagnostic(`${N - unknown} applied, ${unknown} outcome unknown`);
  const verify = await callUnary(decisions, decisions.verify, { workspaceId: ws });
  assert.equal(verify.ok, true, `the stream's hash chain is intact: ${verify.problem}`);
});
