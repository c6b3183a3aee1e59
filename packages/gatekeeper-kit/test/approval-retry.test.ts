/**
 * The approval client retries a call whose reply was lost, with the same request, a bounded
 * number of times — against a real gRPC server on loopback that drops or fails replies.
 */
import assert from "node:assert/strict";
import { after, beforeEach, test } from "node:test";
import { status } from "@grpc/grpc-js";
import { connectApprovalQueue } from "../src/approval-client.ts";
import { ApprovalRefused } from "../src/errors.ts";
import { RecordingApprovalQueue } from "./helpers.ts";

const TOKEN = "gh1.caller-token.not-a-secret";
const fake = await new RecordingApprovalQueue().start();
// The reply a test drops is noticed when its attempt's deadline passes; replies that are not
// dropped come back well within it even on a busy machine.
const approval = connectApprovalQueue(`127.0.0.1:${fake.port}`, {
  retry: { attempts: 3, attemptTimeoutMs: 5_000, backoffMs: 10 },
});
// Every reply dropped: a short deadline keeps the test quick, and the count is the bound.
const impatient = connectApprovalQueue(`127.0.0.1:${fake.port}`, {
  retry: { attempts: 3, attemptTimeoutMs: 500, backoffMs: 10 },
});
after(() => {
  approval.close();
  impatient.close();
  fake.close();
});
beforeEach(() => {
  fake.refuse = null;
  fake.failNext = [];
  fake.dropReplies = 0;
});

const ACTION = {
  title: "Create directory",
  description: "d",
  descriptionIsComplete: true,
  delivery: 2,
  dependsOn: [],
  implementsRevert: 0,
  autoApprovable: false,
  actionKind: undefined,
  classifiedBy: "test",
  egress: false,
  summary: "",
  fields: [],
  risks: [],
  preflightWarnings: [],
  preview: "",
};
const READ = {
  title: "Read",
  description: "r",
  containsRestrictedData: false,
  kind: "mcp.tool.read",
  page: 0,
};

test("a SubmitAction whose reply was lost is sent again with the same local id and resolves to the recorded action", async () => {
  const before = fake.submissions.length;
  fake.dropReplies = 1;
  const id = await approval.submitAction(TOKEN, "lost-1", ACTION, '{"path":"a"}');
  const sent = fake.submissions.slice(before);
  assert.equal(sent.length, 2, "one retry after the lost reply");
  assert.deepEqual(sent[1], sent[0], "the retry is the same submission");
  // The server recorded one action under "lost-1"; the retry got that id.
  assert.equal(await approval.submitAction(TOKEN, "lost-1", ACTION, '{"path":"a"}'), id);
});

test("an AuthorizeObservation whose reply was lost is retried with the same request id", async () => {
  const before = fake.observations.length;
  fake.dropReplies = 1;
  const id = await approval.authorizeObservation(TOKEN, READ);
  const sent = fake.observations.slice(before);
  assert.equal(sent.length, 2);
  assert.ok(sent[0]?.requestId, "every read carries a request id");
  assert.equal(sent[1]?.requestId, sent[0]?.requestId);
  assert.ok(id > 0);
  // Another read is another request id, hence another observation.
  const other = await approval.authorizeObservation(TOKEN, READ);
  assert.notEqual(fake.observations.at(-1)?.requestId, sent[0]?.requestId);
  assert.notEqual(other, id);
});

test("UNAVAILABLE is retried; a refusal (FAILED_PRECONDITION) is not", async () => {
  const before = fake.submissions.length;
  fake.failNext = [status.UNAVAILABLE];
  await approval.submitAction(TOKEN, "flaky-1", ACTION, "{}");
  assert.equal(fake.submissions.length - before, 2);

  fake.failNext = [status.FAILED_PRECONDITION];
  await assert.rejects(approval.submitAction(TOKEN, "refused-1", ACTION, "{}"), /FAILED_PRECONDITION/);
  assert.equal(fake.submissions.length - before, 3, "a refusal is final");
});

test("retries are bounded: after the last attempt the error names the RPC, the status and the attempts", async () => {
  const before = fake.submissions.length;
  fake.dropReplies = 3;
  await assert.rejects(impatient.submitAction(TOKEN, "gone-1", ACTION, "{}"), (e: Error) => {
    assert.ok(e instanceof ApprovalRefused);
    assert.match(e.message, /SubmitAction \(DEADLINE_EXCEEDED\) after 3 attempts/);
    assert.ok(!e.message.includes(TOKEN));
    return true;
  });
  assert.equal(fake.submissions.length - before, 3);
});

test("an invalid retry option is refused naming it", () => {
  assert.throws(
    () => connectApprovalQueue("127.0.0.1:1", { retry: { attempts: 0 } }),
    /retry\.attempts must be an integer ≥ 1/,
  );
});
