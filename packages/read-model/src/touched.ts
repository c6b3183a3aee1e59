/** Which log entry a stored event changes. */
import type { StoredEvent } from "@gatehouse/event-store";

/**
 * The log id an event changes, if any: its own revision for ObservationRecorded, ActionSubmitted and
 * ActionRefused; `data.actionId` (or `data.observationId`) for the events about an entry.
 */
export function touchedId(e: Pick<StoredEvent, "type" | "revision" | "data">): number | undefined {
  if (e.type === "ObservationRecorded" || e.type === "ActionSubmitted" || e.type === "ActionRefused")
    return e.revision;
  const data = e.data as { actionId?: number; observationId?: number } | null;
  const id = data?.actionId ?? data?.observationId;
  return typeof id === "number" ? id : id === undefined ? undefined : Number(id);
}
