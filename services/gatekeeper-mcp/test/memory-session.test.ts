/**
 * End-to-end against the REAL memory MCP server (stdio, behind a counting tee) through the
 * gatekeeper's gRPC OpenSession/ApplyAction, with a FakeApprovalQueue standing in for
 * services/approval (the real approval service is tested with this gatekeeper in the
 * cross-service suite).
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { readApplyOutcome } from "@gatehouse/gatekeeper-kit";
import { ActionStatus, Delivery, type ResolveResourceResponse } from "@gatehouse/proto";
import { status } from "@grpc/grpc-js";
import {
  callsReachingServer,
  countedStdio,
  type Harness,
  MEMORY_SERVER,
  openBinding,
  rejects,
  startHarness,
  tempDir,
  unary,
} from "./helpers.ts";

let h: Harness;
let tmp: ReturnType<typeof tempDir>;
let memoryFile: string;
let countFile: string;

before(async () => {
  tmp = tempDir();
  memoryFile = join(tmp.dir, "memory.jsonl");
  countFile = join(tmp.dir, "calls.txt");
  h = await startHarness({
    servers: {
      memory: {
        ...countedStdio(countFile, MEMORY_SERVER, [], { MEMORY_FILE_PATH: memoryFile }),
        restrictedTools: ["open_nodes"],
      },
    },
  });
});
after(async () => {
  await h.close();
  tmp.remove();
});

const entity = { entities: [{ name: "alice", entityType: "person", observations: ["likes tea"] }] };

test("ResolveResource lists the memory tools with binding, trust, methods and normalized url", async () => {
  const res = await unary<{ url: string; name: string }, ResolveResourceResponse>(
    h.client.resolveResource.bind(h.client),
    { url: "mcp://memory#tool=read_graph&tool=create_entities", name: "" },
  );
  assert.equal(res.binding, "MEMORY");
  assert.equal(res.trust, "vetted");
  assert.deepEqual(res.methods, ["create_entities", "read_graph", "getActionResult"]);
  assert.equal(res.url, "mcp://memory#tool=create_entities&tool=read_graph");
  assert.match(res.dts, /interface MEMORY \{/);
  assert.match(
    res.dts,
    /create_entities\(args: MEMORY_Args\.create_entities\.Args, options\?: McpActionOptions\): Promise<McpPendingAction>;/,
  );
  assert.match(res.dts, /read_graph\(args\?: MEMORY_Args\.read_graph\.Args\): Promise<McpCallToolResult>;/);
  assert.doesNotMatch(res.dts, /delete_entities/);
});

test("a write is staged as pending without touching the server; ApplyAction changes it exactly once", async () => {
  const b = openBinding(h.client, "MEMORY", "mcp://memory");
  try {
    const before = callsReachingServer(countFile).length;
    const pending = (await b.stub.create_entities(entity)) as { status: string; actionId: number };
    assert.equal(pending.status, "pending");
    assert.equal(callsReachingServer(countFile).length, before, "no tools/call reached the server");
    assert.ok(
      !existsSync(memoryFile) || !readFileSync(memoryFile, "utf8").includes("alice"),
      "memory unchanged",
    );

    const sub = h.approval.submissions.find((s) => s.actionId === pending.actionId)!;
    assert.ok(sub, "SubmitAction was called");
    assert.equal(sub.callerToken.startsWith("gh1."), true);
    assert.match(sub.localId, /^[0-9a-f-]{36}$/);
    assert.deepEqual(JSON.parse(sub.payloadJson), { tool: "create_entities", arguments: entity });
    assert.equal(sub.description.delivery, Delivery.DELIVERY_AWAIT);
    assert.equal(sub.description.autoApprovable, false, "memory's create_entities is not idempotent");
    assert.deepEqual(sub.description.actionKind, {
      tag: "mcp.tool.create_entities",
      label: "Create entities",
    });
    assert.match(sub.description.description, /```json\n\{\n {2}"entities"/);

    const applied = await readApplyOutcome(
      h.client.applyAction({
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
    assert.equal(callsReachingServer(countFile).filter((n) => n === "create_entities").length, 1);
    const lines = readFileSync(memoryFile, "utf8")
      .split("\n")
      .filter((l) => l.includes('"alice"'));
    assert.equal(lines.length, 1, "entity written exactly once");

    // The approval service records the outcome; collecting it records an observation first.
    h.approval.records.set(pending.actionId, {
      ...h.approval.records.get(pending.actionId),
      status: ActionStatus.ACTION_STATUS_APPLIED,
      resultJson: applied.resultJson,
    });
    const obsBefore = h.approval.observationCalls.length;
    const result = (await b.stub.getActionResult(pending.actionId)) as {
      status: string;
      result: { content: unknown[] };
    };
    assert.equal(result.status, "applied");
    assert.ok(Array.isArray(result.result.content));
    assert.equal(h.approval.observationCalls.length, obsBefore + 1);
    assert.equal(h.approval.observationCalls.at(-1)!.description.kind, "mcp.tool.create_entities.result");
  } finally {
    b.close();
  }
});

test("a read records an observation (with the caller token) and returns the data", async () => {
  const b = openBinding(h.client, "MEMORY", "mcp://memory");
  try {
    const obsBefore = h.approval.observationCalls.length;
    const res = (await b.stub.read_graph()) as { content: { text: string }[] };
    assert.ok(res.content.length > 0);
    assert.equal(h.approval.observationCalls.length, obsBefore + 1);
    const obs = h.approval.observationCalls.at(-1)!;
    assert.equal(obs.description.kind, "mcp.tool.read_graph");
    assert.equal(obs.description.containsRestrictedData, false);
    assert.equal(obs.callerToken.startsWith("gh1."), true);
    const nodes = (await b.stub.open_nodes({ names: ["alice"] })) as unknown;
    assert.ok(nodes);
    assert.equal(
      h.approval.observationCalls.at(-1)!.description.containsRestrictedData,
      true,
      "restrictedTools flag",
    );
  } finally {
    b.close();
  }
});

test("a read whose observation is refused returns no data", async () => {
  const b = openBinding(h.client, "MEMORY", "mcp://memory");
  h.approval.refuseObservations = status.PERMISSION_DENIED;
  try {
    await rejects(b.stub.read_graph(), /approval service refused AuthorizeObservation \(PERMISSION_DENIED\)/);
  } finally {
    h.approval.refuseObservations = null;
    b.close();
  }
});

test("arguments that violate the input schema are refused before anything is recorded or sent", async () => {
  const b = openBinding(h.client, "MEMORY", "mcp://memory");
  try {
    const subs = h.approval.submissions.length;
    const calls = callsReachingServer(countFile).length;
    await rejects(b.stub.create_entities({ entities: [{ name: 1 }] }), /do not match its input schema/);
    assert.equal(h.approval.submissions.length, subs);
    assert.equal(callsReachingServer(countFile).length, calls);
  } finally {
    b.close();
  }
});

test("dependsOn maps earlier action ids to their local ids; an unknown id is a clear error", async () => {
  const b = openBinding(h.client, "MEMORY", "mcp://memory");
  try {
    const first = (await b.stub.create_entities(entity)) as { actionId: number };
    const second = (await b.stub.add_observations(
      { observations: [{ entityName: "alice", contents: ["x"] }] },
      { dependsOn: [first.actionId] },
    )) as { actionId: number };
    const firstSub = h.approval.submissions.find((s) => s.actionId === first.actionId)!;
    const secondSub = h.approval.submissions.find((s) => s.actionId === second.actionId)!;
    assert.deepEqual(secondSub.description.dependsOn, [firstSub.localId]);
    await rejects(
      b.stub.add_observations({ observations: [] }, { dependsOn: [999_999] }),
      /dependsOn names action 999999/,
    );
  } finally {
    b.close();
  }
});

test("a rejected or failed action reports its reason; ActionRejected is acknowledged", async () => {
  const b = openBinding(h.client, "MEMORY", "mcp://memory");
  try {
    const p = (await b.stub.create_entities(entity)) as { actionId: number };
    assert.deepEqual(await b.stub.getActionResult(p.actionId), { status: "pending" });
    h.approval.records.set(p.actionId, {
      ...h.approval.records.get(p.actionId),
      status: ActionStatus.ACTION_STATUS_REJECTED,
      reason: "not today",
    });
    assert.deepEqual(await b.stub.getActionResult(p.actionId), { status: "rejected", reason: "not today" });
    const ack = await unary(h.client.actionRejected.bind(h.client), {
      workspaceId: "ws-1",
      binding: "MEMORY",
      actionId: p.actionId,
      localId: "x",
    });
    assert.deepEqual(ack, {});
  } finally {
    b.close();
  }
});

test("only the permitted tools and getActionResult are callable on the session", async () => {
  const b = openBinding(h.client, "MEMORY", "mcp://memory#tool=read_graph");
  try {
    const calls = callsReachingServer(countFile).length;
    const subs = h.approval.submissions.length;
    await rejects(b.stub.create_entities(entity), /'create_entities' is not a method of this binding/);
    await rejects(b.stub.delete_entities({ entityNames: ["alice"] }));
    await rejects(b.stub.listTools(), /is not a method of this binding/);
    await rejects(b.stub.callTool({ name: "create_entities" }), /is not a method of this binding/);
    assert.equal(callsReachingServer(countFile).length, calls, "zero requests reached the server");
    assert.equal(h.approval.submissions.length, subs, "nothing submitted");
    assert.ok(await b.stub.read_graph());
  } finally {
    b.close();
  }
});

test("an empty tool= scope exposes nothing but getActionResult", async () => {
  const res = await unary<{ url: string; name: string }, ResolveResourceResponse>(
    h.client.resolveResource.bind(h.client),
    { url: "mcp://memory#tool=", name: "mem" },
  );
  assert.deepEqual(res.methods, ["getActionResult"]);
  assert.equal(res.binding, "MEM");
  const b = openBinding(h.client, "MEM", "mcp://memory#tool=");
  try {
    const calls = callsReachingServer(countFile).length;
    await rejects(b.stub.read_graph());
    assert.equal(callsReachingServer(countFile).length, calls);
  } finally {
    b.close();
  }
});

test("a malformed fragment is refused with an error naming the part (ResolveResource and OpenSession)", async () => {
  await assert.rejects(
    unary(h.client.resolveResource.bind(h.client), {
      url: "mcp://memory#tool=read_graph&mode=all",
      name: "",
    }),
    (e: { code: number; details: string }) => {
      assert.equal(e.code, status.INVALID_ARGUMENT);
      assert.match(e.details, /part "mode=all"/);
      return true;
    },
  );
  const b = openBinding(h.client, "MEMORY", "mcp://memory#tool=a&&tool=b");
  try {
    await rejects(b.stub.read_graph(), /empty part/);
    assert.equal(b.errors[0]?.code, status.INVALID_ARGUMENT);
  } finally {
    b.close();
  }
});

test("a scope naming a tool the server lacks is refused at ResolveResource", async () => {
  await assert.rejects(
    unary(h.client.resolveResource.bind(h.client), { url: "mcp://memory#tool=format_disk", name: "" }),
    /"format_disk"/,
  );
});

test("one MCP client per resource is reused across sessions", async () => {
  const before = await h.gk.metrics.registry.getSingleMetricAsString("gatekeeper_mcp_mcp_requests_total");
  const b1 = openBinding(h.client, "MEMORY", "mcp://memory");
  const b2 = openBinding(h.client, "MEMORY", "mcp://memory#tool=read_graph");
  try {
    await b1.stub.read_graph();
    await b2.stub.read_graph();
    const text = await h.gk.metrics.registry.getSingleMetricAsString("gatekeeper_mcp_mcp_requests_total");
    const inits = (s: string) => Number(/method="initialize",outcome="ok"} (\d+)/.exec(s)?.[1] ?? 0);
    assert.equal(inits(before), 1, "earlier tests connected once");
    assert.equal(inits(text), 1, "no new initialize for later sessions");
  } finally {
    b1.close();
    b2.close();
  }
});
