/**
 * The event-store port (docs/architecture.md "Events: the source of truth"). Backends: embedded SQLite (`SqliteEventStore`),
 * PostgreSQL (`PostgresEventStore`), KurrentDB (`KurrentEventStore`). Every backend runs the conformance suite in `src/conformance.ts`.
 *
 * Revisions are 0-based positions within one stream; `globalPosition` is a 1-based position
 * across all streams of one store (dense on SQLite and PostgreSQL; on KurrentDB the event's commit
 * position: increasing, not dense). Every stored event carries `prevHash`/`hash`:
 * `hash = sha256(prevHash ‖ canonical({type, data, metadata-without-hash}))` (RFC 8785 JSON),
 * `prevHash` = the previous event's hash in the same stream ("" for revision 0).
 */

/** What a caller appends. `data` and `metadata` must be JSON-serializable. */
export interface NewEvent {
  type: string;
  data: unknown;
  /** Extra metadata: actor, caller, causationId, correlationId, traceparent. eventId/occurredAt/hashes are set by the store when absent. */
  metadata?: Partial<EventMetadataInput>;
}

export interface EventMetadataInput {
  eventId: string;
  /** ISO-8601 UTC. */
  occurredAt: string;
  actor: string;
  caller: { kind: string; id: string } | undefined;
  causationId: string;
  correlationId: string;
  schemaVersion: number;
  /**
   * The W3C trace context (`00-<trace id>-<span id>-<flags>`) of the span that appended the event, when
   * the appending service traced it (an action's submission, so its approval's trace can link to it).
   * Absent otherwise: events of a service without tracing are exactly as before. Covered by the hash
   * like every other field.
   */
  traceparent?: string;
}

/** Metadata as stored: always complete, with the hash chain. */
export interface StoredMetadata extends EventMetadataInput {
  prevHash: string;
  hash: string;
}

export interface StoredEvent {
  streamId: string;
  /** 0-based position in the stream. */
  revision: number;
  /** 1-based position across the store (KurrentDB: the commit position, increasing but with gaps). */
  globalPosition: number;
  type: string;
  data: unknown;
  metadata: StoredMetadata;
}

/**
 * Expected revision for an append: a number (the stream's last revision must equal it),
 * "no_stream" (the stream must not exist), "any" (no check). -1 is accepted as "no_stream", so the result of
 * `streamRevision()` can be passed back unchanged.
 */
export type ExpectedRevision = number | "no_stream" | "any";

export interface AppendResult {
  /** Revision of the last appended event. */
  nextExpectedRevision: number;
  /** Global position of the last appended event. */
  globalPosition: number;
  events: StoredEvent[];
}

export interface ReadOptions {
  /** "forwards" from `fromRevision` (default 0) or "backwards" from it (default: the end). */
  direction?: "forwards" | "backwards";
  fromRevision?: number;
  /** Max events returned (default: all). */
  maxCount?: number;
}

/** Catch-up-then-live subscription: delivers stored events after the start point, then new ones in order. */
export interface Subscription {
  /** Stops delivery; resolves when no handler call is in flight. */
  close(): Promise<void>;
}

export interface SubscribeOptions {
  /** Deliver events with revision (stream) or global position (all) strictly greater than this; -1/0 = from the start. */
  after?: number;
  /** Called once per event, in order, never concurrently (the next call waits for the returned promise). */
  onEvent(event: StoredEvent): void | Promise<void>;
  /** A handler that throws stops the subscription and its error lands here (else a process warning). */
  onError?(error: Error): void;
}

export interface EventStore {
  /**
   * Appends atomically: either all events are stored with consecutive revisions, or none.
   * Retries are safe: an append whose every event id is already stored in the stream, in order, where
   * `expected` puts it (a retry after a lost reply) stores nothing and returns the stored events.
   * @throws WrongExpectedRevision when the stream's current revision differs from `expected`.
   * @throws InvalidEvent when a type is empty, data is not JSON-serializable, or some (not all) event ids are already stored.
   * @throws StoreUnavailable when a server backend cannot be reached (nothing, or all, was appended: retry).
   */
  append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  /** @throws StreamNotFound when the stream has no events. */
  readStream(streamId: string, options?: ReadOptions): Promise<StoredEvent[]>;
  /** Every event in global order, from `fromPosition` (inclusive, default 1). */
  readAll(options?: { fromPosition?: number; maxCount?: number }): Promise<StoredEvent[]>;
  /** Last revision of a stream, or -1 when it does not exist. */
  streamRevision(streamId: string): Promise<number>;
  /** Global position of the last event in the store (0 when empty): `subscribeToAll({after})` from here delivers only new events. */
  headPosition(): Promise<number>;
  /** Stream ids with their first event, in creation order; `prefix` filters. */
  listStreams(prefix?: string): Promise<string[]>;
  subscribeToStream(streamId: string, options: SubscribeOptions): Subscription;
  subscribeToAll(options: SubscribeOptions): Subscription;
  close(): Promise<void>;
}

/** The append's expected revision did not match; nothing was appended. */
export class WrongExpectedRevision extends Error {
  override name = "WrongExpectedRevision";
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: number,
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)} but it is at ${actual}`);
  }
}

export class StreamNotFound extends Error {
  override name = "StreamNotFound";
  constructor(readonly streamId: string) {
    super(`stream ${streamId} does not exist`);
  }
}

export class InvalidEvent extends Error {
  override name = "InvalidEvent";
}

/**
 * The store's server cannot be reached, or went away mid-request (services answer UNAVAILABLE).
 * An append that fails so is all-or-nothing: retry it with the same event ids (see {@link EventStore.append}).
 */
export class StoreUnavailable extends Error {
  override name = "StoreUnavailable";
}

/** The database's schema is older (or newer) than this code: the message names the migrate command. */
export class StoreSchemaMismatch extends Error {
  override name = "StoreSchemaMismatch";
}
