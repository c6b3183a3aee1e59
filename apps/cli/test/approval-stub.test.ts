/**
 * The compiled CLI against a Decisions service played by this test over real gRPC (grpc-js on
 * loopback), for what the real services cannot be made to do on cue: a batch whose actions stop
 * progressing (one applying forever, one never picked up), a WatchLog stream that breaks mid-batch
 * (the service restarting), the service going away mid-batch, outcomes known and unknown, Ctrl-C
 * in the middle of a batch (in a pipe and on a real terminal, a pty made by util-linux `script`),
 * and an action log larger than gRPC's default 4 MiB message limit.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
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
import { listenGrpc, stopGrpc, waitUntil } from "@gatehouse/service-kit";
import {
  Server,
  type ServerUnaryCall,
  type ServerWritableStream,
  type StatusObject,
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
let approveCalls = 0;
let listRequests: ListActionsRequest[] = [];

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

/** A Decisions service on a free loopback port that plays the handlers above; resolves its address. */
async function startStub(): Promise<{ server: Server; address: string }> {
  const stub = new Server();
  const unimplemented = (_call: unknown, cb: sendUnaryData<never>) =>
    cb({ code: status.UNIMPLEMENTED, details: "not played by this test" } as never, null);
  const handlers: Record<string, unknown> = {};
  for (const name of Object.keys(DecisionsService)) handlers[name] = unimplemented;
  stub.addService(DecisionsService, {
    ...handlers,
    approveBatch: (call: ServerUnaryCall<ApproveBatchRequest, unknown>, cb: sendUnaryData<unknown>) => {
      approveCalls++;
      try {
        cb(null, { actions: onApproveBatch(call.request) });
      } catch (err) {
        cb(err as Partial<StatusObject>, null);
      }
    },
    listActions: (call: ServerUnaryCall<ListActionsRequest, unknown>, cb: sendUnaryData<unknown>) => {
      listRequests.push(call.request);
      cb(null, { actions: onList(call.request) });
    },
    watchLog: (call: ServerWritableStream<WatchLogRequest, LogChange>) => {
      watchRequests.push(call.request);
      onWatch(call);
    },
  });
  return { server: stub, address: `127.0.0.1:${await listenGrpc(stub, "127.0.0.1", 0)}` };
}

before(async () => {
  ({ server, address } = await startStub());
});
after(() => stopGrpc(server, 100));

async function gatehouse(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return gatehouseAt(address, ...args);
}

/** The compiled CLI against the stub at `at`; never throws (exit code in `code`). */
async function gatehouseAt(
  at: string,
  ...args: string[]
): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: { ...process.env, GATEHOUSE_APPROVAL_ADDRESS: at, GATEHOUSE_USER: "dev-approver" },
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

/** A running compiled CLI (or `script` holding it on a pty), its output so far and its exit code. */
interface Running {
  child: ChildProcess;
  out(): string;
  err(): string;
  exited: Promise<number | null>;
}

function spawned(command: string, args: string[], at: string): Running {
  const child = spawn(command, args, {
    env: { ...process.env, GATEHOUSE_APPROVAL_ADDRESS: at, GATEHOUSE_USER: "dev-approver" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, out: () => out, err: () => err, exited };
}

/** Waits until `cli`'s stdout matches `pattern`; fails at once, with its output, if it exits first. */
async function waitForOutput(cli: Running, pattern: RegExp, what: string): Promise<void> {
  await waitUntil(what, () => {
    if (pattern.test(cli.out())) return true;
    if (cli.child.exitCode !== null)
      throw new Error(`exited ${cli.child.exitCode}: ${cli.out()}${cli.err()}`);
    return false;
  });
}

const approvedAll = (req: ApproveBatchRequest) =>
  req.actionIds.map((id) => record(id, ActionStatus.ACTION_STATUS_APPROVED, id + 1));

test("Ctrl-C during a batch says what is recorded and what still applies, ends with a JSON line, exits 130", async () => {
  onApproveBatch = approvedAll;
  // 11 applies; 12 and 13 stay approved while the command runs.
  onWatch = (call) => call.write(change(20, record(11, ActionStatus.ACTION_STATUS_APPLIED, 20)));
  const cli = spawned(process.execPath, [BIN, "approve", "w1", "11", "12", "13", "--json"], address);
  await waitForOutput(cli, /"applied":1/, "a progress line with action 11 applied");
  cli.child.kill("SIGINT");
  assert.equal(await cli.exited, 130, cli.err());
  const last = JSON.parse(cli.out().trim().split("\n").at(-1)!);
  assert.deepEqual(
    {
      done: last.done,
      interrupted: last.interrupted,
      recorded: last.recorded,
      applied: last.applied,
      notFinalIds: last.notFinalIds,
    },
    { done: false, interrupted: true, recorded: true, applied: 1, notFinalIds: [12, 13] },
  );
  assert.match(
    cli.err(),
    /interrupted; the 3 approval\(s\) are recorded \(1 applied, 0 failed, 0 rejected, 0 outcome unknown so far\) and 2 still applying: applying continues on the server without this command \(12, 13\); follow them with `gatehouse actions w1 --state approved --state applying`/,
  );
});

test("on a terminal the bar shows ETA – until there is a rate, and Ctrl-C gives the cursor back", async () => {
  onApproveBatch = approvedAll;
  onWatch = () => undefined;
  // util-linux `script` runs the CLI on a pseudo-terminal; ^C written to it is the terminal's SIGINT.
  const quoted = [process.execPath, BIN, "approve", "w1", "11", "12"].map((a) => `'${a}'`).join(" ");
  const cli = spawned("script", ["-qfec", `exec ${quoted}`, "/dev/null"], address);
  await waitForOutput(cli, /approving \|.*ETA/, "the progress bar");
  assert.match(cli.out(), /0\/2 final · 0 applied, 0 failed, 0 rejected, 0 outcome unknown · –\/s · ETA –/);
  assert.doesNotMatch(cli.out(), /NFs|NaN|INF|NULL/);
  cli.child.stdin?.write("\u0003");
  assert.equal(await cli.exited, 130, cli.out());
  const hidden = cli.out().indexOf("\u001b[?25l");
  assert.ok(hidden >= 0, "the bar hid the cursor");
  assert.ok(cli.out().lastIndexOf("\u001b[?25h") > hidden, "the cursor is shown again after Ctrl-C");
  assert.match(cli.out(), /interrupted; the 2 approval\(s\) are recorded/);
});

test("a stall while the approval service is down names that service, not the worker", async () => {
  const gone = await startStub();
  onApproveBatch = approvedAll;
  onWatch = () => undefined;
  const cli = spawned(
    process.execPath,
    [BIN, "approve", "w1", "11", "12", "--stall-timeout", "3s", "--json"],
    gone.address,
  );
  await waitForOutput(cli, /"approved":2/, "the approvals recorded");
  gone.server.forceShutdown();
  assert.equal(await cli.exited, 1, cli.err());
  const last = JSON.parse(cli.out().trim().split("\n").at(-1)!);
  assert.deepEqual(
    { stalled: last.stalled, recorded: last.recorded, notFinalIds: last.notFinalIds },
    { stalled: true, recorded: true, notFinalIds: [11, 12] },
  );
  assert.ok(
    cli.err().includes(`the approval service at ${gone.address} is not answering (UNAVAILABLE: `),
    cli.err(),
  );
  assert.match(cli.err(), /The approvals are recorded and apply once it runs again/);
  assert.doesNotMatch(cli.err(), /lifecycle worker/);
});

test("the summary counts applied, failed, rejected and outcome unknown apart, and names the ids", async () => {
  onApproveBatch = approvedAll;
  onWatch = (call) => {
    call.write(change(20, record(11, ActionStatus.ACTION_STATUS_APPLIED, 20)));
    call.write(change(21, { ...record(12, ActionStatus.ACTION_STATUS_FAILED, 21), reason: "refused" }));
    call.write(change(22, { ...record(13, ActionStatus.ACTION_STATUS_FAILED, 22), outcomeUnknown: true }));
    call.write(change(23, { ...record(14, ActionStatus.ACTION_STATUS_REJECTED, 23), cascadedFrom: 12 }));
  };
  const text = await gatehouse("approve", "w1", "11", "12", "13", "14");
  assert.equal(text.code, 1, text.stderr);
  assert.match(text.stdout, /approved 4: 4\/4 final: 1 applied, 1 failed, 1 rejected, 1 outcome unknown/);
  assert.match(text.stderr, /1 approved action\(s\) failed to apply: 12\n/);
  assert.match(text.stderr, /1 approved action\(s\) have an unknown outcome \(.*\): 13\n/);
  const json = await gatehouse("approve", "w1", "11", "12", "13", "14", "--json");
  const last = JSON.parse(json.stdout.trim().split("\n").at(-1)!);
  assert.deepEqual(
    {
      failed: last.failed,
      outcomeUnknown: last.outcomeUnknown,
      failedIds: last.failedIds,
      outcomeUnknownIds: last.outcomeUnknownIds,
    },
    { failed: 1, outcomeUnknown: 1, failedIds: [12], outcomeUnknownIds: [13] },
  );
});

test("approve --all with nothing pending says so and exits 0 without a progress line", async () => {
  onList = () => [];
  approveCalls = 0;
  const text = await gatehouse("approve", "w1", "--all");
  assert.equal(text.code, 0, text.stderr);
  assert.equal(text.stdout, "nothing pending in w1\n");
  const json = await gatehouse("approve", "w1", "--all", "--json");
  assert.equal(json.code, 0, json.stderr);
  const lines = json.stdout.trim().split("\n");
  assert.equal(lines.length, 1, json.stdout);
  const only = JSON.parse(lines[0]!);
  assert.deepEqual({ done: only.done, approved: only.approved }, { done: true, approved: 0 });
  assert.equal(approveCalls, 0, "nothing was sent to approve");
});

test("actions takes --state more than once and lists the union", async () => {
  onList = () => [
    record(1, ActionStatus.ACTION_STATUS_PENDING, 1),
    record(2, ActionStatus.ACTION_STATUS_APPROVED, 2),
    record(3, ActionStatus.ACTION_STATUS_APPLIED, 3),
    record(4, ActionStatus.ACTION_STATUS_APPLYING, 4),
  ];
  const ids = async (...args: string[]) => {
    listRequests = [];
    const out = await gatehouse("actions", "w1", ...args, "--json");
    assert.equal(out.code, 0, out.stderr);
    return {
      ids: (JSON.parse(out.stdout) as Array<{ id: number }>).map((a) => a.id),
      pendingOnly: listRequests[0]?.pendingOnly,
    };
  };
  assert.deepEqual(await ids("--state", "pending", "--state", "approved"), {
    ids: [1, 2],
    pendingOnly: false,
  });
  assert.deepEqual(await ids("--pending", "--state", "applied"), { ids: [1, 3], pendingOnly: false });
  assert.deepEqual(await ids("--state", "applying"), { ids: [4], pendingOnly: false });
  assert.deepEqual(await ids("--state", "pending"), { ids: [1], pendingOnly: true });
});

test("a batch refused for an undecided dependency gives the whole --with-deps command to copy", async () => {
  onApproveBatch = () => {
    throw {
      code: status.FAILED_PRECONDITION,
      // The approval service's DependenciesUndecided text.
      details:
        "action 12 depends on undecided action(s) 9; decide them first or set include_dependencies (CLI: gatehouse approve --with-deps) to approve them too",
    };
  };
  onWatch = () => undefined;
  const out = await gatehouse("approve", "w1", "11", "12");
  assert.equal(out.code, 1, out.stderr);
  assert.match(
    out.stderr,
    /^gatehouse: action 12 depends on undecided action\(s\) 9; decide them first or use `gatehouse approve w1 12 --with-deps` to approve them too\n$/,
  );
});
