/**
 * PrepareRevert (always refused: an MCP tool call has no generic inverse) and CheckObserver
 * (strategy A, private-only) against the REAL memory MCP server behind a counting tee, with the
 * FakeApprovalQueue standing in for services/approval. The gatekeeper logs at trace level into
 * memory so the tests can check that a credential never reaches a log line.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { readApplyOutcome } from "@gatehouse/gatekeeper-kit";
import {
  type CheckObserverRequest,
  type CheckObserverResponse,
  GatekeeperClient,
  type PrepareRevertRequest,
  type PrepareRevertResponse,
} from "@gatehouse/proto";
import { credentials, type ServiceError, status } from "@grpc/grpc-js";
import { pino } from "pino";
import { type McpGatekeeper, startMcpGatekeeper } from "../src/index.ts";
import { createRegistry } from "../src/registry.ts";
import {
  callsReachingServer,
  countedStdio,
  FakeApprovalQueue,
  MEMORY_SERVER,
  openBinding,
  tempDir,
  unary,
} from "./helpers.ts";

const CREDENTIAL = "alice:ghp_observer-credential-0123456789";

let tmp: ReturnType<typeof tempDir>;
let countFile: string;
let memoryFile: string;
let approval: FakeApprovalQueue;
let gk: McpGatekeeper;
let client: GatekeeperClient;
const logLines: string[] = [];

before(async () => {
  tmp = tempDir();
  countFile = join(tmp.dir, "calls.txt");
  memoryFile = join(tmp.dir, "memory.jsonl");
  approval = await new FakeApprovalQueue().start();
  gk = await startMcpGatekeeper({
    registry: createRegistry({
      servers: { memory: countedStdio(countFile, MEMORY_SERVER, [], { MEMORY_FILE_PATH: memoryFile }) },
      endpoints: { docs: { url: "https://mcp.example.com/mcp", vetted: true } },
    }),
    approvalAddress: `127.0.0.1:${approval.port}`,
    host: "127.0.0.1",
    port: 0,
    logger: pino({ level: "trace" }, { write: (line: string) => logLines.push(line) }),
  });
  client = new GatekeeperClient(`127.0.0.1:${gk.port}`, credentials.createInsecure());
});
after(async () => {
  client.close();
  await gk.close();
  approval.close();
  tmp.remove();
});

const revert = (req: Partial<PrepareRevertRequest>) =>
  unary<PrepareRevertRequest, PrepareRevertResponse>(client.prepareRevert.bind(client), {
    workspaceId: "ws-1",
    binding: "MEMORY",
    url: "mcp://memory",
    trust: "vetted",
    actionId: 1,
    localId: "l-1",
    payloadJson: "{}",
    resultJson: "",
    ...req,
  });

const check = (req: Partial<CheckObserverRequest>) =>
  unary<CheckObserverRequest, CheckObserverResponse>(client.checkObserver.bind(client), {
    url: "mcp://memory",
    observer: "user:alice",
    credential: CREDENTIAL,
    workspaceId: "ws-1",
    binding: "MEM",
    ...req,
  });

function rpcCount(method: string, code: string): Promise<number> {
  return gk.metrics.rpcs.get().then((m) => {
    const v = m.values.find((x) => x.labels.method === method && x.labels.code === code);
    return v?.value ?? 0;
  });
}

test("PrepareRevert of an applied MCP write is FAILED_PRECONDITION, stages nothing and calls no tool", async () => {
  const b = openBinding(client, "MEMORY", "mcp://memory");
  try {
    const entity = { entities: [{ name: "bob", entityType: "person", observations: ["drinks coffee"] }] };
    const pending = (await b.stub.create_entities(entity)) as { actionId: number };
    const sub = approval.submissions.find((s) => s.actionId === pending.actionId)!;
    assert.equal(sub.description.egress, false, "an MCP write goes to the bound server, not out");
    const applied = await readApplyOutcome(
      client.applyAction({
        workspaceId: "ws-1",
        binding: "MEMORY",
        url: "mcp://memory",
        trust: "vetted",
        actionId: pending.actionId,
        localId: sub.localId,
        payloadJson: sub.payloadJson,
        dependencyResults: {},
      }),
    );
    assert.equal(applied.ok, true, applied.error);

    const calls = callsReachingServer(countFile).length;
    const submissions = approval.submissions.length;
    const memory = readFileSync(memoryFile, "utf8");
    const refusedBefore = await rpcCount("PrepareRevert", "FAILED_PRECONDITION");
    await assert.rejects(
      revert({
        actionId: pending.actionId,
        localId: sub.localId,
        payloadJson: sub.payloadJson,
        resultJson: applied.resultJson,
      }),
      (e: ServiceError) => {
        assert.equal(e.code, status.FAILED_PRECONDITION);
        assert.match(
          e.details,
          new RegExp(`^action ${pending.actionId} \\(create_entities on MEMORY\\) cannot be reverted`),
        );
        assert.match(e.details, /an MCP tool call has no generic inverse/);
        assert.match(e.details, /Ask the agent to make the compensating call/);
        return true;
      },
    );
    assert.equal(callsReachingServer(countFile).length, calls, "no tools/call reached the server");
    assert.equal(approval.submissions.length, submissions, "nothing was submitted");
    assert.equal(readFileSync(memoryFile, "utf8"), memory, "memory unchanged");
    assert.equal(await rpcCount("PrepareRevert", "FAILED_PRECONDITION"), refusedBefore + 1);
  } finally {
    b.close();
  }
});

test("PrepareRevert names the field of a malformed request", async () => {
  await assert.rejects(revert({ payloadJson: "not json" }), (e: ServiceError) => {
    assert.equal(e.code, status.INVALID_ARGUMENT);
    assert.match(e.details, /^payload_json is not JSON/);
    return true;
  });
  await assert.rejects(
    revert({ payloadJson: '{"tool":"x","arguments":{}}', binding: "mem" }),
    (e: ServiceError) => {
      assert.equal(e.code, status.INVALID_ARGUMENT);
      assert.match(e.details, /^binding must be/);
      return true;
    },
  );
  await assert.rejects(
    revert({ payloadJson: '{"tool":"x","arguments":{}}', actionId: 0 }),
    (e: ServiceError) => {
      assert.equal(e.code, status.INVALID_ARGUMENT);
      assert.match(e.details, /^action_id must be/);
      return true;
    },
  );
});

test("CheckObserver is strategy A: never allowed, for registered servers, endpoints and pasted URLs", async () => {
  const calls = callsReachingServer(countFile).length;
  for (const [url, normalized] of [
    ["mcp://memory#tool=read_graph", "mcp://memory#tool=read_graph"],
    ["mcp://docs", "mcp://docs"],
    ["https://mcp.example.com/mcp", "https://mcp.example.com/mcp"],
    ["https://unlisted.example.org/mcp", "https://unlisted.example.org/mcp"],
  ] as const) {
    const res = await check({ url });
    assert.equal(res.allowed, false, url);
    assert.ok(res.reason.startsWith("A: MCP bindings are private to the workspace; "), res.reason);
    assert.ok(res.reason.includes(normalized), res.reason);
    assert.ok(!res.reason.includes("ghp_"), "the credential is not echoed");
  }
  assert.equal(callsReachingServer(countFile).length, calls, "no tool was called to answer");
});

test("CheckObserver refuses a bad observer or a resource it does not serve, naming the field", async () => {
  await assert.rejects(check({ observer: "alice" }), (e: ServiceError) => {
    assert.equal(e.code, status.INVALID_ARGUMENT);
    assert.match(e.details, /^observer must be "user:<id>"/);
    return true;
  });
  await assert.rejects(check({ url: "mcp://nowhere" }), (e: ServiceError) => {
    assert.equal(e.code, status.NOT_FOUND);
    assert.match(e.details, /mcp:\/\/nowhere names no registered server/);
    return true;
  });
  await assert.rejects(check({ url: "" }), (e: ServiceError) => e.code === status.INVALID_ARGUMENT);
});

test("a credential never reaches the gatekeeper's logs", () => {
  assert.ok(logLines.length > 0, "the gatekeeper logged something");
  const all = logLines.join("");
  assert.ok(!all.includes("ghp_observer-credential"), "credential absent from every log line");
});
