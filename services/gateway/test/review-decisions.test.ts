/**
 * The review contract at the gateway: an ActionRecord's summary, fields, risks, pre-flight warnings,
 * preview, digest and withdrawal reach the contract's Action; approve and approve-batch pass
 * `descriptionDigests` on to the approval service keyed by action id; the withdraw route calls
 * WithdrawApproval as the signed-in person; the approval service's refusals (FAILED_PRECONDITION)
 * answer 409 with its message naming the action.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type ActionRecord, ActionStatus, Delivery } from "@gatehouse/proto";
import { Metadata, status } from "@grpc/grpc-js";
import Fastify from "fastify";
import { type Backends, fromGrpcError, HttpError } from "../src/backends.ts";
import { toAction } from "../src/mapping.ts";
import { createMetrics } from "../src/metrics.ts";
import { decisionRoutes } from "../src/routes/decisions.ts";

const record: ActionRecord = {
  id: 12,
  workspaceId: "w1",
  binding: "FILES",
  localId: "~1",
  description: {
    title: "Write docs/a.md",
    description: "```\nDROP TABLE customers;\n```",
    descriptionIsComplete: true,
    delivery: Delivery.DELIVERY_SIMULATE,
    actionKind: { tag: "write_file", label: "Write a file" },
    autoApprovable: false,
    egress: false,
    implementsRevert: 0,
    summary: "Write 1 line to docs/a.md",
    fields: [{ name: "path", value: "docs/a.md" }],
    risks: [{ kind: "content", reason: "text holds `DROP TABLE customers` (line 1)" }],
    preflightWarnings: ["parent directory docs/ does not exist"],
    preview: "DROP TABLE customers;",
  } as ActionRecord["description"],
  dependsOn: [11],
  status: ActionStatus.ACTION_STATUS_PENDING,
  caller: { kind: "agent", id: "c1" },
  chatStartedBy: "user:ada",
  executionId: "t1.1.0",
  submittedAt: "2026-12-05T10:00:00.000Z",
  decidedBy: "",
  decidedAt: "",
  reason: "",
  cascadedFrom: 0,
  resultJson: "",
  outcomeUnknown: false,
  lastRevision: 12,
  descriptionDigest: "sha256:abc",
  withdrawnBy: "",
} as ActionRecord;

test("an action record's review fields reach the contract's action", () => {
  const a = toAction(record);
  assert.equal(a.summary, "Write 1 line to docs/a.md");
  assert.deepEqual(a.fields, [{ name: "path", value: "docs/a.md" }]);
  assert.deepEqual(a.risks, [{ kind: "content", reason: "text holds `DROP TABLE customers` (line 1)" }]);
  assert.deepEqual(a.preflightWarnings, ["parent directory docs/ does not exist"]);
  assert.equal(a.preview, "DROP TABLE customers;");
  assert.equal(a.descriptionDigest, "sha256:abc");
  assert.equal(a.withdrawnBy, "");
});

/** A Fastify app with the decision routes over a fake approval service that records its calls. */
async function appWith(answer: (method: string, req: unknown) => unknown) {
  const calls: { method: string; req: unknown }[] = [];
  const decisions = {
    approve: "approve",
    approveBatch: "approveBatch",
    withdrawApproval: "withdrawApproval",
  };
  const backends = {
    decisions,
    approval: async (method: string, req: unknown) => {
      calls.push({ method, req });
      return answer(method, req);
    },
  } as unknown as Backends;
  const app = Fastify();
  app.decorateRequest("person", undefined as unknown as never);
  app.addHook("onRequest", async (req) => {
    (req as unknown as { person: unknown }).person = {
      subject: "user:ada",
      name: "Ada",
      roles: ["approver"],
    };
  });
  app.setErrorHandler((err, _req, reply) => {
    const status =
      err instanceof HttpError ? err.statusCode : ((err as { statusCode?: number }).statusCode ?? 500);
    void reply.code(status).send({ message: (err as Error).message });
  });
  decisionRoutes(app, backends, createMetrics());
  await app.ready();
  return { app, calls };
}

test("approve-batch passes each action's digest to the approval service, keyed by action id", async () => {
  const { app, calls } = await appWith(() => ({ actions: [record] }));
  const res = await app.inject({
    method: "POST",
    url: "/api/workspaces/w1/approve-batch",
    payload: { actionIds: [12, 12], descriptionDigests: { "12": "sha256:abc" } },
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(calls.length, 1);
  assert.equal(calls[0]?.method, "approveBatch");
  assert.deepEqual(calls[0]?.req, {
    workspaceId: "w1",
    actionIds: [12],
    decidedBy: "user:ada",
    all: false,
    returnOnceRecorded: false,
    descriptionDigests: { 12: "sha256:abc" },
  });
  assert.equal(res.json().actions[0].descriptionDigest, "sha256:abc");
  await app.close();
});

test("approve passes its digests; a digest keyed by something other than an action id is refused before the approval service", async () => {
  const { app, calls } = await appWith(() => ({ actions: [record] }));
  const ok = await app.inject({
    method: "POST",
    url: "/api/workspaces/w1/actions/12/approve",
    payload: { includeDependencies: true, descriptionDigests: { "11": "d11", "12": "d12" } },
  });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.deepEqual((calls[0]?.req as { descriptionDigests: unknown } | undefined)?.descriptionDigests, {
    11: "d11",
    12: "d12",
  });
  const bad = await app.inject({
    method: "POST",
    url: "/api/workspaces/w1/approve-batch",
    payload: { actionIds: [12], descriptionDigests: { docs: "d" } },
  });
  assert.notEqual(bad.statusCode, 200);
  assert.match(bad.body, /descriptionDigests keys are action ids/);
  assert.equal(calls.length, 1, "a malformed body never reaches the approval service");
  await app.close();
});

test("withdraw calls WithdrawApproval as the signed-in person with the ids and reason", async () => {
  const { app, calls } = await appWith(() => ({ actions: [{ ...record, withdrawnBy: "user:ada" }] }));
  const res = await app.inject({
    method: "POST",
    url: "/api/workspaces/w1/withdraw",
    payload: { actionIds: [12], reason: "not yet" },
  });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(calls[0], {
    method: "withdrawApproval",
    req: { workspaceId: "w1", actionIds: [12], withdrawnBy: "user:ada", reason: "not yet" },
  });
  assert.equal(res.json().actions[0].withdrawnBy, "user:ada");
  await app.close();
});

test("a digest mismatch or an action already applying answers 409 with the message naming the action", async () => {
  const refusal = (details: string) =>
    fromGrpcError(
      Object.assign(new Error(details), {
        code: status.FAILED_PRECONDITION,
        details,
        metadata: new Metadata(),
      }),
      "approval",
    );
  const { app } = await appWith((method) => {
    throw refusal(
      method === "withdrawApproval"
        ? "action 12 is applying; its approval can no longer be withdrawn"
        : "action 12: the description digest sent does not match",
    );
  });
  const batch = await app.inject({
    method: "POST",
    url: "/api/workspaces/w1/approve-batch",
    payload: { actionIds: [12], descriptionDigests: { "12": "stale" } },
  });
  assert.equal(batch.statusCode, 409);
  assert.match(batch.json().message, /action 12/);
  const withdraw = await app.inject({
    method: "POST",
    url: "/api/workspaces/w1/withdraw",
    payload: { actionIds: [12] },
  });
  assert.equal(withdraw.statusCode, 409);
  assert.match(withdraw.json().message, /action 12 is applying/);
  await app.close();
});
