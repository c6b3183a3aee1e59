/**
 * The gateway's MCP endpoint (`/mcp`, Streamable HTTP) driven by the MCP SDK's own Client over the
 * real stack: kernel, sandbox, approval service, the lifecycle worker on a real Temporal dev server,
 * the real server-memory MCP server and a real git repository. A session is one chat of one
 * workspace; reads are observed before the agent sees them, git writes are simulated, MCP writes wait
 * for a person who approves them through the gateway's HTTP API.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { InboxResponse, LogResponse } from "@gatehouse/gateway-contract";
import { waitUntil } from "@gatehouse/service-kit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { api } from "../support/gateway-client.ts";
import { git, makeBareRepo } from "../support/git-repo.ts";
import { type Harness, startHarness, unary } from "../support/harness.ts";
import { connectMcpHttp, mcpUrl, structuredOf, textOf } from "../support/mcp-http-client.ts";

let h: Harness;
let base: string;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

before(async () => {
  h = await startHarness();
  base = h.stack.addresses.gateway;
});
after(async () => {
  await h?.close();
});

interface Executed {
  ok: boolean;
  returnValue?: unknown;
  turnId?: string;
}

const events = async (ws: string) => h.stack.store.readStream(`workspace-${ws}`);

test("the SDK client lists the tools over Streamable HTTP; execute_code's description carries the workspace's env .d.ts", async () => {
  const ws = await h.workspace("mcp://memory");
  const mcp = await connectMcpHttp(base, ws, tokenOf("dev-approver"));
  try {
    assert.match(mcp.sessionId, /^[0-9a-f-]{36}$/, "the gateway answers with an Mcp-Session-Id");
    const { tools } = await mcp.client.listTools();
    const names = tools.map((t) => t.name);
    assert.ok(names.includes("execute_code") && names.includes("wait_for_decisions"), names.join(", "));
    const described = await unary(h.kernel, h.kernel.describeBindings, { workspaceId: ws });
    const exec = tools.find((t) => t.name === "execute_code");
    assert.ok(exec?.description?.includes(described.envDts), "the whole env .d.ts is in the description");
  } finally {
    await mcp.close();
  }
});

test("a binding connected mid-session reaches the client as notifications/tools/list_changed on its GET stream; closing the session ends its kernel watch", async () => {
  const ws = await h.workspace("mcp://memory");
  const watches = async () => (await h.stack.kernelMetrics.bindingWatches.get()).values[0]?.value ?? 0;
  await waitUntil("earlier sessions' watches to end", async () => (await watches()) === 0);
  const mcp = await connectMcpHttp(base, ws, tokenOf("dev-approver"));
  try {
    let changed = 0;
    mcp.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    await mcp.client.listTools(); // the session watches the bindings once it has read them
    await waitUntil("the session's kernel watch", async () => (await watches()) === 1);
    await unary(h.kernel, h.kernel.introduceResource, { workspaceId: ws, url: "mcp://files", name: "" });
    await waitUntil("notifications/tools/list_changed", () => changed > 0);
    const { tools } = await mcp.client.listTools();
    assert.match(tools.find((t) => t.name === "execute_code")?.description ?? "", /FILES/);
  } finally {
    await mcp.close();
  }
  await waitUntil("the kernel watch to end with the session", async () => (await watches()) === 0);
});

test("execute_code a read: the observation is in the log, stamped with the session's chat, before the result reaches the client", async () => {
  const ws = await h.workspace("mcp://memory");
  const mcp = await connectMcpHttp(base, ws, tokenOf("dev-approver"));
  try {
    const result = await mcp.client.callTool({
      name: "execute_code",
      arguments: {
        code: "export default async (env: any) => (await env.MEMORY.read_graph({})).content.length",
      },
    });
    const receivedAt = Date.now();
    assert.equal(result.isError, false, textOf(result));
    assert.equal(structuredOf<Executed>(result).returnValue, 1);
    const observed = (await events(ws)).filter((e) => e.type === "ObservationRecorded");
    assert.equal(observed.length, 1);
    assert.deepEqual(observed[0]?.metadata.caller, { kind: "agent", id: mcp.sessionId });
    assert.ok(Date.parse(observed[0]?.metadata.occurredAt ?? "") <= receivedAt);
    const log = await api<LogResponse>(base, tokenOf("dev-auditor"), "GET", `/api/workspaces/${ws}/log`);
    assert.deepEqual(
      log.body.entries.filter((e) => e.kind === "observation").map((e) => e.id),
      [observed[0]?.revision],
    );
  } finally {
    await mcp.close();
  }
});

test("a simulated git write: the agent's next execute_code read sees the commit; the repository does not have it", async () => {
  const bare = makeBareRepo(h.dir, join(h.dir, "repos", "mcp-http.git"), { "docs/readme.md": "hello\n" });
  const ws = await h.workspace(`git+file://${bare}`);
  const mcp = await connectMcpHttp(base, ws, tokenOf("dev-approver"));
  try {
    const write = await mcp.client.callTool({
      name: "execute_code",
      arguments: {
        code: `export default async (env: any) => (await env.REPO.commit({ branch: "main", message: "add notes", changes: [{ path: "docs/notes.md", content: "from the agent\\n" }] })).id`,
      },
    });
    assert.equal(write.isError, false, textOf(write));
    assert.equal(structuredOf<Executed>(write).returnValue, "~1");
    const read = await mcp.client.callTool({
      name: "execute_code",
      arguments: {
        code: `export default async (env: any) => await env.REPO.readFile({ path: "docs/notes.md" })`,
      },
    });
    assert.equal(read.isError, false, textOf(read));
    assert.equal(structuredOf<Executed>(read).returnValue, "from the agent\n");
    assert.equal(git(bare, "log", "--format=%s", "main"), "initial", "nothing reached the repository");
  } finally {
    await mcp.close();
  }
});

test("an awaited MCP write: the result names the turn, wait_for_decisions streams progress and returns once a person approves through the gateway API, and the server got the write once", async () => {
  const ws = await h.workspace("mcp://memory");
  const mcp = await connectMcpHttp(base, ws, tokenOf("dev-approver"));
  try {
    const submitted = await mcp.client.callTool({
      name: "execute_code",
      arguments: {
        code: `export default async (env: any) => (await env.MEMORY.create_entities({ entities: [{ name: "Mira", entityType: "person", observations: ["via MCP over HTTP"] }] })).actionId`,
      },
    });
    assert.equal(submitted.isError, false, textOf(submitted));
    const { returnValue: actionId, turnId } = structuredOf<Executed>(submitted);
    assert.ok(turnId, "awaited writes suspend the turn");
    assert.match(textOf(submitted), new RegExp(turnId), "the text names the turn");
    assert.ok(!h.memoryState().some((l) => l.includes("Mira")), "nothing applied before a decision");
    let progressed = 0;
    const waiting = mcp.client.callTool(
      { name: "wait_for_decisions", arguments: { turn_id: turnId, timeout_seconds: 50 } },
      undefined,
      { timeout: 120_000, onprogress: () => progressed++ },
    );
    // The wait streams progress on its SSE response through the gateway (one per 10 s slice).
    await waitUntil("a progress notification of the wait", () => progressed > 0);
    const approved = await api(
      base,
      tokenOf("dev-approver"),
      "POST",
      `/api/workspaces/${ws}/actions/${actionId}/approve`,
      {},
    );
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    const decided = await waiting;
    assert.notEqual(decided.isError, true, textOf(decided));
    const turn = structuredOf<{ state: string; results: Array<{ actionId: number; status: string }> }>(
      decided,
    );
    assert.equal(turn.state, "resumed");
    assert.deepEqual(
      turn.results.map((r) => [r.actionId, r.status]),
      [[actionId, "applied"]],
    );
    assert.equal(
      h.memoryState().filter((l) => l.includes('"Mira"')).length,
      1,
      "the write reached the server once",
    );
  } finally {
    await mcp.close();
  }
});

test("a 5 MB snippet is refused with 413 naming the limits, a 600 KiB one gets execute_code's tool error, and the session carries on", async () => {
  const ws = await h.workspace("mcp://memory");
  const mcp = await connectMcpHttp(base, ws, tokenOf("dev-approver"));
  try {
    await assert.rejects(
      mcp.client.callTool({ name: "execute_code", arguments: { code: `// ${"x".repeat(5_000_000)}` } }),
      (err: Error) =>
        /413|larger than the MCP endpoint's limit of 1048576 bytes/.test(err.message) &&
        /512 KiB/.test(err.message),
    );
    const middling = await mcp.client.callTool({
      name: "execute_code",
      arguments: { code: `// ${"x".repeat(600 * 1024)}\nexport default async () => 1` },
    });
    assert.equal(middling.isError, true);
    assert.match(textOf(middling), /512 KiB|524288 bytes/);
    const after = await mcp.client.callTool({
      name: "execute_code",
      arguments: { code: "export default async () => 2" },
    });
    assert.equal(structuredOf<Executed>(after).returnValue, 2);
  } finally {
    await mcp.close();
  }
});

test("a session that disconnects mid-execution leaves no half state: the execution finishes, its pending write stays in the inbox", async () => {
  const ws = await h.workspace("mcp://memory");
  const mcp = await connectMcpHttp(base, ws, tokenOf("dev-approver"));
  const call = mcp.client
    .callTool({
      name: "execute_code",
      arguments: {
        code: `export default async (env: any) => {
          const p = await env.MEMORY.create_entities({ entities: [{ name: "Left", entityType: "person", observations: [] }] });
          const began = Date.now();
          while (Date.now() - began < 8000) {} // still running when the client goes away
          return p.actionId;
        }`,
        timeout_seconds: 60,
      },
    })
    .then(
      () => "answered",
      () => "dropped",
    );
  const approver = tokenOf("dev-approver");
  const inbox = async () =>
    (await api<InboxResponse>(base, approver, "GET", `/api/inbox?workspace=${ws}`)).body.workspaces[0]
      ?.pending ?? [];
  await waitUntil("the write in the inbox", async () => (await inbox()).length === 1);
  await mcp.transport.close(); // the client goes away mid-execution: its request is aborted
  assert.equal(await call, "dropped");
  await waitUntil("the execution to be recorded", async () =>
    (await events(ws)).some((e) => e.type === "CodeExecuted"),
  );
  const types = (await events(ws)).map((e) => e.type);
  assert.equal(types.filter((t) => t === "ActionSubmitted").length, 1);
  assert.ok(types.includes("TurnSuspended"), types.join(", "));
  const pending = await inbox();
  assert.equal(pending.length, 1, "the pending write stays in the inbox");
  assert.ok(!h.memoryState().some((l) => l.includes("Left")), "nothing was applied");
  const verified = await unary(h.decisions, h.decisions.verify, { workspaceId: ws });
  assert.equal(verified.ok, true);
  const again = await connectMcpHttp(base, ws, approver);
  try {
    const r = await again.client.callTool({
      name: "execute_code",
      arguments: { code: "export default async () => 3" },
    });
    assert.equal(structuredOf<Executed>(r).returnValue, 3, "the endpoint serves a new session");
  } finally {
    await again.close();
  }
});

test("a large execute_code return value is carried once in the MCP result (bytes measured on the wire, the SDK client validating the output schema); a small one is in the text and in structuredContent", async () => {
  const ws = await h.workspace("mcp://memory");
  /** Bytes of the HTTP response to each tools/call POST, in order. */
  const callBytes: Promise<number>[] = [];
  const transport = new StreamableHTTPClientTransport(mcpUrl(base, ws), {
    requestInit: { headers: { authorization: `Bearer ${tokenOf("dev-approver")}` } },
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      if (init?.method === "POST" && String(init.body).includes('"tools/call"'))
        callBytes.push(
          res
            .clone()
            .arrayBuffer()
            .then((b) => b.byteLength),
        );
      return res;
    },
  });
  const client = new Client({ name: "gatehouse-test", version: "0.1.0" });
  await client.connect(transport);
  try {
    // Listing first makes the SDK client check every result against execute_code's outputSchema.
    await client.listTools();
    const VALUE_BYTES = 512 * 1024;
    const large = await client.callTool({
      name: "execute_code",
      arguments: { code: `export default async () => "v".repeat(${VALUE_BYTES})` },
    });
    assert.equal(large.isError, false, textOf(large).slice(0, 500));
    const wire = await callBytes[0]!;
    assert.ok(wire > VALUE_BYTES, `the value reached the client (${wire} bytes)`);
    assert.ok(wire < VALUE_BYTES * 1.1, `the value is on the wire once: ${wire} bytes for ${VALUE_BYTES}`);
    const chunk = "v".repeat(1024);
    assert.equal(JSON.stringify(large).split(chunk).length - 1, VALUE_BYTES / 1024, "once in the result");
    const blocks = large.content as Array<{ type: string; text: string }>;
    assert.equal(blocks.length, 2);
    assert.match(
      blocks[0]!.text,
      new RegExp(`Returned: ${VALUE_BYTES + 2} bytes of JSON, the next content block`),
    );
    assert.equal(JSON.parse(blocks[1]!.text), "v".repeat(VALUE_BYTES));
    const sc = structuredOf<{ returnValue?: unknown; returnValueInContent?: boolean; ok: boolean }>(large);
    assert.deepEqual([sc.ok, sc.returnValue, sc.returnValueInContent], [true, undefined, true]);

    const small = await client.callTool({
      name: "execute_code",
      arguments: { code: "export default async () => ({ answer: 42 })" },
    });
    assert.equal(small.isError, false, textOf(small));
    assert.deepEqual(structuredOf<Executed>(small).returnValue, { answer: 42 });
    assert.match(textOf(small), /Returned: \{"answer":42\}/);
    assert.equal((small.content as unknown[]).length, 1);
    assert.ok((await callBytes[1]!) < 4096, "a small result stays small");
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
});
