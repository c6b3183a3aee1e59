import { type ExpectedRevision, InvalidEvent, WrongExpectedRevision } from "./port.ts";

/**
 * Decides whether an append is a retry of one already stored (its reply was lost): every event id
 * of the batch is stored in the stream, at consecutive revisions, in batch order, and where the
 * expected revision says the batch goes (`expected + 1`; 0 for "no_stream"; anywhere for "any").
 * @param found the stream revision of each batch event id already stored in the stream.
 * @returns the revision of the first stored event of the batch, or null when none is stored (a new append).
 * @throws InvalidEvent when only some ids are stored, or out of order (ids reused for other events).
 * @throws WrongExpectedRevision when the whole batch is stored, but not after `expected`.
 */
export function storedRetry(
  streamId: string,
  ids: string[],
  found: Map<string, number>,
  expected: ExpectedRevision,
  actual: number,
): number | null {
  if (found.size === 0) return null;
  const first = found.get(ids[0] as string);
  const consecutive = first !== undefined && ids.every((id, i) => found.get(id) === first + i);
  if (!consecutive)
    throw new InvalidEvent(
      `stream ${streamId}: ${found.size} of the ${ids.length} event ids are already stored, not as this batch; give new events new eventIds`,
    );
  const at = expected === "any" ? first : expected === "no_stream" ? 0 : expected + 1;
  if (first !== at) throw new WrongExpectedRevision(streamId, expected, actual);
  return first;
}
