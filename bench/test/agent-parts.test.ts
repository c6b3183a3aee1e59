/**
 * `npm run bench:agent` splits a turn's time by the stream's event times and the turn workflow's
 * history: a step runs from ChatTurnStarted (step 1) or the previous ChatToolResult to its own
 * ChatToolResult, with the kernel's claim and record inside; each activity's time is cut into the
 * workflow task before it, its queue wait and its run. A shuffled or incomplete turn is refused.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type TimedEvent, turnTiming } from "../agent-steps.ts";
import { activitySpans } from "../agent-temporal.ts";

const T0 = Date.parse("2026-12-04T20:00:00.000Z");
type Event = TimedEvent & { data: Record<string, unknown> };
const ev = (ms: number, type: string, data: Record<string, unknown>): Event => ({
  type,
  data,
  metadata: { occurredAt: new Date(T0 + ms).toISOString() },
});

/** A two-step turn `t`, ms after T0, with another turn's events mixed in. */
function turn(): Event[] {
  const t = { turnId: "t" };
  return [
    ev(0, "ChatUserMessage", t),
    ev(1, "ChatTurnStarted", t),
    ev(5, "ChatToolResult", { turnId: "other", step: 1 }),
    ev(40, "ChatModelMessage", { ...t, step: 1 }),
    ev(40, "ChatToolCalled", { ...t, step: 1, executionId: "t.1.0" }),
    ev(60, "CodeExecutionStarted", { executionId: "t.1.0" }),
    ev(75, "CodeExecuted", { executionId: "t.1.0", durationMs: 14 }),
    ev(90, "ChatToolResult", { ...t, step: 1, executionId: "t.1.0", ok: true }),
    ev(130, "ChatModelMessage", { ...t, step: 2 }),
    ev(130, "ChatToolCalled", { ...t, step: 2, executionId: "t.2.0" }),
    ev(150, "CodeExecutionStarted", { executionId: "t.2.0" }),
    ev(151, "CodeExecuted", { executionId: "t.2.0" }), // durationMs 0 is left out of proto JSON
    ev(170, "ChatToolResult", { ...t, step: 2, executionId: "t.2.0", ok: true }),
    ev(200, "ChatModelMessage", { ...t, step: 3 }),
    ev(210, "ChatTurnEnded", { ...t, reason: "done" }),
  ];
}

test("a turn's steps, closing step and whole time come from its own events' times", () => {
  const r = turnTiming(turn(), "t");
  assert.equal(r.reason, "done");
  assert.equal(r.turnMs, 210);
  assert.equal(r.closingMs, 40);
  assert.deepEqual(
    r.steps.map((s) => [
      s.step,
      s.totalMs,
      s.modelPhaseMs,
      s.toolPhaseMs,
      s.toClaimMs,
      s.kernelMs,
      s.afterRecordMs,
    ]),
    [
      [1, 89, 39, 50, 20, 15, 15],
      [2, 80, 40, 40, 20, 1, 19],
    ],
  );
  assert.deepEqual(
    r.steps.map((s) => [s.startAt - T0, s.executionMs, s.executionId]),
    [
      [1, 14, "t.1.0"],
      [90, 0, "t.2.0"],
    ],
  );
});

test("a turn missing its end or a step's result is refused, naming the missing event", () => {
  const events = turn();
  assert.throws(() => turnTiming(events.slice(0, -1), "t"), /expected one ChatTurnEnded, found 0/);
  assert.throws(
    () =>
      turnTiming(
        events.filter((e) => !(e.type === "ChatToolResult" && e.data.step === 2)),
        "t",
      ),
    /expected one ChatToolResult of step 2, found 0/,
  );
  const refused = events.map((e) =>
    e.type === "ChatToolCalled" && e.data.step === 2 ? { ...e, data: { ...e.data, executionId: "" } } : e,
  );
  assert.throws(() => turnTiming(refused, "t"), /step 2's call did not execute/);
});

const at = (ms: number) => ({ seconds: Math.floor((T0 + ms) / 1000), nanos: ((T0 + ms) % 1000) * 1e6 });

test("each activity's time is the workflow task before it, its queue wait and its run", () => {
  const history = {
    events: [
      { eventId: 1, eventTime: at(0), workflowExecutionStartedEventAttributes: {} },
      {
        eventId: 5,
        eventTime: at(12),
        activityTaskScheduledEventAttributes: { activityType: { name: "m" } },
      },
      { eventId: 6, eventTime: at(20), activityTaskStartedEventAttributes: { scheduledEventId: 5 } },
      { eventId: 7, eventTime: at(50), activityTaskCompletedEventAttributes: { scheduledEventId: 5 } },
      {
        eventId: 11,
        eventTime: at(65),
        activityTaskScheduledEventAttributes: { activityType: { name: "r" } },
      },
      { eventId: 12, eventTime: at(66.5), activityTaskStartedEventAttributes: { scheduledEventId: 11 } },
      { eventId: 13, eventTime: at(90), activityTaskCompletedEventAttributes: { scheduledEventId: 11 } },
    ],
  };
  const spans = activitySpans(history as never);
  assert.deepEqual(
    spans.map((s) => [s.name, s.decideMs, s.queueMs, s.runMs]),
    [
      ["m", 12, 8, 30],
      ["r", 15, 1.5, 23.5],
    ],
  );
  history.events.pop();
  assert.throws(() => activitySpans(history as never), /activity r \(event 11\) did not start and complete/);
});
