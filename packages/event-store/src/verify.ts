import { eventHash } from "./hash.ts";
import type { EventStore, StoredEvent } from "./port.ts";

/** Outcome of {@link verifyStream}. */
export interface VerifyResult {
  /** True when every event's revision, prevHash and hash check out. */
  ok: boolean;
  /** Events examined (stops at the first bad one, which is counted). */
  eventsChecked: number;
  /** Revision (stream position) of the first bad event, or -1 when ok. */
  firstBadRevision: number;
  /** What is wrong, naming the revision and field; "" when ok. */
  problem: string;
  /** Hash of the last good event ("" when none): compare with an anchor kept elsewhere to detect a cut-off tail. */
  lastHash: string;
}

/** Events read per page while verifying. */
const PAGE = 1000;

/**
 * Recomputes a stream's hash chain (docs/architecture.md "Events: the source of truth": `hash = sha256(prevHash ‖ canonical(type, data,
 * metadata-without-hash))`, `prevHash` of revision 0 is ""). Detects an edited type/data/metadata (hash
 * mismatch), an edited hash (the next event's prevHash no longer matches), and a deleted or reordered event
 * (a revision gap). It cannot detect removal of the last events on its own: compare `lastHash` with an anchor.
 * Reads through the port only, so it works on every backend.
 * @throws StreamNotFound when the stream has no events.
 */
export async function verifyStream(store: EventStore, streamId: string): Promise<VerifyResult> {
  let expectedRevision = 0;
  let prevHash = "";
  for (;;) {
    const page = await store.readStream(streamId, { fromRevision: expectedRevision, maxCount: PAGE });
    for (const event of page) {
      const problem = checkEvent(event, expectedRevision, prevHash);
      if (problem !== "") {
        return {
          ok: false,
          eventsChecked: expectedRevision + 1,
          firstBadRevision: expectedRevision,
          problem,
          lastHash: prevHash,
        };
      }
      prevHash = event.metadata.hash;
      expectedRevision += 1;
    }
    if (page.length < PAGE) break;
  }
  return { ok: true, eventsChecked: expectedRevision, firstBadRevision: -1, problem: "", lastHash: prevHash };
}

function checkEvent(event: StoredEvent, expectedRevision: number, prevHash: string): string {
  if (event.revision !== expectedRevision) {
    return `revision ${expectedRevision} is missing (next stored revision is ${event.revision}): an event was deleted`;
  }
  const metadata = event.metadata;
  if (metadata === null || typeof metadata !== "object" || typeof metadata.hash !== "string") {
    return `revision ${event.revision}: metadata.hash is missing`;
  }
  if (metadata.prevHash !== prevHash) {
    return `revision ${event.revision}: metadata.prevHash does not match the hash of revision ${event.revision - 1}`;
  }
  let recomputed: string;
  try {
    recomputed = eventHash(event.type, event.data, metadata);
  } catch (error) {
    return `revision ${event.revision}: cannot canonicalize the event (${(error as Error).message})`;
  }
  if (recomputed !== metadata.hash) {
    return `revision ${event.revision}: metadata.hash does not match its type, data and metadata (edited after it was written)`;
  }
  return "";
}
