/**
 * Kernel.WatchBindings over the real gRPC server and a real SQLite event store: binding changes
 * appended by another process (a second store handle on the same file, as a second kernel would
 * be) reach a watcher; only changes after `after_revision` come; other events are not sent; an
 * unknown workspace is NOT_FOUND.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type EventStore, openSqliteEventStore } from "@gatehouse/event-store";
import { BindingRemoved, type BindingsChanged, KernelClient, ResourceIntroduced } from "@gatehouse/proto";
import { callUnary, waitUntil } from "@gatehouse/service-kit";
import { type ClientReadableStream, credentials, type ServiceError, status } from "@grpc/grpc-js";
import pino from "pino";
import { type RunningKernel, startKernel } from "../src/index.ts";

let dir: string;
let store: EventStore;
let other: EventStore;
let kernel: RunningKernel;
let client: KernelClient;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "kernel-watch-"));
  store = openSqliteEventStore(join(dir, "events.sqlite"));
  other = openSqliteEventStore(join(dir, "events.sqlite"));
  kernel = await startKernel({
    store,
    callerTokenSecret: "x".repeat(32),
    gatekeepers: {},
    sandboxRunnerAddress: "127.0.0.1:1",
    logger: pino({ level: "silent" }),
  });
  client = new KernelClient(`127.0.0.1:${kernel.port}`, credentials.createInsecure());
});
after(async () => {
  client.close();
  await kernel.close();
  await store.close();
  await other.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Appends a binding event the way the kernel does, through the other store handle. */
async function appendFromElsewhere(
  ws: string,
  type: "ResourceIntroduced" | "BindingRemoved",
  binding: string,
) {
  const data =
    type === "ResourceIntroduced"
      ? ResourceIntroduced.toJSON({
          binding,
          url: `mcp://${binding.toLowerCase()}`,
          gatekeeper: "mcp",
          trust: "vetted",
          dts: `interface ${binding} {}`,
          methods: [],
          actionKinds: undefined,
        })
      : BindingRemoved.toJSON({ binding, removedBy: "user:t", reason: "", grant: 1 });
  const res = await other.append(`workspace-${ws}`, [{ type, data, metadata: { actor: "user:t" } }], "any");
  return res.nextExpectedRevision;
}

function watch(workspaceId: string, afterRevision: number) {
  const got: BindingsChanged[] = [];
  let error: ServiceError | undefined;
  const stream: ClientReadableStream<BindingsChanged> = client.watchBindings({ workspaceId, afterRevision });
  stream.on("data", (c: BindingsChanged) => got.push(c));
  stream.on("error", (e: ServiceError) => {
    error = e;
  });
  return { got, error: () => error, stream };
}

test("binding changes appended by another process are streamed in order; other events are not", async () => {
  const ws = await callUnary(client, client.createWorkspace, { name: "watch", owner: "user:t", members: [] });
  const { revision } = await callUnary(client, client.describeBindings, { workspaceId: ws.id });
  const w = watch(ws.id, revision);
  const introduced = await appendFromElsewhere(ws.id, "ResourceIntroduced", "MEMORY");
  await other.append(
    `workspace-${ws.id}`,
    [{ type: "CodeExecuted", data: {}, metadata: { actor: "t" } }],
    "any",
  );
  const removed = await appendFromElsewhere(ws.id, "BindingRemoved", "MEMORY");
  await waitUntil("both changes", () => w.got.length >= 2);
  assert.deepEqual(w.got, [
    { revision: introduced, binding: "MEMORY", change: "introduced" },
    { revision: removed, binding: "MEMORY", change: "removed" },
  ]);
  w.stream.cancel();
});

test("only changes after after_revision are streamed: a watcher that read the bindings misses nothing and repeats nothing", async () => {
  const ws = await callUnary(client, client.createWorkspace, {
    name: "watch-after",
    owner: "user:t",
    members: [],
  });
  const first = await appendFromElsewhere(ws.id, "ResourceIntroduced", "FIRST");
  const second = await appendFromElsewhere(ws.id, "ResourceIntroduced", "SECOND");
  const w = watch(ws.id, first);
  await waitUntil("the change after the revision", () => w.got.length >= 1);
  const third = await appendFromElsewhere(ws.id, "ResourceIntroduced", "THIRD");
  await waitUntil("the live change", () => w.got.length >= 2);
  assert.deepEqual(
    w.got.map((c) => [c.revision, c.binding]),
    [
      [second, "SECOND"],
      [third, "THIRD"],
    ],
  );
  w.stream.cancel();
});

test("an unknown workspace is NOT_FOUND naming it", async () => {
  const w = watch("wnosuchspace", 0);
  const err = await waitUntil("the stream's error", () => w.error());
  assert.equal(err.code, status.NOT_FOUND);
  assert.match(err.details, /workspace "wnosuchspace" does not exist/);
  assert.deepEqual(w.got, []);
});
