/**
 * The MCP session's bindings watch against a real kernel (gRPC, SQLite event store) that restarts:
 * the watch opens again from the last revision it saw, so a binding introduced while the kernel was
 * down still reaches the client as notifications/tools/list_changed, and tools/list then declares
 * it. The SDK's own Client talks to createAgentMcpServer over the SDK's in-memory transport.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { createAgentMcpServer } from "@gatehouse/agent-mcp";
import { type EventStore, openSqliteEventStore } from "@gatehouse/event-store";
import { type RunningKernel, startKernel } from "@gatehouse/kernel";
import { KernelClient, ResourceIntroduced } from "@gatehouse/proto";
import { callUnary, freePort, waitUntil } from "@gatehouse/service-kit";
import { credentials } from "@grpc/grpc-js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import pino from "pino";

let dir: string;
let store: EventStore;
let port: number;
let kernel: RunningKernel | undefined;

const start = async () =>
  startKernel({
    store,
    callerTokenSecret: "s".repeat(32),
    gatekeepers: {},
    sandboxRunnerAddress: "127.0.0.1:1",
    port,
    logger: pino({ level: "silent" }),
  });

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-watch-"));
  store = openSqliteEventStore(join(dir, "events.sqlite"));
  port = await freePort();
  kernel = await start();
});
after(async () => {
  await kernel?.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Appends a ResourceIntroduced as the kernel would (what the watch streams). */
async function introduce(ws: string, binding: string): Promise<void> {
  const data = ResourceIntroduced.toJSON({
    binding,
    url: `mcp://${binding.toLowerCase()}`,
    gatekeeper: "mcp",
    trust: "vetted",
    dts: `interface ${binding} { ping(): Promise<string>; }`,
    methods: ["ping"],
    actionKinds: { kinds: [] },
  });
  await store.append(
    `workspace-${ws}`,
    [{ type: "ResourceIntroduced", data, metadata: { actor: "user:t" } }],
    "any",
  );
}

test("a kernel restart: the watch opens again from its last revision and a change made meanwhile still arrives", async () => {
  const kernelClient = new KernelClient(`127.0.0.1:${port}`, credentials.createInsecure());
  const ws = await callUnary(kernelClient, kernelClient.createWorkspace, {
    name: "restart",
    owner: "user:dev-admin",
    members: [],
  });
  const session = createAgentMcpServer({
    kernel: kernelClient,
    workspaceId: ws.id,
    chatId: "watch",
    startedBy: "user:dev-approver",
    surface: "mcp-stdio",
  });
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await session.server.connect(serverSide);
  const client = new Client({ name: "watch-test", version: "0" });
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changed++;
  });
  await client.connect(clientSide);
  try {
    await session.ready;
    await introduce(ws.id, "BEFORE");
    await waitUntil("list_changed for the first binding", () => changed === 1);

    await kernel?.close();
    kernel = undefined;
    await introduce(ws.id, "WHILEDOWN");
    kernel = await start();
    await waitUntil("list_changed for the binding introduced while the kernel was down", () => changed === 2);
    const description = (await client.listTools()).tools[0]?.description ?? "";
    assert.match(description, /interface WHILEDOWN/);
    assert.match(description, /interface BEFORE/);
  } finally {
    await client.close();
    await session.close();
    kernelClient.close();
  }
});
