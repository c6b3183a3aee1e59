/**
 * The compiled CLI against a Decisions service played by this test over real gRPC (grpc-js on
 * loopback), for what the real services cannot be made to do on cue: a batch whose actions stop
 * progressing (one applying forever, one never picked up), a WatchLog stream that breaks mid-batch
 * (the service restarting), and an action log larger than gRPC's default 4 MiB message limit.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import {
  ActionRecord,
  ActionStatus,
  type ApproveBatchRequest,
  DecisionsService,
  type ListActionsRequest,
  type LogChange,
  type WatchLogRequest,
} from "@gatehouse/proto";
import { listenGrpc, stopGrpc } from "@gatehouse/service-kit";
import {
  Server,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";

const BIN = join(import.meta.dirname, "..", "bin", "gatehouse.js");
const run = promisify(execFile);

let server: Server;
let address: string;
/** What the service does on each call; set per test. */
let onApproveBatch: (req: ApproveBatchRequest) => ActionRecord[] = () => [];
let onWatch: (call: ServerWritableStream<WatchLogRequest, LogChange>) => void = () => undefined;
let onList: (req: ListActionsRequest) => ActionRecord[] = () => [];
const watchRequests: WatchLogRequest[] = [];

function record(id: number, s: ActionStatus, lastRevision: number, title = `write ${id}`): ActionRecord {
  return ActionRecord.fromPartial({
    id,
    workspaceId: "w1",
    binding: "MEMORY",
    description: { title },
    status: s,
    decidedBy: "user:dev-approver",
    lastRevision,
  });
}

function change(revision: number, a: ActionRecord): LogChange {
  return { revision, type: "ActionChanged", entry: { id: a.id, entry: { $case: "action", action: a } } };
}

before(async () => {
  server = new Server();
  const unimplemented = (_call: unknown, cb: sendUnaryData<never>) =>
    cb({ code: status.UNIMPLEMENTED, details: "not played by this test" } as never, null);
  const handlers: Record<string, unknown> = {};
  for (const name of Object.keys(DecisionsService)) handlers[name] = unimplemented;
  server.addService(DecisionsService, {
    ...handlers,
    approveBatch: (call: ServerUnaryCall<ApproveBatchRequest, unknown>, cb: sendUnaryData<unknown>) =>
      cb(null, { actions: onApproveBatch(call.request) }),
    listActions: (call: ServerUnaryCall<ListActionsRequest, unknown>, cb: sendUnaryData<unknown>) =>
      cb(null, { actions: onList(call.request) }),
    watchLog: (call: ServerWritableStream<WatchLogRequest, LogChange>) => {
      watchRequests.push(call.request);
      onWatch(call);
    },
  });
  address = `127.0.0.1:${await listenGrpc(server, "127.0.0.1", 0)}`;
});
after(() => stopGrpc(server, 100));

async function gatehouse(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { ...process.env, GATEHOUSE_APPROVAL_ADDRESS: address },
      timeout: 120_000,
      maxBuffer: 256 * 1024 * 1024,
    });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

test("a batch that stops progressing ends after --stall-timeout naming what is stuck, across a broken watch", async () => {
  watchRequests.length = 0;
  let approved: ApproveBatchRequest | undefined;
  onApproveBatch = (req) => {
    approved = req;
    // Recorded at revisions 12–14, after the submissions (revisions 11–13, the ids).
    return req.actionIds.map((id) => record(id, ActionStatus.ACTION_STATUS_APPROVED, id + 1));
  };
  onWatch = (call) => {
    if (watchRequests.length === 1) {
      // Action 11 applies, then the stream breaks as when the approval service restarts.
      // Once the change is written, the stream breaks. (grpc-js ends a server stream with a status on
      // "error"; destroy(err) leaves the client waiting.)
      call.write(change(20, record(11, ActionStatus.ACTION_STATUS_APPLIED, 20)), () =>
        call.emit("error", { code: status.UNAVAILABLE, details: "restarting" }),
      );
    } else {
      // After the restart: 12 is claimed and never answered; 13 is never picked up.
      call.write(change(21, record(12, ActionStatus.ACTION_STATUS_APPLYING, 21)));
    }
  };
  const out = await gatehouse("approve", "w1", "11", "12", "13", "--stall-timeout", "3s", "--json");
  assert.equal(out.code, 1, out.stderr);
  assert.equal(approved?.returnOnceRecorded, true);
  // The watch starts at the first approved action's submission and resumes after the last change seen.
  assert.equal(watchRequests[0]?.fromRevision, 11);
  assert.equal(watchRequests[1]?.fromRevision, 21);
  const last = JSON.parse(out.stdout.trim().split("\n").at(-1)!);
  assert.deepEqual(
    { done: last.done, stalled: last.stalled, applied: last.applied, notFinalIds: last.notFinalIds },
    { done: false, stalled: true, applied: 1, notFinalIds: [12, 13] },
  );
  assert.match(
    out.stderr,
    /nothing happened to the batch for 3 s \(--stall-timeout\): 2 of 3 action\(s\) are not final/,
  );
  assert.match(
    out.stderr,
    /1 approved, waiting for a lifecycle worker \(13\); 1 applying, their gatekeeper has not answered \(12\)/,
  );
  assert.match(out.stderr, /gatehouse actions w1 --state approved/);
});

test("the watch is subscribed again when the service cancels it (a graceful shutdown) or ends it, and the batch completes", async () => {
  watchRequests.length = 0;
  onApproveBatch = (req) =>
    req.actionIds.map((id) => record(id, ActionStatus.ACTION_STATUS_APPROVED, id + 1));
  onWatch = (call) => {
    if (watchRequests.length === 1) {
      call.write(change(20, record(11, ActionStatus.ACTION_STATUS_APPLIED, 20)), () =>
        call.emit("error", { code: status.CANCELLED, details: "server shutting down" }),
      );
    } else if (watchRequests.length === 2) {
      call.write(change(21, record(12, ActionStatus.ACTION_STATUS_APPLIED, 21)), () => call.end());
    } else {
      call.write(change(22, record(13, ActionStatus.ACTION_STATUS_APPLIED, 22)));
    }
  };
  const out = await gatehouse("approve", "w1", "11", "12", "13", "--stall-timeout", "60s", "--json");
  assert.equal(out.code, 0, out.stderr);
  assert.deepEqual(
    watchRequests.map((r) => r.fromRevision),
    [11, 21, 22],
  );
  const last = JSON.parse(out.stdout.trim().split("\n").at(-1)!);
  assert.deepEqual({ done: last.done, applied: last.applied }, { done: true, applied: 3 });
});

test("a service that answers ApproveBatch only after the applies is followed as well", async () => {
  onApproveBatch = (req) =>
    req.actionIds.map((id) => record(id, ActionStatus.ACTION_STATUS_APPLIED, 30 + id));
  onWatch = () => undefined;
  const out = await gatehouse("approve", "w1", "5", "6");
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /approved 2: 2\/2 final: 2 applied, 0 failed, 0 rejected/);
});

test("actions lists a log larger than gRPC's default 4 MiB message", async () => {
  const title = "t".repeat(2000);
  onList = () =>
    Array.from({ length: 3000 }, (_, i) => record(i + 1, ActionStatus.ACTION_STATUS_PENDING, i + 1, title));
  const out = await gatehouse("actions", "w1", "--json");
  assert.equal(out.code, 0, out.stderr);
  assert.equal((JSON.parse(out.stdout) as unknown[]).length, 3000);
});
