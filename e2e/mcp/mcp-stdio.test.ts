/**
 * `gatehouse mcp --workspace <id>` driven by the MCP SDK's own Client over stdio (and
 * createAgentMcpServer in-process, for close()), against the real services (kernel, approval,
 * lifecycle worker on a real Temporal dev server, the real memory and filesystem MCP servers, a
 * real git repository): the tools an agent sees, reads recorded before their result, simulated and
 * awaited writes, list_changed, bad input, and a client that goes away mid-execution.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { createAgentMcpServer, MAX_SNIPPET_BYTES } from "@gatehouse/agent-mcp";
import { MAX_CODE_BYTES } from "@gatehouse/kernel";
import { ActionStatus, ActionSubmitted, CodeExecuted } from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { git, makeBareRepo } from "../support/git-repo.ts";
import { type Harness, startHarness, unary } from "../support/harness.ts";
import { connectStdio, type StdioSession } from "../support/mcp-stdio-client.ts";

let h: Harness;
const sessions: StdioSession[] = [];
before(async () => {
  h = await startHarness();
});
after(async () => {
  await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  await h?.close();
});

async function session(ws: string): Promise<StdioSession> {
  const s = await connectStdio(h, ws);
  sessions.push(s);
  return s;
}

type ToolResult = {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};
const text = (r: ToolResult) => r.content.map((c) => c.text ?? "").join("\n");

async function execute(s: StdioSession, code: string, timeoutSeconds?: number): Promise<ToolResult> {
  const args: Record<string, unknown> = { code };
  if (timeoutSeconds) args.timeout_seconds = timeoutSeconds;
  return (await s.client.callTool({ name: "execute_code", arguments: args }, undefined, {
    timeout: 180_000,
  })) as ToolResult;
}

const streamOf = (ws: string) => h.stack.store.readStream(`workspace-${ws}`);

test("tools/list: execute_code carries the workspace's whole env .d.ts, and wait_for_decisions is there", async () => {
  const ws = await h.workspace("mcp://memory");
  const s = await session(ws);
  const { tools } = await s.client.listTools();
  assert.deepEqual(
    tools.map((t) => t.name),
    ["execute_code", "wait_for_decisions", "request_connection"],
  );
  const described = await unary(h.kernel, h.kernel.describeBindings, { workspaceId: ws });
  const exec = tools[0]!;
  assert.ok(exec.description?.includes(described.envDts.trimEnd()), "the description holds the env .d.ts");
  assert.match(exec.description ?? "", /simulated/);
  assert.match(exec.description ?? "", /wait_for_decisions/);
  assert.deepEqual(exec.inputSchema.required, ["code"]);
  assert.ok(exec.outputSchema, "execute_code declares its structured content");
  assert.match(s.chatId, /^[0-9a-f-]{36}$/, "the chat id is a fresh UUID printed on stderr");
});

test("execute_code a read: the observation is in the log, stamped agent{chatId}, before the result arrives", async () => {
  const ws = await h.workspace("mcp://memory");
  const s = await session(ws);
  const r = await execute(
    s,
    `export default async (env: any) => {
      console.log("reading");
      const g = await env.MEMORY.read_graph({});
      return { entities: g.entities?.length ?? 0 };
    }`,
  );
  assert.equal(r.isError, false, text(r));
  const sc = r.structuredContent as {
    observed: { id: number; binding: string }[];
    returnValue: unknown;
    executionId: string;
  };
  assert.deepEqual(sc.returnValue, { entities: 0 });
  assert.match(text(r), /reading/);
  assert.equal(sc.observed.length, 1);
  const [obs] = sc.observed;
  assert.match(text(r), new RegExp(`#${obs!.id} MEMORY`));
  // The result names the observation's log id: the kernel read it from the stream before answering,
  // and the stream holds it before the execution's CodeExecuted.
  const events = await streamOf(ws);
  const recorded = events.find((e) => e.revision === obs!.id);
  assert.equal(recorded?.type, "ObservationRecorded");
  assert.deepEqual(recorded?.metadata.caller, { kind: "agent", id: s.chatId });
  const executed = events.find(
    (e) => e.type === "CodeExecuted" && CodeExecuted.fromJSON(e.data).executionId === sc.executionId,
  );
  assert.ok(executed && executed.revision > obs!.id);
  const log = await unary(h.decisions, h.decisions.getLog, { workspaceId: ws });
  assert.ok(log.entries.some((e) => e.id === obs!.id && e.entry?.$case === "observation"));
});

test("a simulated git commit: the result lists it, and the next execute_code's read sees it", async () => {
  const bare = makeBareRepo(h.dir, join(h.dir, "repos", "mcp-sim.git"), { "docs/readme.md": "hello\n" });
  const ws = await h.workspace(`git+file://${bare}`);
  const s = await session(ws);
  const write = await execute(
    s,
    `export default async (env: any) =>
      env.REPO.commit({ branch: "main", message: "add notes", changes: [{ path: "docs/notes.md", content: "n\\n" }] })`,
  );
  assert.equal(write.isError, false, text(write));
  const submitted = (write.structuredContent as { submitted: { actionId: number; awaited: boolean }[] })
    .submitted;
  assert.equal(submitted.length, 1);
  assert.equal(submitted[0]!.awaited, false);
  assert.match(text(write), /simulated: later reads already show it/);
  assert.equal((write.structuredContent as { turnId?: string }).turnId, undefined);
  const read = await execute(s, "export default async (env: any) => env.REPO.listFiles({})");
  assert.match(JSON.stringify(read.structuredContent), /docs\/notes\.md/);
  assert.equal(git(bare, "log", "--format=%s", "main"), "initial", "nothing reached the repository");
});

test("an awaited MCP write: the result names the turn; wait_for_decisions returns its result once a person approves, or the rejection", async () => {
  const ws = await h.workspace("mcp://memory");
  const s = await session(ws);
  const r = await execute(
    s,
    `export default async (env: any) =>
      env.MEMORY.create_entities({ entities: [{ name: "McpAwaited", entityType: "t", observations: [] }] })`,
  );
  assert.equal(r.isError, false, text(r));
  const sc = r.structuredContent as { turnId: string; submitted: { actionId: number; awaited: boolean }[] };
  assert.ok(sc.turnId, "awaited writes suspend the turn");
  assert.equal(sc.submitted[0]!.awaited, true);
  assert.match(text(r), new RegExp(`call wait_for_decisions with turn_id "${sc.turnId}"`, "i"));
  const actionId = sc.submitted[0]!.actionId;

  const waiting = (await s.client.callTool({
    name: "wait_for_decisions",
    arguments: { turn_id: sc.turnId, timeout_seconds: 1 },
  })) as ToolResult;
  assert.equal((waiting.structuredContent as { stillWaiting: boolean }).stillWaiting, true);
  assert.match(text(waiting), /call wait_for_decisions again/i);

  const progress: string[] = [];
  const decided = s.client.callTool(
    { name: "wait_for_decisions", arguments: { turn_id: sc.turnId, timeout_seconds: 120 } },
    undefined,
    { timeout: 180_000, onprogress: (p) => progress.push(p.message ?? "") },
  ) as Promise<ToolResult>;
  await waitUntil("a progress notification while waiting", () => progress.length > 0);
  assert.match(progress[0]!, new RegExp(`actions ${actionId}`));
  await unary(h.decisions, h.decisions.approve, {
    workspaceId: ws,
    actionId,
    decidedBy: "user:approver",
    includeDependencies: false,
    descriptionDigests: {},
  });
  const done = await decided;
  assert.equal(done.isError, undefined);
  const turn = done.structuredContent as {
    state: string;
    results: { actionId: number; status: string; result?: unknown }[];
  };
  assert.equal(turn.state, "resumed");
  assert.deepEqual(
    turn.results.map((x) => [x.actionId, x.status]),
    [[actionId, "applied"]],
  );
  assert.match(JSON.stringify(turn.results[0]!.result), /McpAwaited/);
  assert.equal(
    h.memoryState().filter((l) => l.includes('"McpAwaited"')).length,
    1,
    "the server got the write once",
  );

  const second = await execute(
    s,
    `export default async (env: any) =>
      env.MEMORY.create_entities({ entities: [{ name: "McpRejected", entityType: "t", observations: [] }] })`,
  );
  const next = second.structuredContent as { turnId: string; submitted: { actionId: number }[] };
  await unary(h.decisions, h.decisions.reject, {
    workspaceId: ws,
    actionId: next.submitted[0]!.actionId,
    decidedBy: "user:approver",
    reason: "not this one",
  });
  const rejected = (await s.client.callTool(
    { name: "wait_for_decisions", arguments: { turn_id: next.turnId } },
    undefined,
    { timeout: 180_000 },
  )) as ToolResult;
  assert.equal((rejected.structuredContent as { state: string }).state, "completed");
  assert.match(text(rejected), /completed without resuming: .*not this one/);
  assert.match(text(rejected), new RegExp(`action ${next.submitted[0]!.actionId}: rejected — not this one`));
  assert.ok(!h.memoryState().some((l) => l.includes('"McpRejected"')));
});

test("connecting or removing a binding sends tools/list_changed, and tools/list then shows the new .d.ts", async () => {
  const ws = await h.workspace("mcp://memory");
  const s = await session(ws);
  const before = (await s.client.listTools()).tools[0]!.description ?? "";
  assert.doesNotMatch(before, /FILES/);
  const connect = await runCli("connect", ws, "mcp://files#tool=list_directory");
  assert.equal(connect.code, 0, connect.stderr);
  await waitUntil("notifications/tools/list_changed", () => s.listChanged() > 0);
  const afterList = (await s.client.listTools()).tools[0]!.description ?? "";
  assert.match(afterList, /FILES/);
  assert.match(afterList, /list_directory/);
  const disconnect = await runCli("disconnect", ws, "FILES", "--reason", "done");
  assert.equal(disconnect.code, 0, disconnect.stderr);
  await waitUntil("a second notifications/tools/list_changed", () => s.listChanged() > 1);
  assert.doesNotMatch((await s.client.listTools()).tools[0]!.description ?? "", /FILES/);
});

test("bad snippets are tool errors naming the reason: not TypeScript, no default export, a throw, too large", async () => {
  const ws = await h.workspace("mcp://memory");
  const s = await session(ws);
  const notTs = await execute(s, "export default async (env) => {\n  this is not code\n}");
  assert.equal(notTs.isError, true);
  assert.match(text(notTs), /SyntaxError.*line 2/);
  const noDefault = await execute(s, "export const x = 1;");
  assert.equal(noDefault.isError, true);
  assert.match(text(noDefault), /no default export/);
  const throws = await execute(s, 'export default async () => {\n  throw new Error("boom");\n}');
  assert.equal(throws.isError, true);
  assert.match(text(throws), /Error: boom \(line 2/);
  assert.equal(MAX_SNIPPET_BYTES, MAX_CODE_BYTES, "the MCP limit is the kernel's");
  for (const mib of [5, 12]) {
    // 12 MiB is past the SDK's default stdio read buffer (10 MiB), which would close the session.
    const huge = await execute(s, `export default async () => 1;\n//${"x".repeat(mib * 1024 * 1024)}`);
    assert.equal(huge.isError, true);
    assert.match(text(huge), new RegExp(`up to ${MAX_SNIPPET_BYTES} bytes \\(512 KiB\\)`));
  }
  const noCode = (await s.client.callTool({ name: "execute_code", arguments: {} })) as ToolResult;
  assert.equal(noCode.isError, true);
  assert.match(text(noCode), /code/);
  const events = await streamOf(ws);
  assert.equal(events.filter((e) => e.type === "CodeExecuted").length, 3, "refused snippets never ran");
});

test("an unknown tool is an MCP protocol error (-32602), not a tool result; an unknown turn is a tool error", async () => {
  const ws = await h.workspace();
  const s = await session(ws);
  const turn = (await s.client.callTool({
    name: "wait_for_decisions",
    arguments: { turn_id: "no-such-turn" },
  })) as ToolResult;
  assert.equal(turn.isError, true);
  assert.match(text(turn), /turn "no-such-turn" does not exist/);
  await assert.rejects(
    s.client.callTool({ name: "no_such_tool", arguments: {} }),
    (err: unknown) =>
      err instanceof McpError && err.code === ErrorCode.InvalidParams && /no_such_tool/.test(err.message),
  );
});

test("a client that goes away mid-execution leaves no half state: the execution finishes and its write stays pending", async () => {
  const ws = await h.workspace("mcp://memory", "mcp://files");
  const files = join(h.dir, "files");
  const s = await session(ws);
  const pid = s.transport.pid;
  const call = execute(
    s,
    `export default async (env: any) => {
      const w = await env.MEMORY.create_entities({ entities: [{ name: "Orphaned", entityType: "t", observations: [] }] });
      for (;;) {
        const dir = await env.FILES.list_directory({ path: ${JSON.stringify(files)} });
        if (JSON.stringify(dir).includes("go-${ws}.txt")) return w.actionId;
      }
    }`,
    120,
  ).catch((err: Error) => err);
  const submitted = await waitUntil("the snippet's write in the stream", async () =>
    (await streamOf(ws)).find((e) => e.type === "ActionSubmitted"),
  );
  const executionId = ActionSubmitted.fromJSON(submitted.data).executionId;
  await s.close(); // the client's pipes close, as when it dies
  assert.ok((await call) instanceof Error, "the client never got a result");
  await waitUntil("gatehouse mcp to exit", () => !alive(pid));
  writeFileSync(join(files, `go-${ws}.txt`), "go");
  const executed = await waitUntil("the execution's CodeExecuted", async () =>
    (await streamOf(ws)).find(
      (e) => e.type === "CodeExecuted" && CodeExecuted.fromJSON(e.data).executionId === executionId,
    ),
  );
  assert.equal(CodeExecuted.fromJSON(executed.data).ok, true, "the execution finished normally");
  const turn = await unary(h.kernel, h.kernel.getTurn, { workspaceId: ws, turnId: executionId, wait: false });
  assert.equal(turn.state, "suspended");
  assert.deepEqual(turn.awaitedActionIds, [submitted.revision]);
  const pending = await unary(h.decisions, h.decisions.listActions, { workspaceId: ws, pendingOnly: true });
  assert.deepEqual(
    pending.actions.map((a) => [a.id, a.status]),
    [[submitted.revision, ActionStatus.ACTION_STATUS_PENDING]],
  );
  assert.ok(!h.memoryState().some((l) => l.includes('"Orphaned"')), "nothing reached the memory server");
});

test("gatehouse mcp: an unknown workspace is a clear error; stdin ending stops it cleanly", async () => {
  const unknown = await runCli("mcp", "--workspace", "wnosuchthing");
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /workspace "wnosuchthing" does not exist/);
  assert.equal(unknown.stdout, "", "stdout stays the protocol's");
  const ws = await h.workspace();
  const child = spawn(
    process.execPath,
    ["--no-node-snapshot", "--import", "tsx", CLI, "mcp", "--workspace", ws],
    {
      env: cliEnv(),
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let err = "";
  let out = "";
  child.stderr.on("data", (c: Buffer) => {
    err += c.toString();
  });
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  await waitUntil("the serving line on stderr", () => /serving workspace/.test(err), { timeoutMs: 120_000 });
  child.stdin.end();
  assert.equal(await exited, 0);
  assert.equal(out, "");
});

test("gatehouse mcp: a stdin line that is not JSON is answered -32700 and one that is not JSON-RPC -32600 (no id), each named on stderr; the session reads on", async () => {
  const ws = await h.workspace();
  const child = spawn(
    process.execPath,
    ["--no-node-snapshot", "--import", "tsx", CLI, "mcp", "--workspace", ws],
    { env: cliEnv(), stdio: ["pipe", "pipe", "pipe"] },
  );
  let err = "";
  let out = "";
  child.stderr.on("data", (c: Buffer) => {
    err += c.toString();
  });
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  try {
    await waitUntil("the serving line on stderr", () => /serving workspace/.test(err), {
      timeoutMs: 120_000,
    });
    child.stdin.write(
      '{"jsonrpc":"2.0","id":1,"method":"ping"\n{"hello":"world"}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n',
    );
    const answers = await waitUntil(
      "three answers on stdout",
      () => {
        const lines = out.split("\n").filter((l) => l.trim() !== "");
        return lines.length >= 3 ? lines.map((l) => JSON.parse(l) as Record<string, unknown>) : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(
      answers.map((a) => [a.id, (a.error as { code?: number } | undefined)?.code]),
      [
        [undefined, -32700],
        [undefined, -32600],
        [2, undefined],
      ],
    );
    assert.match(
      JSON.stringify(answers[0]),
      /Parse error: a line on stdin is not JSON .*; send one JSON-RPC message per line/,
    );
    assert.deepEqual(answers[2]?.result, {}, "the next message is still answered");
    assert.match(err, /gatehouse mcp: Parse error: a line on stdin is not JSON/);
    assert.match(
      err,
      /gatehouse mcp: Invalid Request: a line on stdin is JSON but not a JSON-RPC 2\.0 message/,
    );
  } finally {
    child.stdin.end();
  }
  assert.equal(await exited, 0);
});

test("createAgentMcpServer: close() ends the session's WatchBindings stream", async () => {
  const ws = await h.workspace();
  const watches = async () => (await h.stack.kernelMetrics.bindingWatches.get()).values[0]?.value ?? 0;
  // Every stdio session still open holds one watch; closed ones let theirs go.
  const open = () => sessions.filter((s) => !s.closed).length;
  await waitUntil("the open sessions' watches only", async () => (await watches()) === open());
  const session = createAgentMcpServer({
    kernel: h.kernel,
    workspaceId: ws,
    chatId: "in-process",
    startedBy: "user:dev-approver",
    surface: "mcp-stdio",
  });
  await session.ready;
  await waitUntil("the session's watch at the kernel", async () => (await watches()) === open() + 1);
  await session.close();
  await waitUntil("the watch to end", async () => (await watches()) === open());
});

const CLI = resolve(import.meta.dirname, "../../apps/cli/src/main.ts");
const cliEnv = () => ({
  ...process.env,
  GATEHOUSE_KERNEL_ADDRESS: h.stack.addresses.kernel,
  GATEHOUSE_APPROVAL_ADDRESS: h.stack.addresses.approval,
  // The person the session acts for: gatehouse mcp refuses without one (CI has no USER).
  GATEHOUSE_USER: "dev-approver",
});

/** Runs the real CLI once; resolves its exit code and output. */
function runCli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--no-node-snapshot", "--import", "tsx", CLI, ...args], {
      env: cliEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.once("exit", (code) => done({ code, stdout, stderr }));
  });
}

function alive(pid: number | null): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
