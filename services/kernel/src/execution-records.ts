/**
 * What one execution recorded in its workspace stream: the actions it submitted and the reads it
 * made (ActionSubmitted / ObservationRecorded carrying its execution id), so ExecuteResult can name
 * them and the turn knows which writes it awaits.
 */
import type { EventStore } from "@gatehouse/event-store";
import {
  ActionSubmitted,
  Delivery,
  ObservationRecorded,
  type RecordedObservation,
  type SubmittedAction,
} from "@gatehouse/proto";
import { streamOf } from "./domain/workspace.ts";

/** The execution's writes and reads, each in stream order. */
export interface ExecutionRecords {
  submitted: SubmittedAction[];
  observed: RecordedObservation[];
}

/**
 * Reads the workspace stream after `fromRevision` (exclusive: the revision before the execution
 * started) and keeps the events of `executionId`.
 */
export async function executionRecords(
  store: EventStore,
  workspaceId: string,
  executionId: string,
  fromRevision: number,
): Promise<ExecutionRecords> {
  const events = await store.readStream(streamOf(workspaceId), { fromRevision: fromRevision + 1 });
  const out: ExecutionRecords = { submitted: [], observed: [] };
  for (const e of events) {
    if (e.type === "ActionSubmitted") {
      const a = ActionSubmitted.fromJSON(e.data);
      if (a.executionId !== executionId) continue;
      out.submitted.push({
        actionId: e.revision,
        binding: a.binding,
        title: a.description?.title ?? "",
        awaited: a.description?.delivery === Delivery.DELIVERY_AWAIT,
      });
    } else if (e.type === "ObservationRecorded") {
      const o = ObservationRecorded.fromJSON(e.data);
      if (o.executionId !== executionId) continue;
      out.observed.push({ id: e.revision, binding: o.binding, title: o.description?.title ?? "" });
    }
  }
  return out;
}
