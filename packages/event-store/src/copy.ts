import { eventHash } from "./hash.ts";
import type { EventMetadataInput, EventStore, NewEvent, StoredEvent } from "./port.ts";

/** Progress of {@link copyEventStore}: reported after every appended page and once when a stream is done. */
export interface CopyProgress {
  streamId: string;
  /** Events of this stream appended to the target by this run so far. */
  copied: number;
  /** Events of this stream that the target already held (an earlier, interrupted copy), skipped. */
  alreadyPresent: number;
  /** The target stream's last revision now (-1: still empty). */
  revision: number;
  /** True on the stream's last report. */
  done: boolean;
}

/** Options of {@link copyEventStore}. */
export interface CopyOptions {
  /** Events read and appended per page (one atomic append each), 1 to 10 000; default 500. Bounds memory. */
  pageSize?: number;
  /** Only streams whose id starts with this (default: every stream). */
  prefix?: string;
  /** Called after each appended page and when a stream is done; a throw stops the copy (what is appended stays). */
  onProgress?(progress: CopyProgress): void;
  /** Stops the copy between pages (rejects with the signal's reason); what is appended stays, a re-run continues. */
  signal?: AbortSignal;
}

/** Outcome of {@link copyEventStore}. */
export interface CopyResult {
  /** Streams examined (every stream the source lists, after `prefix`). */
  streams: number;
  /** Events appended to the target by this run. */
  eventsCopied: number;
  /** Events the target already held and that were skipped (they match the source's hashes). */
  eventsAlreadyPresent: number;
  /** Wall time of the copy, in seconds. */
  seconds: number;
}

/**
 * The target holds events that the source does not (a different event at some revision, or more events
 * than the source): the copy never overwrites, so it stops here naming the stream and revision.
 */
export class CopyDiverged extends Error {
  override name = "CopyDiverged";
  constructor(
    readonly streamId: string,
    readonly revision: number,
    detail: string,
  ) {
    super(
      `stream ${streamId}: the target differs from the source at revision ${revision} (${detail}); refusing to copy into it`,
    );
  }
}

/** A source event cannot be copied with its hash unchanged (its chain is broken, or its metadata has a shape the store no longer accepts). */
export class CopySourceInvalid extends Error {
  override name = "CopySourceInvalid";
  constructor(
    readonly streamId: string,
    readonly revision: number,
    detail: string,
  ) {
    super(`stream ${streamId}: source event at revision ${revision} cannot be copied unchanged: ${detail}`);
  }
}

/** Metadata keys a caller may give on append (the store adds prevHash/hash); all but `caller` and `traceparent` must be present to keep the hash. */
const REQUIRED_KEYS = [
  "eventId",
  "occurredAt",
  "actor",
  "causationId",
  "correlationId",
  "schemaVersion",
] as const;
const ALLOWED_KEYS = new Set<string>([...REQUIRED_KEYS, "caller", "traceparent", "prevHash", "hash"]);

const DEFAULT_PAGE = 500;
const MAX_PAGE = 10_000;

/**
 * Copies every stream of `source` (in `listStreams` order) into `target`, event for event: same event
 * ids, types, data and metadata (occurredAt, actor, caller, causationId, correlationId, schemaVersion).
 * The target store computes each hash on append from exactly that input, so the copied hashes equal the
 * source's; the copy checks each source event's hash before appending and each stored hash after.
 * Global positions are the target's own: streams are appended one after another, so events of different
 * streams are not interleaved as they were in the source.
 *
 * Resumable: a target stream that already has events is continued after its last revision (an append with
 * that expected revision), when its event at that revision has the source's hash (the chain makes that
 * hash stand for every event before it). A re-run after an interruption therefore appends only what is
 * missing, and a finished copy re-run appends nothing.
 * @throws CopyDiverged when a target stream differs from the source (another event at some revision, or
 *   more events than the source); nothing of that stream is written.
 * @throws CopySourceInvalid when a source event's hash chain is broken or its metadata lacks a field.
 * @throws WrongExpectedRevision when something else appends to a target stream during the copy.
 * @throws StoreUnavailable from either store; the signal's reason when aborted.
 */
export async function copyEventStore(
  source: EventStore,
  target: EventStore,
  options: CopyOptions = {},
): Promise<CopyResult> {
  const pageSize = options.pageSize ?? DEFAULT_PAGE;
  if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE)
    throw new RangeError(`pageSize must be an integer from 1 to ${MAX_PAGE} (got ${String(pageSize)})`);
  const started = performance.now();
  const result: CopyResult = { streams: 0, eventsCopied: 0, eventsAlreadyPresent: 0, seconds: 0 };
  for (const streamId of await source.listStreams(options.prefix ?? "")) {
    options.signal?.throwIfAborted();
    const { copied, alreadyPresent } = await copyStream(source, target, streamId, pageSize, options);
    result.streams += 1;
    result.eventsCopied += copied;
    result.eventsAlreadyPresent += alreadyPresent;
  }
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

async function copyStream(
  source: EventStore,
  target: EventStore,
  streamId: string,
  pageSize: number,
  options: CopyOptions,
): Promise<{ copied: number; alreadyPresent: number }> {
  let revision = await target.streamRevision(streamId);
  let prevHash = revision >= 0 ? await matchingHead(source, target, streamId, revision, pageSize) : "";
  const alreadyPresent = revision + 1;
  let copied = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    const page = await source.readStream(streamId, { fromRevision: revision + 1, maxCount: pageSize });
    if (page.length === 0) break;
    const batch: NewEvent[] = [];
    for (const event of page) {
      batch.push(toNewEvent(event, revision + 1 + batch.length, prevHash));
      prevHash = event.metadata.hash;
    }
    const stored = await target.append(streamId, batch, revision);
    stored.events.forEach((event, i) => {
      const want = page[i] as StoredEvent;
      if (event.metadata.hash !== want.metadata.hash)
        throw new Error(
          `stream ${streamId}: the target stored revision ${event.revision} with hash ${event.metadata.hash}, not the source's ${want.metadata.hash}; verify the target (gatehouse store verify)`,
        );
    });
    revision = stored.nextExpectedRevision;
    copied += page.length;
    options.onProgress?.({ streamId, copied, alreadyPresent, revision, done: false });
    if (page.length < pageSize) break;
  }
  options.onProgress?.({ streamId, copied, alreadyPresent, revision, done: true });
  return { copied, alreadyPresent };
}

/**
 * Checks that the target stream, which ends at `revision`, is a prefix of the source stream: the events
 * at `revision` have the same hash. Returns that hash.
 * @throws CopyDiverged naming the first revision where they differ.
 */
async function matchingHead(
  source: EventStore,
  target: EventStore,
  streamId: string,
  revision: number,
  pageSize: number,
): Promise<string> {
  const [mine] = await target.readStream(streamId, { fromRevision: revision, maxCount: 1 });
  const [theirs] = await source.readStream(streamId, { fromRevision: revision, maxCount: 1 });
  if (mine !== undefined && theirs !== undefined && mine.metadata.hash === theirs.metadata.hash)
    return mine.metadata.hash;
  // Find the first revision that differs, for the message (pages of both; memory stays bounded).
  for (let from = 0; from <= revision; from += pageSize) {
    const a = await target.readStream(streamId, { fromRevision: from, maxCount: pageSize });
    const b = await source.readStream(streamId, { fromRevision: from, maxCount: pageSize });
    for (let i = 0; i < a.length; i++) {
      const t = a[i] as StoredEvent;
      const s = b[i];
      if (s === undefined)
        throw new CopyDiverged(
          streamId,
          t.revision,
          `the target has ${revision + 1} events, the source only ${from + b.length}`,
        );
      if (s.metadata.hash !== t.metadata.hash)
        throw new CopyDiverged(
          streamId,
          t.revision,
          `target event ${t.metadata.eventId} (${t.type}) has hash ${short(t.metadata.hash)}, source event ${s.metadata.eventId} (${s.type}) has ${short(s.metadata.hash)}`,
        );
    }
  }
  // Every hash matched page by page, yet the heads did not: the target changed under us.
  throw new CopyDiverged(streamId, revision, "the target stream changed during the check");
}

function short(hash: string): string {
  return `${hash.slice(0, 12)}…`;
}

/**
 * The append input that reproduces a stored event with the same hash: its metadata without the chain
 * fields. Checks that the event's hash is its own (a broken source chain is not copied) and that every
 * metadata field is given, since the store would fill a missing one with a default and change the hash.
 */
function toNewEvent(event: StoredEvent, expectedRevision: number, prevHash: string): NewEvent {
  const where = (detail: string) => new CopySourceInvalid(event.streamId, event.revision, detail);
  if (event.revision !== expectedRevision)
    throw where(`revision ${expectedRevision} is missing in the source (next is ${event.revision})`);
  const metadata = event.metadata as unknown as Record<string, unknown>;
  if (metadata.prevHash !== prevHash)
    throw where("its prevHash is not the previous event's hash (run gatehouse store verify on the source)");
  if (eventHash(event.type, event.data, event.metadata) !== event.metadata.hash)
    throw where("its hash does not match its content (run gatehouse store verify on the source)");
  for (const key of REQUIRED_KEYS)
    if (!(key in metadata)) throw where(`metadata.${key} is missing, so the store would fill it in`);
  for (const key of Object.keys(metadata))
    if (!ALLOWED_KEYS.has(key)) throw where(`metadata.${key} is not a field the store accepts on append`);
  const { prevHash: _p, hash: _h, ...input } = event.metadata;
  return { type: event.type, data: event.data, metadata: input satisfies EventMetadataInput };
}
