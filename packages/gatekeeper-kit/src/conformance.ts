/**
 * The gatekeeper conformance suite: the promises every gatekeeper keeps, whatever system it
 * guards, registered as node:test tests. A gatekeeper runs it from its own test folder
 * (`test/conformance.test.ts`) against the REAL system it already tests with, through a subject
 * adapter that starts its harness once and performs each step (a read, a write, an apply, a
 * restart) the way that gatekeeper's binding does. A new gatekeeper passes this suite before it is
 * wired in.
 *
 * ```ts
 * import { gatekeeperConformance } from "@gatehouse/gatekeeper-kit/conformance";
 * gatekeeperConformance({ name: "git", start: async () => ({ ...adapter }) });
 * ```
 *
 * The cases (each uses a unique marker, so they share one started harness):
 * - a read is recorded before it is returned: the observation is appended when the read resolves,
 *   and a read whose observation the approval service refuses returns no data;
 * - a read that fails records nothing;
 * - a rejected action never reaches the system: staging writes nothing, ActionRejected writes
 *   nothing;
 * - an apply twice is one effect: a second ApplyAction of the same action id changes nothing more;
 * - a lost reply is never sent again: the caller leaves an ApplyAction before its answer (so it
 *   records the outcome unknown); the apply in flight goes on to its one effect, and an
 *   ApplyAction of the same id afterwards does not send the write again;
 * - a scope refusal looks the same as "unknown": naming an id outside the binding's scope gets an
 *   error of the same name and message whether the id exists in the system or not (the refusal
 *   tells nothing about what lies outside the scope);
 * - the overlay after a restart equals the overlay before it: pending writes a new session sees
 *   are the same after the gatekeeper process restarts (its memory gone, rebuilt from the approval
 *   service).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ApplyActionRequest, ApplyActionResponse, GatekeeperClient } from "@gatehouse/proto";
import { type ServiceError, status } from "@grpc/grpc-js";
import { readApplyOutcome } from "./index.ts";
import type { FakeApprovalQueue } from "./testing/fake-approval-queue.ts";

/** A started gatekeeper with its approval fake and the real system behind it. */
export interface ConformanceHarness {
  /** The FAKE approval service the gatekeeper calls (observations, submissions, settled). */
  approval: FakeApprovalQueue;
  /** A gRPC client of the running gatekeeper (a new one after `restart`). */
  client(): GatekeeperClient;
  /** Workspace and binding the adapter's sessions use (ApplyAction and ActionRejected carry them). */
  workspaceId: string;
  binding: string;
  /** The binding URL and trust of the adapter's sessions. */
  url: string;
  trust: string;
  /** A read that succeeds; resolves with what the binding returned. */
  read(): Promise<unknown>;
  /** A read the system (or the gatekeeper's checks) fails; rejects. */
  failingRead(): Promise<unknown>;
  /**
   * A read naming an id outside the binding's scope; rejects. `existing`: an id that exists in
   * the system; otherwise one that does not. `ids` names both, to compare the messages without
   * them.
   */
  outOfScopeRead(which: "existing" | "missing"): Promise<unknown>;
  outOfScopeIds: { existing: string; missing: string };
  /** Stages a write carrying `marker` through a session; resolves with its local id. */
  stageWrite(marker: string): Promise<string>;
  /** How many times the write carrying `marker` took effect in the real system. */
  effects(marker: string): Promise<number>;
  /** What a new session sees of the pending writes (compared with deepEqual). */
  overlay(): Promise<unknown>;
  /** Stops the gatekeeper (its in-memory state is gone) and starts a new one on the same approval fake and system. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** A gatekeeper under test: its name and how to start its harness (once for the whole suite). */
export interface GatekeeperSubject {
  name: string;
  start(): Promise<ConformanceHarness>;
}

/** Waits for `cond` (polling every 20 ms) up to `timeoutMs`; @throws naming `what`. */
async function until(what: string, cond: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The error a thenable (a capnweb call, a promise) rejects with; fails when it resolves. */
async function errorOf(p: () => PromiseLike<unknown>): Promise<Error> {
  try {
    const v = await p();
    assert.fail(`expected a refusal, got ${JSON.stringify(v)?.slice(0, 200)}`);
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    return e as Error;
  }
}

/**
 * Registers the conformance cases for `subject` inside `describe("gatekeeper conformance: <name>")`.
 * Call it at the top level of a `*.test.ts` file; the harness is started once before the cases
 * and closed after them.
 */
export function gatekeeperConformance(subject: GatekeeperSubject): void {
  describe(`gatekeeper conformance: ${subject.name}`, () => {
    let h: ConformanceHarness;
    let n = 0;
    const marker = (label: string) => `conf-${label}-${Date.now().toString(36)}-${++n}`;

    before(async () => {
      h = await subject.start();
    });
    after(async () => {
      await h?.close();
    });

    const request = (localId: string): ApplyActionRequest => {
      const sub = h.approval.submissions.find((s) => s.localId === localId);
      if (!sub) throw new Error(`no submission for ${localId}`);
      return {
        workspaceId: h.workspaceId,
        binding: h.binding,
        url: h.url,
        trust: h.trust,
        actionId: sub.actionId,
        localId,
        payloadJson: sub.payloadJson,
        dependencyResults: {},
      };
    };
    /** ApplyAction, recorded in the approval fake the way the approval service records it. */
    const apply = async (localId: string): Promise<ApplyActionResponse> => {
      const req = request(localId);
      const res = await readApplyOutcome(h.client().applyAction(req));
      h.approval.settled.add(req.actionId);
      if (res.ok) h.approval.results.set(req.actionId, res.resultJson);
      return res;
    };
    const reject = (localId: string): Promise<void> => {
      const { actionId } = request(localId);
      h.approval.settled.add(actionId);
      return new Promise((ok, ko) =>
        h
          .client()
          .actionRejected({ workspaceId: h.workspaceId, binding: h.binding, actionId, localId }, (e) =>
            e ? ko(e) : ok(),
          ),
      );
    };

    test("a read is recorded before it is returned; a read whose observation is refused returns nothing", async () => {
      const before = h.approval.observations.length;
      await h.read();
      assert.equal(
        h.approval.observations.length,
        before + 1,
        "one observation, there when the read returned",
      );
      h.approval.refuseObservations = status.PERMISSION_DENIED;
      try {
        await errorOf(() => h.read());
      } finally {
        h.approval.refuseObservations = null;
      }
      assert.equal(h.approval.observations.length, before + 1, "the refused read recorded nothing");
    });

    test("a read that fails records nothing", async () => {
      const before = h.approval.observations.length;
      await errorOf(() => h.failingRead());
      assert.equal(h.approval.observations.length, before);
    });

    test("a rejected action never reaches the system", async () => {
      const m = marker("rejected");
      const localId = await h.stageWrite(m);
      assert.equal(await h.effects(m), 0, "staging wrote nothing");
      await reject(localId);
      assert.equal(await h.effects(m), 0, "rejecting wrote nothing");
    });

    test("an apply twice is one effect", async () => {
      const m = marker("twice");
      const localId = await h.stageWrite(m);
      const first = await apply(localId);
      assert.equal(first.ok, true, first.error);
      const second = await apply(localId);
      assert.equal(second.ok, true, second.error);
      assert.equal(await h.effects(m), 1);
    });

    test("a lost reply is never sent again: the caller leaves before the answer, the apply has one effect, and a second ApplyAction sends nothing", async () => {
      const m = marker("lost");
      const localId = await h.stageWrite(m);
      const call = h.client().applyAction(request(localId));
      // The answer is lost: the caller leaves at the first `running`, so it records the outcome unknown.
      const lost = await new Promise<ServiceError | "answered">((resolve) => {
        call.on("data", (msg: { event?: { $case: string } }) => {
          if (msg.event?.$case === "outcome") resolve("answered");
          else call.cancel();
        });
        call.on("error", (e: ServiceError) => resolve(e));
        call.on("end", () => resolve("answered"));
      });
      assert.notEqual(lost, "answered", "the caller left before the outcome");
      assert.equal((lost as ServiceError).code, status.CANCELLED);
      await until("the apply in flight to take its one effect", async () => (await h.effects(m)) >= 1);
      const again = await apply(localId);
      assert.equal(again.ok, true, again.error);
      assert.equal(await h.effects(m), 1, "the write was not sent again");
    });

    test("a scope refusal looks the same as unknown: an out-of-scope id that exists and one that does not get the same error", async () => {
      const before = h.approval.observations.length;
      const existing = await errorOf(() => h.outOfScopeRead("existing"));
      const missing = await errorOf(() => h.outOfScopeRead("missing"));
      const { existing: a, missing: b } = h.outOfScopeIds;
      assert.equal(existing.name, missing.name);
      assert.equal(existing.message.split(a).join("<id>"), missing.message.split(b).join("<id>"));
      assert.equal(h.approval.observations.length, before, "refusals record nothing");
    });

    test("the overlay after a restart equals the overlay before it", async () => {
      const a = marker("pending-a");
      const b = marker("pending-b");
      await h.stageWrite(a);
      await h.stageWrite(b);
      const before = await h.overlay();
      const seen = JSON.stringify(before);
      assert.ok(
        seen.includes(a) && seen.includes(b),
        `a new session sees both pending writes: ${seen.slice(0, 300)}`,
      );
      await h.restart();
      assert.deepEqual(await h.overlay(), before);
    });
  });
}
