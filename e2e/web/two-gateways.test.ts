/**
 * Issue 16's acceptance, its cross-gateway part: two approval processes and two gateways on one real
 * PostgreSQL, live notices over one real nats-server, every service its own process (split-stack.ts:
 * kernel, worker, gatekeeper-mcp with the real memory MCP server, sandbox runner, Temporal dev server).
 * Gateway A talks to approval process 1, gateway B to approval process 2. A web client on gateway B
 * sees the notices of a write an agent submitted and of its approval through gateway A; the same action
 * approved through both gateways at once is applied once, the loser answered 409 conflict; and both
 * gateways' inboxes agree afterwards. (The decision races of two approval processes on PostgreSQL at
 * the gRPC level: services/approval/test/decisions-postgres.test.ts.)
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type PostgresServer, startPostgresServer } from "@gatehouse/event-store/postgres-server";
import type {
  ActionDetail,
  ApiError,
  DecisionResult,
  InboxResponse,
  InboxWorkspace,
  LogNotice,
} from "@gatehouse/gateway-contract";
import { type NatsServerProcess, startNatsServer } from "@gatehouse/live-notices/nats-server";
import { callUnary } from "@gatehouse/service-kit";
import { api, type EventStreamClient, openEvents } from "../support/gateway-client.ts";
import { returned } from "../support/harness.ts";
import { type SplitDevToken, type SplitStack, startSplitStack } from "../support/split-stack.ts";

const require = createRequire(import.meta.url);
const MEMORY_SERVER = require.resolve("@modelcontextprotocol/server-memory/dist/index.js");
/** Deadline of every wait on a condition: 11 processes share 2 busy cores in CI. */
const DEADLINE_MS = 120_000;

const TOKENS: SplitDevToken[] = [
  { token: "alice-approver-token-0001", subject: "alice", roles: ["approver"] },
  { token: "bob-approver-token-00002", subject: "bob", roles: ["approver"] },
  { token: "carol-auditor-token-0003", subject: "carol", roles: ["auditor"] },
];
const [ALICE, BOB, CAROL] = TOKENS.map((t) => t.token) as [string, string, string];

const dir = mkdtempSync(join(tmpdir(), "gatehouse-two-gateways-"));
const memoryFile = join(dir, "memory.jsonl");
let postgres: PostgresServer | undefined;
let nats: NatsServerProcess | undefined;
let stack: SplitStack | undefined;
/** Gateway A (approval process 1) and gateway B (approval process 2). */
let gatewayA: string;
let gatewayB: string;
/** Carol's event stream on gateway B, open for the whole file (the web app holds one per session). */
let streamB: EventStreamClient;
let ws: string;

before(async () => {
  postgres = await startPostgresServer({ migrate: true, startTimeoutMs: DEADLINE_MS });
  nats = await startNatsServer();
  stack = await startSplitStack(
    {
      memory: {
        command: process.execPath,
        args: [MEMORY_SERVER],
        env: { MEMORY_FILE_PATH: memoryFile },
        vetted: true,
      },
    },
    { dir, storeUrl: postgres.url, natsUrl: nats.url, approvals: 2, gateways: 2, devTokens: TOKENS },
  );
  [gatewayA, gatewayB] = stack.gatewayUrls as [string, string];
  const { kernel } = stack;
  ws = (
    await callUnary(kernel, kernel.createWorkspace, {
      name: "two-gateways",
      owner: "user:alice",
      members: ["user:bob", "user:carol"],
    })
  ).id;
  await callUnary(kernel, kernel.introduceResource, { workspaceId: ws, url: "mcp://memory", name: "" });
  streamB = await openEvents(gatewayB, CAROL);
  await streamB.waitFor((e) => e.event === "resync", DEADLINE_MS); // every connection starts with one
});

after(async () => {
  streamB?.close();
  await stack?.close();
  await nats?.close();
  await postgres?.stop();
});

/** Submits, as an agent through the kernel, one write creating entity `name`; returns its action id. */
async function agentWrites(name: string): Promise<number> {
  const kernel = stack?.kernel;
  assert.ok(kernel);
  const r = await callUnary(
    kernel,
    kernel.executeCode,
    {
      workspaceId: ws,
      code: `export default async (env: any) => env.MEMORY.create_entities({ entities: [{ name: ${JSON.stringify(name)}, entityType: "test", observations: [] }] });`,
      caller: { kind: "agent", id: "chat-two-gateways" },
      limits: { wallTimeMs: 120_000, heapMb: 0, outputBytes: 0 },
      executionId: "",
    },
    DEADLINE_MS,
  );
  const { actionId, status } = returned<{ actionId: number; status: string }>(r);
  assert.equal(status, "pending");
  return actionId;
}

/** How many entities named `name` the memory server's own state file holds. */
function entitiesNamed(name: string): number {
  let text = "";
  try {
    text = readFileSync(memoryFile, "utf8");
  } catch {
    return 0;
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; name?: string })
    .filter((r) => r.type === "entity" && r.name === name).length;
}

/** Notices of `ws` of event type `type` that gateway B's stream delivered. */
function noticesB(type: string): LogNotice[] {
  return streamB.events
    .filter((e) => e.event === "notice")
    .map((e) => e.data as LogNotice)
    .filter((n) => n.workspaceId === ws && n.type === type);
}

/** Waits until gateway B's stream delivered a notice of `ws` of type `type` past `afterRevision`. */
async function noticeOnB(type: string, afterRevision: number): Promise<LogNotice> {
  await streamB.waitFor((e) => {
    const n = e.data as LogNotice;
    return e.event === "notice" && n.workspaceId === ws && n.type === type && n.revision > afterRevision;
  }, DEADLINE_MS);
  return noticesB(type).find((n) => n.revision > afterRevision) as LogNotice;
}

/** The workspace's inbox through `gateway`, as `token`'s person. */
async function inboxOf(gateway: string, token: string): Promise<InboxWorkspace> {
  const res = await api<InboxResponse>(gateway, token, "GET", `/api/inbox?workspace=${ws}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const w = res.body.workspaces[0];
  assert.ok(w, `the inbox through ${gateway} has workspace ${ws}`);
  return w;
}

const statusIn = (w: InboxWorkspace, id: number) =>
  [...w.pending, ...w.recent].find((a) => a.id === id)?.status;

test("a web client on gateway B gets the notice of an agent's write and of its approval through gateway A, and re-reads the new status through B", async () => {
  const head = (await inboxOf(gatewayB, CAROL)).revision;
  const id = await agentWrites("Crossed");
  const submitted = await noticeOnB("ActionSubmitted", head);
  const pendingOnB = await inboxOf(gatewayB, CAROL);
  assert.ok(pendingOnB.revision >= submitted.revision, "B's inbox is read at or past the notice");
  assert.deepEqual(
    pendingOnB.pending.map((a) => a.id),
    [id],
  );
  assert.equal(entitiesNamed("Crossed"), 0, "nothing reached the MCP server before the approval");

  const approved = await api<DecisionResult>(
    gatewayA,
    ALICE,
    "POST",
    `/api/workspaces/${ws}/actions/${id}/approve`,
    {},
  );
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  const decided = await noticeOnB("ActionApproved", submitted.revision);
  const applied = await noticeOnB("ActionApplied", decided.revision);
  // The memory write is awaited: its turn was suspended, and the lifecycle worker appends TurnResumed
  // after the apply. Wait for it, so that no append of this write is still to come in later tests.
  await noticeOnB("TurnResumed", applied.revision);

  // The web app re-reads on a notice past the revision it shows: through gateway B, the new status.
  const afterB = await inboxOf(gatewayB, CAROL);
  assert.ok(afterB.revision >= applied.revision, "B's inbox is read at or past the ActionApplied notice");
  assert.equal(statusIn(afterB, id), "applied");
  assert.deepEqual(afterB.pending, []);
  const detail = await api<ActionDetail>(gatewayB, CAROL, "GET", `/api/workspaces/${ws}/actions/${id}`);
  assert.equal(detail.body.action.status, "applied");
  assert.equal(detail.body.action.decidedBy, "alice");
  assert.equal(entitiesNamed("Crossed"), 1, "applied once");

  // Two approval processes each follow the store and publish: gateway B forwards each event once.
  const revisions = streamB.events
    .filter((e) => e.event === "notice" && (e.data as LogNotice).workspaceId === ws)
    .map((e) => (e.data as LogNotice).revision);
  assert.deepEqual(revisions, [...new Set(revisions)], "no notice delivered twice");
});

test("the same action approved through gateway A and gateway B at once: one approval wins, the other is 409 conflict, the write is applied once", async () => {
  const head = (await inboxOf(gatewayA, ALICE)).revision;
  const id = await agentWrites("Raced");
  // Both gateways' approval processes know the action before the race: each inbox read waits until
  // its read model has every event stored before the call (read-your-writes), so one read each shows it.
  assert.ok(
    (await inboxOf(gatewayA, ALICE)).pending.some((a) => a.id === id),
    "A sees the write",
  );
  assert.ok(
    (await inboxOf(gatewayB, BOB)).pending.some((a) => a.id === id),
    "B sees the write",
  );
  const submitted = await noticeOnB("ActionSubmitted", head);

  const path = `/api/workspaces/${ws}/actions/${id}/approve`;
  const [viaA, viaB] = await Promise.all([
    api<DecisionResult | ApiError>(gatewayA, ALICE, "POST", path, {}),
    api<DecisionResult | ApiError>(gatewayB, BOB, "POST", path, {}),
  ]);
  const statuses = [viaA.status, viaB.status].sort();
  assert.deepEqual(statuses, [200, 409], `A: ${JSON.stringify(viaA)}; B: ${JSON.stringify(viaB)}`);
  const [won, lost] = viaA.status === 200 ? [viaA, viaB] : [viaB, viaA];
  const winner = won === viaA ? "alice" : "bob";
  const error = (lost.body as ApiError).error;
  assert.equal(error.code, "conflict");
  assert.match(error.message, new RegExp(`action ${id} was already approved by ${winner}`));
  assert.ok(
    (won.body as DecisionResult).actions.some((a) => a.id === id),
    "the winner's answer carries the action",
  );

  // The apply runs on the lifecycle worker: wait for its notice, then one read shows it.
  const applied = await noticeOnB("ActionApplied", submitted.revision);
  await noticeOnB("TurnResumed", applied.revision); // the last event of this write (see the first test)
  const final = await inboxOf(gatewayA, ALICE);
  assert.equal(statusIn(final, id), "applied");
  assert.equal([...final.pending, ...final.recent].find((a) => a.id === id)?.decidedBy, winner);
  assert.equal(entitiesNamed("Raced"), 1, "the memory server holds the entity once");
  const detail = await api<ActionDetail>(gatewayB, BOB, "GET", `/api/workspaces/${ws}/actions/${id}`);
  assert.equal(detail.body.action.status, "applied");
});

test("after the decisions both gateways' /api/inbox agree", async () => {
  // Nothing is appended now (each write's turn has resumed), and each read includes every event
  // stored before it: one read each.
  const [viewA, viewB] = await Promise.all([inboxOf(gatewayA, CAROL), inboxOf(gatewayB, CAROL)]);
  assert.equal(viewA.revision, viewB.revision);
  assert.deepEqual(viewA, viewB);
  assert.deepEqual(viewA.pending, []);
  assert.deepEqual(
    viewA.recent.map((x) => x.status),
    ["applied", "applied"],
  );
  for (const [token, name] of [
    [ALICE, "alice"],
    [BOB, "bob"],
  ] as const) {
    const mine = await Promise.all([inboxOf(gatewayA, token), inboxOf(gatewayB, token)]);
    assert.deepEqual(mine[0], mine[1], `${name}'s inbox through A and through B`);
  }
});
