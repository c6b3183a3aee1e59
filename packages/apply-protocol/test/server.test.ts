/**
 * The server half of the apply protocol: applyStreamHandler over a real grpc-js server and client
 * on loopback: `running` while the apply
 * is in flight, then one outcome; errors as statuses; a caller that leaves never stops the apply.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { ApplyActionRequest, ApplyActionResponse, ApplyActionRunning } from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import { type ServiceError, status } from "@grpc/grpc-js";
import { readApplyOutcome } from "../src/caller.ts";
import { applyStreamHandler } from "../src/server.ts";
import { InvalidRequest, startGatekeeper, TEST_ERRORS } from "./helpers.ts";

const counted: { method: string; code: string }[] = [];
const warned: Record<string, unknown>[] = [];
const deps = {
  metrics: {
    rpcs: { inc: (labels: { method: string; code: string }) => counted.push(labels) },
    rpcSeconds: { startTimer: () => () => undefined },
  },
  logger: { error: () => undefined, warn: (obj: object) => warned.push(obj as Record<string, unknown>) },
  errors: TEST_ERRORS,
};

/** Applies pending on a release the test controls, keyed by local id. */
const releases = new Map<string, (r: ApplyActionResponse) => void>();
const finished: string[] = [];
const deadlines = new Map<string, number>();

const gk = await startGatekeeper({
  applyAction: applyStreamHandler(
    deps,
    async (req, ctx) => {
      deadlines.set(req.localId, ctx.deadline);
      if (req.localId === "bad") throw new InvalidRequest("payload_json is not JSON; stage it again");
      const outcome = await new Promise<ApplyActionResponse>((r) => releases.set(req.localId, r));
      finished.push(req.localId);
      return outcome;
    },
    20,
  ),
});
after(() => gk.close());

function request(localId: string, actionId = 7): ApplyActionRequest {
  return {
    workspaceId: "ws-1",
    binding: "REPO",
    url: "test://repo",
    trust: "byo",
    actionId,
    localId,
    payloadJson: "{}",
    dependencyResults: {},
  };
}

test("a long apply reports running at once and while in flight, then its outcome ends the stream", async () => {
  const running: ApplyActionRunning[] = [];
  const sent = Date.now();
  const call = gk.client.applyAction(request("slow"), { deadline: sent + 60_000 });
  const outcome = readApplyOutcome(call, (r) => running.push(r));
  await waitUntil("three running messages", () => running.length >= 3);
  assert.equal(running[0]?.elapsedMs !== undefined && running[0].elapsedMs < 1000, true);
  assert.ok(running.every((r) => r.nextWithinMs === 20));
  assert.ok((running[2]?.elapsedMs ?? 0) > (running[0]?.elapsedMs ?? 0), "elapsed grows");
  const deadline = deadlines.get("slow") ?? 0;
  assert.ok(
    deadline >= sent + 55_000 && deadline <= Date.now() + 60_000,
    "the caller's deadline is passed on",
  );
  releases.get("slow")?.({ ok: true, resultJson: '{"done":true}', error: "" });
  assert.deepEqual(await outcome, { ok: true, resultJson: '{"done":true}', error: "" });
  assert.deepEqual(counted.at(-1), { method: "ApplyAction", code: "OK" });
});

test("a refusal before the external call ends the stream with its status and message", async () => {
  await assert.rejects(readApplyOutcome(gk.client.applyAction(request("bad"))), (e: ServiceError) => {
    assert.equal(e.code, status.INVALID_ARGUMENT);
    assert.equal(e.details, "payload_json is not JSON; stage it again");
    return true;
  });
  assert.equal(deadlines.get("bad"), Number.POSITIVE_INFINITY, "no deadline set: Infinity");
});

test("a caller that stops waiting does not stop the apply; its late outcome is logged", async () => {
  const call = gk.client.applyAction(request("left", 9));
  const outcome = readApplyOutcome(call);
  await waitUntil("the apply to start", () => releases.has("left"));
  call.cancel();
  await assert.rejects(outcome, (e: ServiceError) => e.code === status.CANCELLED);
  const ofLeft = () => warned.filter((w) => w.actionId === 9).map((w) => w.event);
  await waitUntil("the gatekeeper to see the caller go", () => ofLeft().includes("apply.caller_left"));
  releases.get("left")?.({ ok: true, resultJson: "{}", error: "" });
  await waitUntil("the caller_gone log", () => ofLeft().includes("apply.caller_gone"));
  assert.ok(finished.includes("left"), "the apply ran to its end");
  assert.equal(warned.find((w) => w.event === "apply.caller_gone")?.ok, true);
  assert.deepEqual(
    warned.filter((w) => w.actionId === 7),
    [],
    "a caller that got its outcome is not reported as gone",
  );
});
