import type Database from "better-sqlite3";
import { z } from "zod";
import { chainEvent } from "./hash.ts";
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  NewEvent,
  ReadOptions,
  StoredEvent,
  StoredMetadata,
  SubscribeOptions,
  Subscription,
} from "./port.ts";
import { InvalidEvent, StreamNotFound, WrongExpectedRevision } from "./port.ts";
import { storedRetry } from "./retry.ts";
import { rowToEvent } from "./rows.ts";
import { type EventRow, openDatabase } from "./schema.ts";
import { PumpedSubscription } from "./subscription.ts";
import { checkExpected, checkStreamId, type PreparedEvent, prepareEvents } from "./validate.ts";

/** Options of {@link openSqliteEventStore}. */
export interface SqliteEventStoreOptions {
  /** How often subscriptions look for rows appended by other connections/processes, in ms (default 50). */
  pollIntervalMs?: number;
  /** How long an append waits for another writer's lock before failing with SQLITE_BUSY, in ms (default 5000). */
  busyTimeoutMs?: number;
  /** Clock for default `occurredAt` (default: `new Date()`); tests pin it. */
  now?: () => Date;
}

const optionsSchema = z
  .object({
    pollIntervalMs: z.number().int().min(1).max(60_000).default(50),
    busyTimeoutMs: z.number().int().min(0).max(600_000).default(5000),
    now: z.custom<() => Date>((v) => typeof v === "function").optional(),
  })
  .strict();

/**
 * Opens an embedded SQLite event store (docs/architecture.md "Events: the source of truth": the default backend).
 * Several stores (in this process or others) may share one file: appends are serialized by SQLite
 * (`BEGIN IMMEDIATE`, expected-revision check inside), and subscriptions poll for others' appends.
 * @param path a file path (created when missing) or ":memory:" (private to this store object).
 * @throws InvalidEvent when an option is out of range; SqliteError when the file cannot be opened.
 */
export function openSqliteEventStore(
  path: string | ":memory:",
  options: SqliteEventStoreOptions = {},
): EventStore {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidEvent(`openSqliteEventStore options.${issue?.path.join(".")}: ${issue?.message}`);
  }
  const { pollIntervalMs, busyTimeoutMs, now } = parsed.data;
  return new SqliteEventStore(
    openDatabase(path, { busyTimeoutMs }),
    pollIntervalMs,
    now ?? (() => new Date()),
  );
}

/** The SQLite implementation of {@link EventStore}; create it with {@link openSqliteEventStore}. */
export class SqliteEventStore implements EventStore {
  private readonly subscriptions = new Set<PumpedSubscription>();
  private pollTimer: NodeJS.Timeout | undefined;
  private lastSeenPosition = 0;
  private closed = false;
  private readonly stmt;
  private readonly appendTx;

  constructor(
    private readonly db: Database.Database,
    private readonly pollIntervalMs: number,
    private readonly now: () => Date,
  ) {
    this.stmt = {
      head: db.prepare<[string], { revision: number; hash: string }>(
        "SELECT revision, json_extract(metadata, '$.hash') AS hash FROM events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1",
      ),
      insert: db.prepare<[string, number, string, string, string]>(
        "INSERT INTO events (stream_id, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?)",
      ),
      forwards: db.prepare<[string, number, number], EventRow>(
        "SELECT * FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision ASC LIMIT ?",
      ),
      backwards: db.prepare<[string, number, number], EventRow>(
        "SELECT * FROM events WHERE stream_id = ? AND revision <= ? ORDER BY revision DESC LIMIT ?",
      ),
      streamAfter: db.prepare<[string, number, number], EventRow>(
        "SELECT * FROM events WHERE stream_id = ? AND revision > ? ORDER BY revision ASC LIMIT ?",
      ),
      allFrom: db.prepare<[number, number], EventRow>(
        "SELECT * FROM events WHERE global_position >= ? ORDER BY global_position ASC LIMIT ?",
      ),
      // The batch's ids as one JSON array: one statement per append, not one per event.
      byEventIds: db.prepare<[string, string], { id: string; revision: number }>(
        "SELECT json_extract(metadata, '$.eventId') AS id, revision FROM events WHERE stream_id = ? AND json_extract(metadata, '$.eventId') IN (SELECT value FROM json_each(?))",
      ),
      maxPosition: db.prepare<[], { p: number | null }>("SELECT max(global_position) AS p FROM events"),
      streams: db.prepare<[string, string], { stream_id: string }>(
        "SELECT stream_id FROM events WHERE revision = 0 AND substr(stream_id, 1, length(?)) = ? ORDER BY global_position",
      ),
    };
    this.appendTx = db.transaction((streamId: string, events: PreparedEvent[], expected: ExpectedRevision) =>
      this.appendInTransaction(streamId, events, expected),
    );
  }

  /** See {@link EventStore.append} (a retry with the same event ids returns the stored events). Also throws InvalidEvent for a bad streamId/expected, and SqliteError (SQLITE_BUSY) when another writer holds the lock past busyTimeoutMs. */
  async append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.assertOpen();
    checkStreamId(streamId);
    const want = checkExpected(expected);
    const prepared = prepareEvents(events, this.now);
    const result = this.appendTx.immediate(streamId, prepared, want);
    this.notifyAll();
    return result;
  }

  private appendInTransaction(
    streamId: string,
    events: PreparedEvent[],
    expected: ExpectedRevision,
  ): AppendResult {
    const head = this.stmt.head.get(streamId);
    const actual = head ? head.revision : -1;
    const ids = events.map((e) => e.metadata.eventId);
    const found = new Map<string, number>();
    for (const row of this.stmt.byEventIds.all(streamId, JSON.stringify(ids)))
      found.set(row.id, row.revision);
    const retry = storedRetry(streamId, ids, found, expected, actual);
    if (retry !== null) {
      const stored = this.stmt.forwards.all(streamId, retry, ids.length).map(rowToEvent);
      const end = stored[stored.length - 1]!;
      return { nextExpectedRevision: end.revision, globalPosition: end.globalPosition, events: stored };
    }
    const ok =
      expected === "any" || (expected === "no_stream" ? actual === -1 : expected === actual && actual >= 0);
    if (!ok) throw new WrongExpectedRevision(streamId, expected, actual);
    let prevHash = head ? head.hash : "";
    let revision = actual;
    const stored: StoredEvent[] = [];
    for (const event of events) {
      revision += 1;
      const withoutHash = { ...event.metadata, prevHash };
      // The hash from the canonical data text prepareEvents made; the stored metadata text with it.
      const chained = chainEvent(event.type, event.dataJson, withoutHash);
      const metadata: StoredMetadata = { ...withoutHash, hash: chained.hash };
      const info = this.stmt.insert.run(streamId, revision, event.type, event.dataJson, chained.metadataJson);
      const globalPosition = Number(info.lastInsertRowid);
      stored.push({ streamId, revision, globalPosition, type: event.type, data: event.data, metadata });
      prevHash = metadata.hash;
    }
    const last = stored[stored.length - 1]!;
    return { nextExpectedRevision: last.revision, globalPosition: last.globalPosition, events: stored };
  }

  /** See {@link EventStore.readStream}. `fromRevision` beyond the stream yields []. @throws InvalidEvent for a negative fromRevision/maxCount. */
  async readStream(streamId: string, options: ReadOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    checkStreamId(streamId);
    const limit = checkCount("maxCount", options.maxCount);
    if (options.fromRevision !== undefined) checkCount("fromRevision", options.fromRevision);
    if (this.stmt.head.get(streamId) === undefined) throw new StreamNotFound(streamId);
    const rows =
      options.direction === "backwards"
        ? this.stmt.backwards.all(streamId, options.fromRevision ?? Number.MAX_SAFE_INTEGER, limit)
        : this.stmt.forwards.all(streamId, options.fromRevision ?? 0, limit);
    return rows.map(rowToEvent);
  }

  /** See {@link EventStore.readAll}. */
  async readAll(options: { fromPosition?: number; maxCount?: number } = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    const limit = checkCount("maxCount", options.maxCount);
    if (options.fromPosition !== undefined) checkCount("fromPosition", options.fromPosition);
    return this.stmt.allFrom.all(options.fromPosition ?? 1, limit).map(rowToEvent);
  }

  /** See {@link EventStore.streamRevision}. */
  async streamRevision(streamId: string): Promise<number> {
    this.assertOpen();
    checkStreamId(streamId);
    return this.stmt.head.get(streamId)?.revision ?? -1;
  }

  /** See {@link EventStore.headPosition}. */
  async headPosition(): Promise<number> {
    this.assertOpen();
    return this.stmt.maxPosition.get()?.p ?? 0;
  }

  /** See {@link EventStore.listStreams}. */
  async listStreams(prefix = ""): Promise<string[]> {
    this.assertOpen();
    return this.stmt.streams.all(prefix, prefix).map((r) => r.stream_id);
  }

  /** See {@link EventStore.subscribeToStream}; `after` is a revision (-1 = from the start). */
  subscribeToStream(streamId: string, options: SubscribeOptions): Subscription {
    this.assertOpen();
    checkStreamId(streamId);
    return this.track(
      new PumpedSubscription(
        Math.max(options.after ?? -1, -1),
        (cursor, limit) => this.stmt.streamAfter.all(streamId, cursor, limit).map(rowToEvent),
        (event) => event.revision,
        options,
        (sub) => this.untrack(sub),
      ),
    );
  }

  /** See {@link EventStore.subscribeToAll}; `after` is a global position (0 = from the start). */
  subscribeToAll(options: SubscribeOptions): Subscription {
    this.assertOpen();
    return this.track(
      new PumpedSubscription(
        Math.max(options.after ?? 0, 0),
        (cursor, limit) => this.stmt.allFrom.all(cursor + 1, limit).map(rowToEvent),
        (event) => event.globalPosition,
        options,
        (sub) => this.untrack(sub),
      ),
    );
  }

  /** Closes every subscription (waiting for in-flight handlers), stops polling, closes the database. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((sub) => sub.close()));
    this.stopPolling();
    this.db.close();
  }

  private track(sub: PumpedSubscription): PumpedSubscription {
    this.subscriptions.add(sub);
    if (this.pollTimer === undefined) {
      this.lastSeenPosition = this.stmt.maxPosition.get()?.p ?? 0;
      this.pollTimer = setInterval(() => this.poll(), this.pollIntervalMs);
      this.pollTimer.unref();
    }
    return sub;
  }

  private untrack(sub: PumpedSubscription): void {
    this.subscriptions.delete(sub);
    if (this.subscriptions.size === 0) this.stopPolling();
  }

  private stopPolling(): void {
    if (this.pollTimer !== undefined) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
  }

  /** Wakes subscriptions when the table grew (appends by other connections). */
  private poll(): void {
    if (this.closed) return;
    const position = this.stmt.maxPosition.get()?.p ?? 0;
    if (position !== this.lastSeenPosition) {
      this.lastSeenPosition = position;
      this.notifyAll();
    }
  }

  private notifyAll(): void {
    for (const sub of this.subscriptions) sub.wake();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error("event store is closed: open a new one with openSqliteEventStore()");
  }
}

/** Validates an optional non-negative integer option; returns it, or -1 (SQLite's "no limit") when absent. */
function checkCount(field: string, value: number | undefined): number {
  if (value === undefined) return -1;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new InvalidEvent(`${field} must be an integer >= 0 (got ${String(value)})`);
  }
  return value;
}
