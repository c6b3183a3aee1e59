/**
 * Rules that could never fire are refused with the reason, and retried gatekeeper calls get the
 * recorded answer: the approval service over real gRPC, a real SQLite store, a real Temporal dev
 * server and the real lifecycle worker process (harness.ts). Each test has its own workspace.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { mintCallerToken } from "@gatehouse/caller-token";
import { ResourceIntroduced, type SubmitActionResponse } from "@gatehouse/proto";
import { status } from "@grpc/grpc-js";
import { call, description, SECRET, type Stack, startHarness, startStack } from "./harness.ts";
import { rejects, revision } from "./suite-helpers.ts";

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.close();
});

const setRule = (ws: string, binding: string, tag: string, enabled = true) => ({
  workspaceId: ws,
  binding,
  actionKindTag: tag,
  enabled,
  setBy: "user:alice",
});

test("SetAutoApprovalRule refuses a tag the binding cannot carry, a kind that can never be auto-approved, and turning off a rule that never existed, with the reason; nothing is appended", async () => {
  const h = await startHarness(stack);
  try {
    const before = await revision(h);
    await rejects(
      call(h.decisions, "setAutoApprovalRule", setRule(h.ws, "MEM", "mcp.tool.create_entities")),
      status.INVALID_ARGUMENT,
      /no action of binding "MEM" can carry "mcp\.tool\.create_entities".*auto-approvable tags: "mcp\.tool\.add", "git\.commit"/,
    );
    await rejects(
      call(h.decisions, "setAutoApprovalRule", setRule(h.ws, "MEM", "mcp.tool.delete")),
      status.FAILED_PRECONDITION,
      /"mcp\.tool\.delete" on binding "MEM" can never be auto-approved \(annotations\.destructiveHint=true \(must be false\)\)/,
    );
    assert.equal(await revision(h), before, "a refused rule appends nothing");
    // Turning off a rule that never existed is refused the same way (NOT_FOUND, nothing appended).
    await rejects(
      call(h.decisions, "setAutoApprovalRule", setRule(h.ws, "MEM", "mcp.tool.delete", false)),
      status.NOT_FOUND,
      /binding "MEM" has no auto-approval rule for "mcp\.tool\.delete" that is on .*nothing was recorded/,
    );
    assert.equal(await revision(h), before, "turning off a rule that never existed appends nothing");
    // A valid rule is stored.
    await call(h.decisions, "setAutoApprovalRule", setRule(h.ws, "MEM", "mcp.tool.add"));
    const log = await call<unknown, { rules: Array<{ binding: string; actionKindTag: string }> }>(
      h.decisions,
      "getLog",
      { workspaceId: h.ws },
    );
    assert.deepEqual(log.rules, [{ binding: "MEM", actionKindTag: "mcp.tool.add" }]);
  } finally {
    await h.close();
  }
});

test("a rule names its binding in any case: `mem` sets the rule of MEM, as the kernel names bindings", async () => {
  const h = await startHarness(stack);
  try {
    await call(h.decisions, "setAutoApprovalRule", setRule(h.ws, " mem ", "mcp.tool.add"));
    const log = await call<unknown, { rules: Array<{ binding: string; actionKindTag: string }> }>(
      h.decisions,
      "getLog",
      { workspaceId: h.ws },
    );
    assert.deepEqual(log.rules, [{ binding: "MEM", actionKindTag: "mcp.tool.add" }]);
  } finally {
    await h.close();
  }
});

test("a binding introduced before action kinds were published refuses new rules, saying to introduce it again", async () => {
  const h = await startHarness(stack);
  try {
    await h.store.append(
      `workspace-${h.ws}`,
      [
        {
          type: "ResourceIntroduced",
          data: ResourceIntroduced.toJSON({
            binding: "OLD",
            url: "mcp+stdio://old",
            gatekeeper: "mcp",
            trust: "vetted",
            dts: "",
            methods: [],
            actionKinds: undefined,
          }),
          metadata: { actor: "user:alice" },
        },
      ],
      await revision(h),
    );
    await rejects(
      call(h.decisions, "setAutoApprovalRule", setRule(h.ws, "OLD", "mcp.tool.add")),
      status.FAILED_PRECONDITION,
      /binding "OLD" was introduced before its gatekeeper published its action kinds.*introduce the resource again/,
    );
  } finally {
    await h.close();
  }
});

test("a retried SubmitAction identical to the recorded one returns the same action and status, and appends nothing", async () => {
  const h = await startHarness(stack);
  try {
    const submission = {
      callerToken: h.token("MEM"),
      localId: "retry-1",
      description: description({ title: "Add a" }),
      payloadJson: '{"tool":"add"}',
    };
    const first = await call<unknown, SubmitActionResponse>(h.queue, "submitAction", submission);
    const at = await revision(h);
    const retry = await call<unknown, SubmitActionResponse>(h.queue, "submitAction", submission);
    assert.deepEqual(retry, first);
    assert.equal(await revision(h), at, "the retry appended nothing");

    // Under that local id, another payload, or another execution, is a conflict.
    await rejects(
      call(h.queue, "submitAction", { ...submission, payloadJson: '{"tool":"other"}' }),
      status.ALREADY_EXISTS,
      new RegExp(
        `"retry-1" was already submitted on binding "MEM" as action ${first.actionId} with a different payload`,
      ),
    );
    const otherExecution = mintCallerToken(SECRET, {
      workspaceId: h.ws,
      binding: "MEM",
      caller: { kind: "agent", id: "chat-1" },
      executionId: "exec-2",
    });
    await rejects(
      call(h.queue, "submitAction", { ...submission, callerToken: otherExecution }),
      status.ALREADY_EXISTS,
      /with a different execution/,
    );
    assert.equal(await revision(h), at);
  } finally {
    await h.close();
  }
});

test("a retried AuthorizeObservation (same request id and description) returns the recorded observation", async () => {
  const h = await startHarness(stack);
  try {
    const read = {
      callerToken: h.token("MEM"),
      description: {
        title: "Read graph",
        description: "",
        containsRestrictedData: false,
        kind: "mcp.tool.read_graph",
        page: 0,
      },
      requestId: "req-1",
    };
    const first = await call<unknown, { observationId: number }>(h.queue, "authorizeObservation", read);
    const at = await revision(h);
    const retry = await call<unknown, { observationId: number }>(h.queue, "authorizeObservation", read);
    assert.equal(retry.observationId, first.observationId);
    assert.equal(await revision(h), at, "the retry recorded nothing");
    await rejects(
      call(h.queue, "authorizeObservation", { ...read, description: { ...read.description, page: 1 } }),
      status.ALREADY_EXISTS,
      /request_id: "req-1" was already used on binding "MEM"/,
    );
    // Without a request id, every call is a read of its own.
    const a = await call<unknown, { observationId: number }>(h.queue, "authorizeObservation", {
      ...read,
      requestId: "",
    });
    const b = await call<unknown, { observationId: number }>(h.queue, "authorizeObservation", {
      ...read,
      requestId: "",
    });
    assert.notEqual(a.observationId, b.observationId);
  } finally {
    await h.close();
  }
});
