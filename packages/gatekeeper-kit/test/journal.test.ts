import assert from "node:assert/strict";
import { test } from "node:test";
import { ActionStateConflict, UnknownAction } from "../src/errors.ts";
import {
  ActionJournal,
  isFinal,
  type JournalEventType,
  type JournalState,
  transition,
} from "../src/journal.ts";

const STATES: JournalState[] = ["staged", "pending", "applying", "applied", "failed", "rejected"];
const EVENTS: JournalEventType[] = ["submitted", "claimed", "applied", "failed", "rejected"];
const ALLOWED: Record<string, JournalState> = {
  "staged/submitted": "pending",
  "pending/claimed": "applying",
  "pending/rejected": "rejected",
  "applying/applied": "applied",
  "applying/failed": "failed",
};

test("the transition table allows exactly the documented moves and refuses every other", () => {
  for (const s of STATES) {
    for (const e of EVENTS) {
      const want = ALLOWED[`${s}/${e}`];
      if (want) assert.equal(transition(s, e), want, `${s}/${e}`);
      else assert.throws(() => transition(s, e), ActionStateConflict, `${s}/${e}`);
    }
  }
  assert.deepEqual(STATES.filter(isFinal), ["applied", "failed", "rejected"]);
});

function journal() {
  const j = new ActionJournal<{ msg: string }>();
  j.stage("~1", { msg: "A" });
  j.stage("~2", { msg: "B" }, ["~1"]);
  j.stage("~3", { msg: "C" });
  j.submitted("~1", 10);
  j.submitted("~2", 11);
  j.submitted("~3", 12);
  return j;
}

test("an action is claimed at most once: a second claim is refused, never re-applied", () => {
  const j = journal();
  assert.deepEqual(j.claim("~1").payload, { msg: "A" });
  assert.throws(() => j.claim("~1"), /cannot claim an action that is applying/);
  j.applied("~1", '{"sha":"abc"}');
  assert.throws(() => j.claim("~1"), /cannot claim an action that is applied/);
  assert.equal(j.get("~1")?.resultJson, '{"sha":"abc"}');
});

test("a crash between claim and outcome leaves the action applying (outcome unknown), not claimable", () => {
  const j = journal();
  j.claim("~3");
  assert.equal(j.get("~3")?.state, "applying");
  assert.throws(() => j.claim("~3"), ActionStateConflict);
  assert.throws(() => j.reject("~3", "too late"), /cannot reject an action that is applying/);
});

test("rejecting an action cascades to pending dependents with cascadedFrom and the reason", () => {
  const j = journal();
  const cascaded = j.reject("~1", "not this one");
  assert.deepEqual(
    cascaded.map((e) => [e.localId, e.state, e.cascadedFrom, e.reason]),
    [["~2", "rejected", "~1", "needed action 10, which did not complete"]],
  );
  assert.equal(j.get("~1")?.reason, "not this one");
  assert.equal(j.get("~3")?.state, "pending");
});

test("a failed apply cascades like a rejection", () => {
  const j = journal();
  j.claim("~1");
  assert.deepEqual(
    j.failed("~1", "conflict in docs/a.md").map((e) => e.localId),
    ["~2"],
  );
  assert.equal(j.get("~1")?.state, "failed");
  assert.throws(() => j.claim("~2"), /cannot claim an action that is rejected/);
});

test("staging checks ids; a staged action whose submit failed is discarded; log ids map back", () => {
  const j = new ActionJournal<string>();
  j.stage("~1", "p");
  assert.throws(() => j.stage("~1", "q"), /already in the journal/);
  assert.throws(() => j.stage("~2", "q", ["~9"]), UnknownAction);
  assert.throws(() => j.claim("~1"), /cannot claim an action that is staged/);
  j.discard("~1");
  assert.equal(j.get("~1"), undefined);
  j.stage("~2", "q");
  assert.throws(() => j.submitted("~2", 0), /positive integer/);
  j.submitted("~2", 5);
  assert.equal(j.localIdOf(5), "~2");
  assert.throws(() => j.discard("~2"), /cannot discard an action that is pending/);
  assert.deepEqual(
    j.entries().map((e) => e.localId),
    ["~2"],
  );
});
