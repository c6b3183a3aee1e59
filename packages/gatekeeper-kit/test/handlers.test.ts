/**
 * The shared Gatekeeper service (`gatekeeperHandlers`), its metrics (`gatekeeperMetrics`) and the
 * binding name rule (`bindingNameOf`), called the way grpc-js calls a unary handler.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ActionRejectedRequest, CheckObserverRequest, GatekeeperServer } from "@gatehouse/proto";
import type { ServiceError } from "@grpc/grpc-js";
import { bindingNameOf, type GatekeeperParts, gatekeeperHandlers } from "../src/handlers.ts";
import { gatekeeperMetrics } from "../src/metrics.ts";

/** Calls a unary handler of `impl` with `request`; resolves with its answer or rejects with its error. */
function callUnary<Req, Res>(handler: GatekeeperServer[keyof GatekeeperServer], request: Req): Promise<Res> {
  return new Promise((ok, ko) =>
    (handler as (call: { request: Req }, cb: (e: ServiceError | null, r?: Res) => void) => void)(
      { request },
      (e, r) => (e ? ko(e) : ok(r as Res)),
    ),
  );
}

function parts(over: Partial<GatekeeperParts> = {}): GatekeeperParts {
  const never = () => Promise.reject(new Error("not called in this test"));
  return {
    resolveResource: never,
    session: { start: never },
    apply: never,
    prepareRevert: never,
    checkObserver: async () => ({ allowed: false, reason: "private only" }),
    ...over,
  };
}

function recordingLogger() {
  const lines: object[] = [];
  const log = (obj: object) => lines.push(obj);
  return { lines, logger: { info: log, warn: log, error: log } };
}

test("gatekeeperMetrics names the shared metrics after the service, on a registry of its own", async () => {
  const m = gatekeeperMetrics("gatekeeper-test", false);
  m.rpcs.inc({ method: "ResolveResource", code: "OK" });
  m.sessions.inc(1);
  const text = await m.registry.metrics();
  assert.match(text, /gatekeeper_test_rpcs_total\{method="ResolveResource",code="OK"\} 1/);
  assert.match(text, /gatekeeper_test_sessions 1/);
  assert.match(text, /gatekeeper_test_rpc_seconds/);
  assert.doesNotMatch(text, /process_cpu/, "no process metrics without withDefaults");
});

test("bindingNameOf defaults an empty name and refuses one that is not an upper-case identifier", () => {
  assert.equal(bindingNameOf({ name: "" }, "REPO"), "REPO");
  assert.equal(bindingNameOf({ name: "DOCS_2" }, "REPO"), "DOCS_2");
  assert.throws(() => bindingNameOf({ name: "docs" }, "REPO"), /name "docs" must match/);
});

test("ActionRejected drops through dropRejected and logs the dropped ids; without it, it only acknowledges", async () => {
  const { lines, logger } = recordingLogger();
  const metrics = gatekeeperMetrics("gatekeeper-test", false);
  const seen: ActionRejectedRequest[] = [];
  const impl = gatekeeperHandlers(
    { logger, metrics },
    parts({
      dropRejected: (req) => {
        seen.push(req);
        return ["~1", "~2"];
      },
    }),
  );
  const req = { workspaceId: "ws-1", binding: "REPO", actionId: 7, localId: "~1" };
  assert.deepEqual(await callUnary(impl.actionRejected, req), {});
  assert.deepEqual(seen, [req]);
  assert.deepEqual(lines, [{ event: "action.rejected", actionId: 7, dropped: ["~1", "~2"] }]);

  const plain = recordingLogger();
  const ack = gatekeeperHandlers({ logger: plain.logger, metrics }, parts());
  assert.deepEqual(await callUnary(ack.actionRejected, req), {});
  assert.deepEqual(plain.lines, []);
});

test("CheckObserver answers with the gatekeeper's decision, logs it and counts the call", async () => {
  const { lines, logger } = recordingLogger();
  const metrics = gatekeeperMetrics("gatekeeper-test", false);
  const impl = gatekeeperHandlers({ logger, metrics }, parts());
  const req = { observer: "alice" } as CheckObserverRequest;
  assert.deepEqual(await callUnary(impl.checkObserver, req), { allowed: false, reason: "private only" });
  assert.deepEqual(lines, [{ event: "observer.checked", observer: "alice", allowed: false }]);
  assert.match(
    await metrics.registry.metrics(),
    /gatekeeper_test_rpcs_total\{method="CheckObserver",code="OK"\} 1/,
  );
});
