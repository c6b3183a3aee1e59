/**
 * Where each action's submission was traced: the `traceparent` its ActionSubmitted event carries (set by
 * the approval service when tracing was on). An action's id is its stream revision, so each is one read.
 */
import type { EventStore } from "@gatehouse/event-store";
import { workspaceStreamId } from "./workspace-streams.ts";

/**
 * The submissions' trace contexts of `actionIds` (at most `max`, default 64, in the order given): action
 * id → traceparent, for the actions whose ActionSubmitted event has one. An action whose event is
 * missing or cannot be read is skipped: links are a help to the reader, never a reason to fail a decision.
 */
export async function submissionTraceparents(
  store: EventStore,
  workspaceId: string,
  actionIds: Iterable<number>,
  max = 64,
): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  const stream = workspaceStreamId(workspaceId);
  let read = 0;
  for (const id of actionIds) {
    if (read++ >= max) break;
    const [event] = await store.readStream(stream, { fromRevision: id, maxCount: 1 }).catch(() => []);
    if (event?.type !== "ActionSubmitted" || event.revision !== id) continue;
    if (event.metadata.traceparent) out.set(id, event.metadata.traceparent);
  }
  return out;
}
