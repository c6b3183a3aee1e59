import type { StoredEvent, StoredMetadata } from "./port.ts";
import type { EventRow } from "./schema.ts";

/** Maps one `events` row to the port's {@link StoredEvent} (parses the JSON columns). */
export function rowToEvent(row: EventRow): StoredEvent {
  return {
    streamId: row.stream_id,
    revision: row.revision,
    globalPosition: row.global_position,
    type: row.type,
    data: JSON.parse(row.data) as unknown,
    metadata: JSON.parse(row.metadata) as StoredMetadata,
  };
}
