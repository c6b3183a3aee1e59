import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { ResolveResourceResponse } from "@gatehouse/proto";
import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { InvalidRequest } from "../src/errors.ts";
import { unaryHandler } from "../src/unary.ts";
import { startGatekeeper } from "./helpers.ts";

/** Records what the handler reports, in the shape prom-client's Counter/Histogram offer. */
class RecordingMetrics {
  readonly counted: { method: string; code: string }[] = [];
  readonly timed: string[] = [];
  readonly stopped: string[] = [];
  readonly rpcs = { inc: (labels: { method: string; code: string }) => this.counted.push(labels) };
  readonly rpcSeconds = {
    startTimer: ({ method }: { method: string }) => {
      this.timed.push(method);
      return () => this.stopped.push(method);
    },
  };
}

const metrics = new RecordingMetrics();
const logged: object[] = [];
const deps = { metrics, logger: { error: (obj: object) => logged.push(obj) } };
const SECRET = "first line\n/srv/secret/path token=abc123";

const RESOLVED: ResolveResourceResponse = {
  binding: "REPO",
  trust: "byo",
  dts: "",
  methods: ["read"],
  url: "test://repo",
  actionKinds: { kinds: [] },
};

const gk = await startGatekeeper({
  resolveResource: unaryHandler("ResolveResource", deps, async (req) => {
    if (req.name === "BAD") throw new InvalidRequest('name "BAD" is reserved; pick another');
    if (req.name === "SYNC") {
      // A synchronous throw inside an async-looking handler must still be answered.
      throw new TypeError(SECRET);
    }
    return { ...RESOLVED, binding: req.name || "REPO" };
  }),
  prepareRevert: unaryHandler("PrepareRevert", deps, () => {
    throw new Error(SECRET);
  }),
});
after(() => gk.close());

function resolve(name: string): Promise<ResolveResourceResponse> {
  return new Promise((res, rej) =>
    gk.client.resolveResource({ url: "test://repo", name }, new Metadata(), (e, r) => (e ? rej(e) : res(r))),
  );
}

test("a resolved handler answers with its value and counts OK, timing the call", async () => {
  const before = metrics.counted.length;
  assert.deepEqual(await resolve("DOCS"), { ...RESOLVED, binding: "DOCS" });
  assert.deepEqual(metrics.counted.slice(before), [{ method: "ResolveResource", code: "OK" }]);
  assert.equal(metrics.timed.at(-1), "ResolveResource");
  assert.equal(metrics.stopped.at(-1), "ResolveResource");
});

test("a GatekeeperError keeps its message and status, is counted by code name and not logged", async () => {
  const before = { counted: metrics.counted.length, logged: logged.length };
  await assert.rejects(resolve("BAD"), (e: ServiceError) => {
    assert.equal(e.code, status.INVALID_ARGUMENT);
    assert.equal(e.details, 'name "BAD" is reserved; pick another');
    return true;
  });
  assert.deepEqual(metrics.counted.slice(before.counted), [
    { method: "ResolveResource", code: "INVALID_ARGUMENT" },
  ]);
  assert.equal(logged.length, before.logged);
});

test("any other error, thrown or rejected, becomes INTERNAL; the log names it without its message", async () => {
  const before = { counted: metrics.counted.length, logged: logged.length };
  await assert.rejects(resolve("SYNC"), (e: ServiceError) => {
    assert.equal(e.code, status.INTERNAL);
    assert.ok(!e.details.includes("secret"), "the message does not reach the caller");
    return true;
  });
  await assert.rejects(
    new Promise((res, rej) =>
      gk.client.prepareRevert(
        {
          workspaceId: "ws-1",
          binding: "REPO",
          url: "test://repo",
          trust: "",
          actionId: 1,
          localId: "~1",
          payloadJson: "{}",
          resultJson: "{}",
        },
        (e, r) => (e ? rej(e) : res(r)),
      ),
    ),
    (e: ServiceError) => e.code === status.INTERNAL,
  );
  assert.deepEqual(metrics.counted.slice(before.counted), [
    { method: "ResolveResource", code: "INTERNAL" },
    { method: "PrepareRevert", code: "INTERNAL" },
  ]);
  const entries = logged.slice(before.logged) as Record<string, unknown>[];
  assert.deepEqual(
    entries.map((e) => [e.event, e.method, e.errName]),
    [
      ["rpc.internal_error", "ResolveResource", "TypeError"],
      ["rpc.internal_error", "PrepareRevert", "Error"],
    ],
  );
  assert.ok(!JSON.stringify(entries).includes("abc123"), "the log never carries the message");
  assert.equal(metrics.stopped.filter((m) => m === "PrepareRevert").length, 1);
});
