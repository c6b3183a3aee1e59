/**
 * Whose agent asked: an MCP session records ChatStarted{chat_id, started_by, surface} before its
 * first tool call (the gateway's /mcp: the token's person; `gatehouse mcp`: the CLI's person), and
 * the log's entries of that chat carry `chatStartedBy` — in GetLog, Replay, the gateway's action
 * detail and `gatehouse log`. Real stack: kernel, sandbox, approval, Temporal, server-memory.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import type { ActionDetail } from "@gatehouse/gateway-contract";
import type { LogView } from "@gatehouse/proto";
import { api } from "../support/gateway-client.ts";
import { type Harness, startHarness, unary } from "../support/harness.ts";
import { connectMcpHttp, structuredOf, textOf } from "../support/mcp-http-client.ts";
import { connectStdio } from "../support/mcp-stdio-client.ts";

let h: Harness;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

const chatsOf = async (ws: string) =>
  (await h.stack.store.readStream(`workspace-${ws}`)).filter((e) => e.type === "ChatStarted");

/** The chat owner of each entry of the log, as [kind, chatStartedBy]. */
function owners(view: LogView): Array<[string, string]> {
  return view.entries.map((e) => {
    const entry = e.entry;
    if (entry?.$case === "action") return ["action", entry.action.chatStartedBy];
    if (entry?.$case === "observation") return ["observation", entry.observation.chatStartedBy];
    return [entry?.$case ?? "", entry?.$case === "refusal" ? entry.refusal.chatStartedBy : ""];
  });
}

const READ_THEN_WRITE = `export default async (env: any) => {
  await env.MEMORY.read_graph({});
  return (await env.MEMORY.create_entities({ entities: [{ name: "Ola", entityType: "person", observations: ["asked by a chat"] }] })).actionId;
}`;

test("over /mcp the session's ChatStarted names the token's person before any tool call; its read and write carry it in GetLog, Replay, the action detail and gatehouse log", async () => {
  const ws = await h.workspace("mcp://memory");
  const base = h.stack.addresses.gateway;
  const mcp = await connectMcpHttp(base, ws, tokenOf("dev-approver"));
  try {
    const started = await chatsOf(ws);
    assert.equal(started.length, 1, "recorded at initialize, before any tool call");
    assert.deepEqual(started[0]?.data, {
      chatId: mcp.sessionId,
      startedBy: "user:dev-approver",
      surface: "mcp-http",
    });
    assert.deepEqual(started[0]?.metadata.caller, { kind: "agent", id: mcp.sessionId });

    const result = await mcp.client.callTool({ name: "execute_code", arguments: { code: READ_THEN_WRITE } });
    assert.equal(result.isError, false, textOf(result));
    const actionId = structuredOf<{ returnValue: number }>(result).returnValue;
    assert.equal((await chatsOf(ws)).length, 1, "a tool call records no second ChatStarted");

    const log = await unary(h.decisions, h.decisions.getLog, { workspaceId: ws });
    assert.deepEqual(owners(log), [
      ["observation", "user:dev-approver"],
      ["action", "user:dev-approver"],
    ]);
    const replayed = await unary(h.decisions, h.decisions.replay, {
      workspaceId: ws,
      untilRevision: log.revision,
    });
    assert.deepEqual(replayed, log, "replay rebuilds it from the stream");
    const verified = await unary(h.decisions, h.decisions.verify, { workspaceId: ws });
    assert.equal(verified.ok, true, verified.problem);

    const detail = await api<ActionDetail>(
      base,
      tokenOf("dev-auditor"),
      "GET",
      `/api/workspaces/${ws}/actions/${actionId}`,
    );
    assert.equal(detail.status, 200, JSON.stringify(detail.body));
    assert.deepEqual(detail.body.action.caller, { kind: "agent", id: mcp.sessionId });
    assert.equal(detail.body.action.chatStartedBy, "user:dev-approver");

    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "--no-node-snapshot",
        "--import",
        "tsx",
        join(import.meta.dirname, "../../apps/cli/src/main.ts"),
        "log",
        ws,
      ],
      { env: { ...process.env, GATEHOUSE_APPROVAL_ADDRESS: h.stack.addresses.approval } },
    );
    assert.match(stdout, /chat of/);
    assert.match(stdout, new RegExp(`│ ${actionId} +│ action .*│ dev-approver +│`));
  } finally {
    await mcp.close();
  }
});

test("gatehouse mcp over stdio records the CLI's person (user:$GATEHOUSE_USER) as the chat's starter; its reads carry it", async () => {
  const ws = await h.workspace("mcp://memory");
  process.env.GATEHOUSE_USER = "stdio-person";
  const session = await connectStdio(h, ws);
  try {
    const started = await chatsOf(ws);
    assert.deepEqual(
      started.map((e) => e.data),
      [{ chatId: session.chatId, startedBy: "user:stdio-person", surface: "mcp-stdio" }],
    );
    const result = await session.client.callTool({
      name: "execute_code",
      arguments: {
        code: "export default async (env: any) => (await env.MEMORY.read_graph({})).content.length",
      },
    });
    assert.equal(result.isError, false, textOf(result));
    const log = await unary(h.decisions, h.decisions.getLog, { workspaceId: ws });
    assert.deepEqual(owners(log), [["observation", "user:stdio-person"]]);
  } finally {
    await session.close();
    delete process.env.GATEHOUSE_USER;
  }
});

test("Kernel.StartChat refuses a starter that is not a person, naming the field, and appends nothing", async () => {
  const ws = await h.workspace();
  const err = await unary(h.kernel, h.kernel.startChat, {
    workspaceId: ws,
    chatId: "c1",
    startedBy: "dev approver",
    surface: "mcp-http",
  }).then(
    () => assert.fail("accepted"),
    (e: { code: number; details: string }) => e,
  );
  assert.equal(err.code, 3);
  assert.match(err.details, /started_by must be a person as "user:<subject>"/);
  assert.deepEqual(await chatsOf(ws), []);
});
