/**
 * The caller half of the apply protocol: ApplyActions end to end over real grpc-js on loopback,
 * `GrpcGatekeeperApplier.applyRun` (what the lifecycle calls) reading and the server half's
 * `applyRunHandler` serving. Order,
 * results of earlier actions for later ones, stop at the first failure, refusals before and during
 * the run, a gatekeeper process killed mid-run, silence, and a caller that leaves mid-run.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { after, test } from "node:test";
import type {
  ApplyActionRequest,
  ApplyActionResponse,
  ApplyActionsRequest,
  RunAction,
} from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import { status } from "@grpc/grpc-js";
import { GatekeeperCallError } from "../src/call-error.ts";
import { GrpcGatekeeperApplier } from "../src/caller.ts";
import type { RunEnd, RunWatch } from "../src/run-stream.ts";
import { applyRunHandler } from "../src/server.ts";
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

/** Every call of the apply function, in order; and the deadline each got. */
const calls: ApplyActionRequest[] = [];
const deadlines = new Map<number, number>();
/** Answers by action id: a response, an error to throw, or "block" (ends on `release`). */
const answers = new Map<number, ApplyActionResponse | Error | "block">();
const releases = new Map<number, (r: ApplyActionResponse) => void>();

const gk = await startGatekeeper({
  applyActions: applyRunHandler(
    deps,
    async (req, ctx) => {
      calls.push(req);
      deadlines.set(req.actionId, ctx.deadline);
      const answer = answers.get(req.actionId);
      if (answer instanceof Error) throw answer;
      if (answer === "block") return new Promise<ApplyActionResponse>((r) => releases.set(req.actionId, r));
      return answer ?? { ok: true, resultJson: JSON.stringify({ sha: `sha-${req.actionId}` }), error: "" };
    },
    30,
  ),
});
const applier = new GrpcGatekeeperApplier(
  { test: gk.address },
  { applyMaxMs: { test: 60_000, short: 400 }, applyGraceMs: 2000 },
);
after(() => {
  applier.close();
  gk.close();
});

function run(ids: number[]): ApplyActionsRequest {
  const actions = ids.map(
    (actionId): RunAction => ({
      actionId,
      localId: `~${actionId}`,
      payloadJson: JSON.stringify({ n: actionId }),
      dependencyResults: actionId === ids[0] ? { "~0": '{"sha":"outside"}' } : {},
    }),
  );
  return { workspaceId: "ws-1", binding: "REPO", url: "test://repo", trust: "byo", actions };
}

/** A watch recording what it hears. */
function recorder(): RunWatch & { outcomes: [number, ApplyActionResponse][]; running: number[] } {
  const outcomes: [number, ApplyActionResponse][] = [];
  const running: number[] = [];
  return {
    outcomes,
    running,
    onRunning: (id) => running.push(id),
    onOutcome: (id, r) => outcomes.push([id, r]),
  };
}

const callsOf = (ids: number[]) => calls.filter((c) => ids.includes(c.actionId)).map((c) => c.actionId);

test("a run is performed in request order, each outcome reported as it comes, earlier results passed on", async () => {
  const watch = recorder();
  const sent = Date.now();
  const end = await applier.applyRun("test", run([11, 12, 13]), watch);
  assert.deepEqual(end, { lost: undefined, notSent: [] });
  assert.deepEqual(callsOf([11, 12, 13]), [11, 12, 13]);
  assert.deepEqual(
    watch.outcomes.map(([id, r]) => [id, r.ok, r.resultJson]),
    [
      [11, true, '{"sha":"sha-11"}'],
      [12, true, '{"sha":"sha-12"}'],
      [13, true, '{"sha":"sha-13"}'],
    ],
  );
  assert.deepEqual([...new Set(watch.running)], [11, 12, 13], "running heard for each, in order");
  const third = calls.find((c) => c.actionId === 13);
  assert.deepEqual(third?.dependencyResults, { "~11": '{"sha":"sha-11"}', "~12": '{"sha":"sha-12"}' });
  assert.deepEqual(calls.find((c) => c.actionId === 11)?.dependencyResults, { "~0": '{"sha":"outside"}' });
  assert.equal(third?.workspaceId, "ws-1");
  assert.equal(third?.payloadJson, '{"n":13}');
  const deadline = deadlines.get(11) ?? 0;
  assert.ok(
    deadline >= sent + 59_000 && deadline <= Date.now() + 60_000,
    "each action is bounded by the caller's per-action maximum",
  );
  assert.deepEqual(counted.at(-1), { method: "ApplyActions", code: "OK" });
});

test("the run stops at the first failure: its outcome is the last, the rest are never performed", async () => {
  answers.set(22, { ok: false, resultJson: "", error: "tool said no" });
  const watch = recorder();
  const end = await applier.applyRun("test", run([21, 22, 23, 24]), watch);
  assert.deepEqual(end, { lost: undefined, notSent: [23, 24] });
  assert.deepEqual(
    watch.outcomes.map(([id, r]) => [id, r.ok, r.error]),
    [
      [21, true, ""],
      [22, false, "tool said no"],
    ],
  );
  assert.deepEqual(callsOf([21, 22, 23, 24]), [21, 22]);
});

test("a run refused before its first action throws a refusal naming the field, and nothing is performed", async () => {
  const before = calls.length;
  for (const [request, field] of [
    [run([]), "actions is empty"],
    [run([32, 31]), "actions[1].action_id 31 does not follow actions[0].action_id 32"],
    [{ ...run([33]), binding: "" }, "binding is empty"],
  ] as const) {
    const watch = recorder();
    await assert.rejects(applier.applyRun("test", request, watch), (e: GatekeeperCallError) => {
      assert.ok(e instanceof GatekeeperCallError);
      assert.equal(e.requestMaybeSent, false);
      assert.equal(e.code, status.INVALID_ARGUMENT);
      assert.match(e.message, new RegExp(field.replace(/[[\]]/g, "\\$&")));
      return true;
    });
    assert.deepEqual(watch.running, [], "no running before a refusal");
  }
  assert.equal(calls.length, before, "the apply function never ran");
  await assert.rejects(
    applier.applyRun("nowhere", run([34]), recorder()),
    (e: GatekeeperCallError) => e.requestMaybeSent === false && /GATEKEEPER_ADDRESSES/.test(e.message),
  );
});

test("an action refused mid-run is lost as not performed; the ones after it are not sent", async () => {
  answers.set(42, new InvalidRequest("payload_json is not JSON; stage it again"));
  const watch = recorder();
  const end = await applier.applyRun("test", run([41, 42, 43]), watch);
  assert.equal(end.lost?.actionId, 42);
  assert.equal(end.lost?.error.requestMaybeSent, false, "a refusal status: not performed");
  assert.equal(end.lost?.error.code, status.INVALID_ARGUMENT);
  assert.match(end.lost?.error.message ?? "", /payload_json is not JSON/);
  assert.deepEqual(end.notSent, [43]);
  assert.deepEqual(
    watch.outcomes.map(([id]) => id),
    [41],
  );
  assert.deepEqual(callsOf([41, 42, 43]), [41, 42]);
});

test("a gatekeeper process killed mid-run: the action in flight is lost (outcome unknown), the rest not sent", async () => {
  const child = spawn(
    process.execPath,
    ["--no-node-snapshot", "--import", "tsx", "test/fixtures/run-gatekeeper.ts"],
    {
      cwd: `${import.meta.dirname}/..`,
      env: { ...process.env, RUN_BLOCK: "52" },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  after(() => child.kill("SIGKILL"));
  const started: number[] = [];
  let address = "";
  createInterface({ input: child.stdout }).on("line", (line) => {
    const m = JSON.parse(line) as { address?: string; started?: number };
    if (m.address) address = m.address;
    if (m.started) started.push(m.started);
  });
  await waitUntil("the gatekeeper process to listen", () => address);
  const remote = new GrpcGatekeeperApplier({ proc: address }, { applyGraceMs: 2000 });
  after(() => remote.close());
  const watch = recorder();
  const ended = remote.applyRun("proc", run([51, 52, 53, 54]), watch);
  await waitUntil("action 52 in flight", () => watch.running.includes(52) && started.includes(52));
  child.kill("SIGKILL");
  await once(child, "exit");
  const end: RunEnd = await ended;
  assert.equal(end.lost?.actionId, 52);
  assert.equal(end.lost?.error.requestMaybeSent, true, "outcome unknown");
  assert.deepEqual(end.notSent, [53, 54]);
  assert.deepEqual(
    watch.outcomes.map(([id, r]) => [id, r.ok]),
    [[51, true]],
  );
  assert.deepEqual(started, [51, 52], "nothing after the action in flight was started");
});

test("a caller that leaves mid-run (its maximum passed) gets the action lost as still running; no later action starts", async () => {
  answers.set(62, "block");
  const short = new GrpcGatekeeperApplier(
    { short: gk.address },
    { applyMaxMs: { short: 400 }, applyGraceMs: 2000 },
  );
  after(() => short.close());
  const watch = recorder();
  const end = await short.applyRun("short", run([61, 62, 63, 64]), watch);
  assert.equal(end.lost?.actionId, 62);
  assert.equal(end.lost?.error.stillRunning, true);
  assert.equal(end.lost?.error.requestMaybeSent, true);
  assert.match(end.lost?.error.message ?? "", /still performing it after 400 ms.*GATEKEEPER_APPLY_MAX/);
  assert.deepEqual(end.notSent, [63, 64]);
  const of62 = () => warned.filter((w) => w.actionId === 62).map((w) => w.event);
  await waitUntil("the gatekeeper to see the caller go", () => of62().includes("apply.caller_left"));
  assert.equal(warned.find((w) => w.event === "apply.caller_left" && w.actionId === 62)?.notStarted, 2);
  releases.get(62)?.({ ok: true, resultJson: "{}", error: "" });
  await waitUntil("the in-flight action to end", () => of62().includes("apply.caller_gone"));
  assert.deepEqual(
    callsOf([61, 62, 63, 64]),
    [61, 62],
    "the action in flight finished, none after it started",
  );
});

test("a gatekeeper that falls silent past its promise loses the action in flight", async () => {
  const silent = await startGatekeeper({
    applyActions: (call) => {
      call.write({ actionId: 71, event: { $case: "running", running: { elapsedMs: 0, nextWithinMs: 50 } } });
    },
  });
  const client = new GrpcGatekeeperApplier({ silent: silent.address }, { applyGraceMs: 150 });
  after(() => {
    client.close();
    silent.close();
  });
  const end = await client.applyRun("silent", run([71, 72]), recorder());
  assert.equal(end.lost?.actionId, 71);
  assert.match(end.lost?.error.message ?? "", /stopped reporting on the run \(nothing for 200 ms\)/);
  assert.deepEqual(end.notSent, [72]);
});

test("a stream that breaks between an outcome and the next running loses the next action, not only the rest", async () => {
  const broken = await startGatekeeper({
    applyActions: (call) => {
      call.write({
        actionId: 81,
        event: { $case: "running", running: { elapsedMs: 0, nextWithinMs: 1000 } },
      });
      call.write({
        actionId: 81,
        event: { $case: "outcome", outcome: { ok: true, resultJson: "{}", error: "" } },
      });
      call.emit("error", { code: status.UNAVAILABLE, details: "connection reset" });
    },
  });
  const client = new GrpcGatekeeperApplier({ broken: broken.address }, { applyGraceMs: 2000 });
  after(() => {
    client.close();
    broken.close();
  });
  const end = await client.applyRun("broken", run([81, 82, 83]), recorder());
  assert.equal(end.lost?.actionId, 82, "it may have started without its running reaching the caller");
  assert.equal(end.lost?.error.requestMaybeSent, true);
  assert.deepEqual(end.notSent, [83]);
});

/** A gatekeeper whose `units` group actions 91.. (up to 94) into one call that the test controls. */
async function unitGatekeeper(answer: (reqs: ApplyActionRequest[]) => Promise<ApplyActionResponse[]>) {
  const perAction: number[] = [];
  const unitCalls: number[][] = [];
  const server = await startGatekeeper({
    applyActions: applyRunHandler(
      deps,
      async (req) => {
        perAction.push(req.actionId);
        return { ok: true, resultJson: JSON.stringify({ sha: `sha-${req.actionId}` }), error: "" };
      },
      30,
      {
        sizeAt: (reqs, from) => {
          let n = 0;
          while (reqs[from + n] && reqs[from + n]!.actionId >= 91 && reqs[from + n]!.actionId <= 94) n++;
          return n;
        },
        apply: async (reqs, ctx) => {
          unitCalls.push(reqs.map((r) => r.actionId));
          ctx.starting(reqs.map((r) => r.actionId));
          return answer(reqs);
        },
      },
    ),
  });
  const client = new GrpcGatekeeperApplier({ unit: server.address }, { applyGraceMs: 2000 });
  after(() => {
    client.close();
    server.close();
  });
  return { server, client, perAction, unitCalls };
}

test("a unit of actions performed in one call: running for each before it, outcomes in order, results passed on", async () => {
  const g = await unitGatekeeper(async (reqs) => {
    assert.deepEqual(reqs[0]?.dependencyResults["~90"], '{"sha":"sha-90"}', "the unit sees earlier results");
    return reqs.map((r) => ({
      ok: true,
      resultJson: JSON.stringify({ sha: `unit-${r.actionId}` }),
      error: "",
    }));
  });
  const events: string[] = [];
  const end = await g.client.applyRun("unit", run([90, 91, 92, 93, 95]), {
    onRunning: (id) => events.push(`running ${id}`),
    onOutcome: (id, r) => events.push(`outcome ${id} ${r.ok}`),
  });
  assert.deepEqual(end, { lost: undefined, notSent: [] });
  assert.deepEqual(g.unitCalls, [[91, 92, 93]]);
  assert.deepEqual(g.perAction, [90, 95]);
  const unique = events.filter((e, i) => events.indexOf(e) === i);
  assert.deepEqual(unique, [
    "running 90",
    "outcome 90 true",
    "running 91",
    "running 92",
    "running 93",
    "outcome 91 true",
    "outcome 92 true",
    "outcome 93 true",
    "running 95",
    "outcome 95 true",
  ]);
});

test("a unit that fails part-way: earlier ones applied, the failure last, the rest (heard running or not) not sent", async () => {
  const g = await unitGatekeeper(async ([a]) => [
    { ok: true, resultJson: "{}", error: "" },
    { ok: false, resultJson: "", error: `conflict after ${a?.actionId}` },
  ]);
  const watch = recorder();
  const end = await g.client.applyRun("unit", run([91, 92, 93, 94, 96]), watch);
  assert.deepEqual(end, { lost: undefined, notSent: [93, 94, 96] });
  assert.deepEqual(
    watch.outcomes.map(([id, r]) => [id, r.ok]),
    [
      [91, true],
      [92, false],
    ],
  );
  assert.ok(watch.running.includes(93), "93 was announced, yet it is not sent: the gatekeeper said so");
  assert.deepEqual(g.perAction, []);
});

test("a gatekeeper gone while a unit is in flight: every action of the unit is lost, the rest not sent", async () => {
  let inUnit = false;
  let release: (outs: ApplyActionResponse[]) => void = () => undefined;
  const g = await unitGatekeeper(() => {
    inUnit = true;
    return new Promise((r) => {
      release = r;
    });
  });
  after(() => release([])); // lets the handler's timers end with the test
  const watch = recorder();
  const ended = g.client.applyRun("unit", run([91, 92, 93, 97]), watch);
  await waitUntil("the unit in flight", () => inUnit && watch.running.includes(93));
  g.server.close();
  const end = await ended;
  assert.equal(end.lost?.actionId, 91);
  assert.equal(end.lost?.error.requestMaybeSent, true);
  assert.deepEqual(end.alsoLost, [92, 93]);
  assert.deepEqual(end.notSent, [97]);
});
