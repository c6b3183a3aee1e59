/**
 * Issue 13's acceptance test of a batch across bindings, black box against a split deployment (every
 * service its own process, real Temporal, three real memory MCP servers from npm, the real sandbox):
 * each binding's writes reach its own server in submission order; a write the server rejects in the
 * middle of one binding's run fails, its dependents are cascaded, and the other bindings' runs are
 * untouched. (batch-crash.test.ts kills the approval service and the worker mid-batch.)
 * Size: GATEHOUSE_ACCEPTANCE_BATCH writes (default 1000, the issue's).
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type ActionRecord, ActionStatus } from "@gatehouse/proto";
import { callUnary } from "@gatehouse/service-kit";
import { returned } from "../support/harness.ts";
import { type SplitStack, startSplitStack } from "../support/split-stack.ts";
import { untilFinal } from "../support/until-final.ts";

const require = createRequire(import.meta.url);
const MEMORY_SERVER = require.resolve("@modelcontextprotocol/server-memory/dist/index.js");
const N = Number(process.env.GATEHOUSE_ACCEPTANCE_BATCH ?? 1000);
if (!Number.isInteger(N) || N < 30) throw new Error("GATEHOUSE_ACCEPTANCE_BATCH must be an integer ≥ 30");
const SERVERS = ["alpha", "beta", "gamma"] as const;
const HOUR = 3_600_000;

const dir = mkdtempSync(join(tmpdir(), "gatehouse-batch-"));
let stack: SplitStack;
before(async () => {
  stack = await startSplitStack(
    Object.fromEntries(
      SERVERS.map((s) => [
        s,
        {
          command: process.execPath,
          args: [MEMORY_SERVER],
          env: { MEMORY_FILE_PATH: join(dir, `${s}.jsonl`) },
          vetted: true,
        },
      ]),
    ),
    dir,
  );
});
after(async () => {
  await stack?.close();
});

/** Entity names in a memory server's own state file, in the file's order (the order they were created). */
function entitiesOf(server: string): string[] {
  let text = "";
  try {
    text = readFileSync(join(dir, `${server}.jsonl`), "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; name?: string })
    .filter((r) => r.type === "entity")
    .map((r) => r.name as string);
}

/**
 * The plan: write i goes to binding SERVERS[i % 3] and creates entity `<server>-<i>`, except in beta:
 * write F adds an observation to an entity that does not exist (the memory server answers with an
 * error), F+3 and F+6 depend on F, and F+9 depends on F+3 (a transitive dependent).
 */
function plan(n: number) {
  let f = Math.floor(n / 2);
  while (f % 3 !== 1) f++;
  return { fail: f, dependsOnFail: [f + 3, f + 6], dependsOnFirst: f + 9 };
}

/** Snippet for writes from..to-1 of the plan; `failId` / `firstDepId` are known once F / F+3 are submitted. */
function snippet(from: number, to: number, p: ReturnType<typeof plan>): string {
  return `export default async (env: any) => {
  const names = ${JSON.stringify(SERVERS.map((s) => s.toUpperCase()))};
  const ids: Record<number, number> = {};
  for (let i = ${from}; i < ${to}; i++) {
    const b = env[names[i % 3]];
    let r;
    if (i === ${p.fail}) {
      r = await b.add_observations({ observations: [{ entityName: "no-such-entity", contents: ["x"] }] });
    } else {
      const deps = ${JSON.stringify(p.dependsOnFail)}.includes(i) ? [ids[${p.fail}]] : i === ${p.dependsOnFirst} ? [ids[${p.dependsOnFail[0]}]] : [];
      r = await b.create_entities({ entities: [{ name: names[i % 3].toLowerCase() + "-" + i, entityType: "batch", observations: [] }] }, { dependsOn: deps });
    }
    ids[i] = r.actionId;
  }
  return ids;
};`;
}

test("a batch across 3 bindings applies each binding's writes in submission order; a failure mid-run cascades its dependents and leaves the other bindings' runs untouched", async (t) => {
  const { kernel, decisions } = stack;
  const ws = (
    await callUnary(kernel, kernel.createWorkspace, { name: "batch", owner: "user:dev-admin", members: [] })
  ).id;
  for (const s of SERVERS) {
    const b = await callUnary(kernel, kernel.introduceResource, {
      workspaceId: ws,
      url: `mcp://${s}`,
      name: "",
    });
    assert.equal(b.name, s.toUpperCase());
  }
  const p = plan(N);
  // Snippets of at most 250 writes (an execution runs at most 5 minutes); F and its dependents share
  // one (dependsOn names actions of the same session).
  const bounds = [0];
  for (let b = 250; b < N; b += 250) if (b <= p.fail || b > p.dependsOnFirst) bounds.push(b);
  bounds.push(N);
  const idOf: number[] = [];
  const began = Date.now();
  for (let k = 0; k + 1 < bounds.length; k++) {
    const r = await callUnary(
      kernel,
      kernel.executeCode,
      {
        workspaceId: ws,
        code: snippet(bounds[k] as number, bounds[k + 1] as number, p),
        caller: { kind: "agent", id: "chat-batch" },
        limits: { wallTimeMs: 300_000, heapMb: 0, outputBytes: 0 },
        executionId: "",
      },
      310_000,
    );
    for (const [i, id] of Object.entries(returned<Record<string, number>>(r))) idOf[Number(i)] = id;
  }
  assert.equal(idOf.filter(Number.isInteger).length, N, "every write was submitted");
  for (const s of SERVERS) assert.deepEqual(entitiesOf(s), [], `nothing reached ${s} before the approval`);

  t.diagnostic(`${N} writes submitted in ${Date.now() - began} ms`);
  const approvedAt = Date.now();
  const watched = untilFinal(decisions, ws, idOf, { stallMs: 300_000 });
  await callUnary(
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
  );
  await watched;
  t.diagnostic(`every action final ${Date.now() - approvedAt} ms after the approval`);
  const records = new Map(
    (
      await callUnary(decisions, decisions.listActions, { workspaceId: ws, pendingOnly: false }, 120_000)
    ).actions.map((a) => [a.id, a]),
  );
  const rec = (i: number) => records.get(idOf[i] as number) as ActionRecord;

  const failed = rec(p.fail);
  assert.equal(failed.status, ActionStatus.ACTION_STATUS_FAILED, "the write the server rejected failed");
  assert.equal(failed.outcomeUnknown, false, "the server answered: the outcome is known");
  assert.match(failed.reason, /no-such-entity not found/);
  for (const i of p.dependsOnFail) {
    assert.equal(rec(i).status, ActionStatus.ACTION_STATUS_REJECTED, `write ${i} depends on the failed one`);
    assert.equal(rec(i).cascadedFrom, idOf[p.fail]);
    assert.equal(rec(i).reason, `needed action ${idOf[p.fail]}, which did not complete`);
  }
  const transitive = rec(p.dependsOnFirst);
  assert.equal(
    transitive.status,
    ActionStatus.ACTION_STATUS_REJECTED,
    "a dependent of a dependent is cascaded",
  );
  assert.equal(
    transitive.reason,
    `needed action ${idOf[p.dependsOnFail[0] as number]}, which did not complete`,
  );

  const cascaded = new Set([p.fail, ...p.dependsOnFail, p.dependsOnFirst]);
  for (const [k, s] of SERVERS.entries()) {
    const expected: string[] = [];
    for (let i = k; i < N; i += 3) {
      if (cascaded.has(i)) continue;
      assert.equal(
        rec(i).status,
        ActionStatus.ACTION_STATUS_APPLIED,
        `write ${i} (${s}) is applied: ${rec(i).reason}`,
      );
      expected.push(`${s}-${i}`);
    }
    assert.deepEqual(entitiesOf(s), expected, `${s} holds its applied writes once each, in submission order`);
  }
});
