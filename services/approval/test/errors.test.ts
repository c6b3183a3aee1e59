/** The one error → gRPC status mapping, for decision refusals and what the Temporal engine adds. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ActionNotPending } from "@gatehouse/approval-core";
import { status } from "@grpc/grpc-js";
import { ActionLifecycleFailed, LifecycleEngineUnavailable } from "../src/adapters/engine-errors.ts";
import { toStatus } from "../src/errors.ts";

test("an approval refused because someone approved first is ABORTED with the domain's words", () => {
  const s = toStatus(new ActionNotPending(7, "was already approved by user:alice", true));
  assert.equal(s.code, status.ABORTED);
  assert.equal(s.details, "action 7 was already approved by user:alice; nothing was changed");
});

test("a rejection of an approved action is FAILED_PRECONDITION, and so is an approval of a rejected action", () => {
  const r = toStatus(new ActionNotPending(7, "was already approved by user:alice", false));
  assert.equal(r.code, status.FAILED_PRECONDITION);
  const a = toStatus(new ActionNotPending(7, "was already rejected by user:alice", false));
  assert.equal(a.code, status.FAILED_PRECONDITION);
});

test("an unreachable Temporal server is UNAVAILABLE naming TEMPORAL_ADDRESS and the fix", () => {
  const s = toStatus(new LifecycleEngineUnavailable("127.0.0.1:7233", "deliver a decision"));
  assert.equal(s.code, status.UNAVAILABLE);
  assert.match(
    s.details,
    /Temporal at 127\.0\.0\.1:7233, TEMPORAL_ADDRESS\) could not deliver a decision; start the Temporal server/,
  );
});

test("a workflow that ended without an outcome is INTERNAL, naming the action and where to look", () => {
  const s = toStatus(new ActionLifecycleFailed(4, "action 4 could not be applied"));
  assert.equal(s.code, status.INTERNAL);
  assert.equal(s.expected, false);
  assert.match(
    s.details,
    /^action 4: its lifecycle workflow ended without an outcome \(action 4 could not be applied\).*worker's logs/,
  );
});
