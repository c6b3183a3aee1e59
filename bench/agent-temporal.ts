/**
 * Temporal's share of an agent turn (`npm run bench:agent`), from the turn workflow's history: each
 * activity's scheduling (the workflow task that decided it, after the previous activity completed or
 * the workflow started), its wait in the task queue (scheduled → started) and its run (started →
 * completed), by the Temporal server's event times (ms).
 */
import type { temporal } from "@temporalio/proto";

/** One activity of the turn, in order. */
export interface ActivitySpan {
  /** Activity type, e.g. agentModelStep, agentRunCall, agentEndTurn. */
  name: string;
  /** The previous activity's completion (or the workflow's start) → this one scheduled: the workflow task between. */
  decideMs: number;
  /** Scheduled → started: waiting for a worker to take it. */
  queueMs: number;
  /** Started → completed: the activity's own work (the last attempt's). */
  runMs: number;
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** ms since the epoch of an event's time (seconds may be a Long). */
function ms(e: HistoryEvent | undefined): number {
  const t = e?.eventTime;
  if (!t) return Number.NaN;
  return Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6;
}

/**
 * The activities of one workflow run, in the order they were scheduled.
 * @throws Error when an activity has no start or completion (the workflow did not finish cleanly).
 */
export function activitySpans(history: temporal.api.history.v1.IHistory): ActivitySpan[] {
  const events = history.events ?? [];
  const byId = new Map<string, HistoryEvent>();
  for (const e of events) byId.set(String(e.eventId), e);
  const started = new Map<string, HistoryEvent>();
  const completed = new Map<string, HistoryEvent>();
  for (const e of events) {
    const s = e.activityTaskStartedEventAttributes;
    if (s) started.set(String(s.scheduledEventId), e);
    const c = e.activityTaskCompletedEventAttributes;
    if (c) completed.set(String(c.scheduledEventId), e);
  }
  let previous = ms(events.find((e) => e.workflowExecutionStartedEventAttributes));
  const spans: ActivitySpan[] = [];
  for (const e of events) {
    const a = e.activityTaskScheduledEventAttributes;
    if (!a) continue;
    const id = String(e.eventId);
    const start = started.get(id);
    const done = completed.get(id);
    const name = a.activityType?.name ?? "?";
    if (!start || !done) throw new Error(`activity ${name} (event ${id}) did not start and complete`);
    spans.push({
      name,
      decideMs: ms(e) - previous,
      queueMs: ms(start) - ms(e),
      runMs: ms(done) - ms(start),
    });
    previous = ms(done);
  }
  return spans;
}
