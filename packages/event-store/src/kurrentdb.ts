import { AsyncLocalStorage } from "node:async_hooks";
import {
  BACKWARDS,
  END,
  ErrorType,
  FORWARDS,
  KurrentDBClient,
  type ResolvedEvent,
  START,
  streamNameFilter,
} from "@kurrent/kurrentdb-client";
import { z } from "zod";
import { eventHash } from "./hash.ts";
import {
  fromKurrentStreamName,
  fromResolvedEvent,
  isUnavailableError,
  KURRENT_STREAM_PREFIX,
  KURRENT_URL_OPTIONS,
  kurrentErrorType,
  kurrentNamePrefixes,
  mapKurrentError,
  streamStateAt,
  toClientConnectionString,
  toEventData,
  toKurrentPosition,
  toKurrentStreamName,
  toStreamState,
  unknownKurrentOptions,
} from "./kurrentdb-mapping.ts";
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
import { InvalidEvent, StoreUnavailable, StreamNotFound, WrongExpectedRevision } from "./port.ts";
import { storedRetry } from "./retry.ts";
import { redactUrl } from "./url.ts";
import { checkExpected, checkStreamId, prepareEvents } from "./validate.ts";

/** Options of {@link openKurrentEventStore}. */
export interface KurrentEventStoreOptions {
  /** How long the first request at open may take before the store is refused as unavailable, ms (default 5000). */
  connectTimeoutMs?: number;
  /**
   * How many of a stream's last events an append reads to find event ids already stored (retries and
   * reused ids), default 64. KurrentDB has no unique index on event ids: a reused id older than this is
   * not detected (a retry at a numeric expected revision is always found, wherever it is).
   */
  duplicateWindow?: number;
  /** Wait before a subscription resubscribes after the server went away, ms (default 1000). */
  resubscribeMs?: number;
  /** Clock for default `occurredAt` (default: `new Date()`). */
  now?: () => Date;
}

const optionsSchema = z
  .object({
    connectTimeoutMs: z.number().int().min(100).max(600_000).default(5000),
    duplicateWindow: z.number().int().min(1).max(4096).default(64),
    resubscribeMs: z.number().int().min(10).max(60_000).default(1000),
    now: z.custom<() => Date>((v) => typeof v === "function").optional(),
  })
  .strict();

/** Appends that lost a race to another writer (the stream moved between our read and our write) are retried this often. */
const MAX_APPEND_ATTEMPTS = 100;

/** The server-side `$all` filter: only streams this backend writes (so never `$`-prefixed system streams). */
const ourStreams = () => streamNameFilter({ prefixes: [KURRENT_STREAM_PREFIX] });

/** Rejects with `onTimeout()` when `promise` has not settled within `ms`. */
async function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Opens the KurrentDB (EventStoreDB) event store at `url`, a KurrentDB connection string
 * (`kurrentdb://[user:password@]host:2113[,host:port…][?tls=false&…]`; `esdb://` is accepted as its
 * old name). Stream ids, event ids, positions and metadata map as described in `kurrentdb-mapping.ts`
 * and docs/event-store.md "KurrentDB". Checks at open that the server answers a read of `$all` within
 * `connectTimeoutMs`; there is no schema to check.
 * @throws InvalidEvent when the URL is not a KurrentDB connection string or an option is out of range.
 * @throws StoreUnavailable naming the URL (password redacted) when no server answers in time.
 */
export async function openKurrentEventStore(
  url: string,
  options: KurrentEventStoreOptions = {},
): Promise<KurrentEventStore> {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidEvent(`openKurrentEventStore options.${issue?.path.join(".")}: ${issue?.message}`);
  }
  const { connectTimeoutMs, duplicateWindow, resubscribeMs, now } = parsed.data;
  const unknown = unknownKurrentOptions(url);
  if (unknown.length > 0) {
    // Refused here: the client would only warn, quoting the whole string with its password.
    throw new InvalidEvent(
      `event store URL ${redactUrl(url)}: unknown KurrentDB option ${unknown.map((k) => `"${k}"`).join(", ")}; known options: ${KURRENT_URL_OPTIONS.join(", ")}`,
    );
  }
  let client: KurrentDBClient;
  try {
    client = KurrentDBClient.connectionString(toClientConnectionString(url));
  } catch {
    // The parser's message quotes the whole string, password included: name the expected form instead.
    throw new InvalidEvent(
      `event store URL ${redactUrl(url)} is not a KurrentDB connection string: use kurrentdb://[user:password@]host:2113[?tls=false]`,
    );
  }
  const probe = async () => {
    for await (const _ of client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 })) break;
  };
  try {
    await withDeadline(
      probe(),
      connectTimeoutMs,
      () => new StoreUnavailable(`no KurrentDB server answered within ${connectTimeoutMs} ms`),
    );
  } catch (error) {
    void client.dispose().catch(() => {});
    const mapped = mapKurrentError(error, { url });
    const reason = mapped instanceof StoreUnavailable ? (error as Error).message : mapped.message;
    throw new StoreUnavailable(`cannot connect to the event store at ${redactUrl(url)}: ${reason}`);
  }
  return new KurrentEventStore(client, url, duplicateWindow, resubscribeMs, now ?? (() => new Date()));
}

/**
 * The KurrentDB implementation of {@link EventStore}; create it with {@link openKurrentEventStore}.
 * Differences from SQLite and PostgreSQL (docs/event-store.md "KurrentDB"): `globalPosition` is the
 * event's commit position in the server's log (monotonic, not dense, not 1-based), and reused event ids
 * are detected only within the last `duplicateWindow` events of a stream.
 */
export class KurrentEventStore implements EventStore {
  private readonly subscriptions = new Set<KurrentSubscription>();
  private closed = false;

  constructor(
    private readonly client: KurrentDBClient,
    private readonly url: string,
    private readonly duplicateWindow: number,
    private readonly resubscribeMs: number,
    private readonly now: () => Date,
  ) {}

  /**
   * See {@link EventStore.append}. Reads the stream's last events (backwards, up to `duplicateWindow`)
   * for the previous hash, the current revision and already-stored ids, then appends with the observed
   * revision as `streamState`, so the server rejects a writer that raced us. For `"any"` such a race is
   * retried with a fresh read (the chain must link to the real last event); for a number or
   * `"no_stream"` it is a {@link WrongExpectedRevision} with the revision read after it. A retry (same ids
   * where `expected` puts them) returns the stored events and stores nothing.
   * @throws StoreUnavailable when the server cannot be reached (nothing, or all, was appended: retry).
   */
  async append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.assertOpen();
    checkStreamId(streamId);
    const want = checkExpected(expected);
    const prepared = prepareEvents(events, this.now);
    const ids = prepared.map((e) => e.metadata.eventId);
    const batchIds = new Set(ids);
    const name = toKurrentStreamName(streamId);
    for (let attempt = 1; ; attempt++) {
      const tail = await this.readRange(
        streamId,
        name,
        BACKWARDS,
        END,
        Math.max(this.duplicateWindow, ids.length),
      );
      const actual = tail[0]?.revision ?? -1;
      const found = new Map<string, number>();
      const note = (stored: StoredEvent[]) => {
        for (const e of stored)
          if (batchIds.has(e.metadata.eventId)) found.set(e.metadata.eventId, e.revision);
      };
      note(tail);
      // Where `expected` puts the batch, when that is older than the window: a retry is found wherever it is.
      const at = want === "any" ? undefined : want === "no_stream" ? 0 : want + 1;
      const oldest = tail[tail.length - 1]?.revision ?? 0;
      if (at !== undefined && at <= actual && at < oldest) {
        note(await this.readRange(streamId, name, FORWARDS, BigInt(at), ids.length));
      }
      const retry = storedRetry(streamId, ids, found, want, actual);
      if (retry !== null) return this.result(await this.readBatch(streamId, name, retry, ids));
      const ok = want === "any" || (want === "no_stream" ? actual === -1 : want === actual);
      if (!ok) throw new WrongExpectedRevision(streamId, want, actual);

      let prevHash = tail[0]?.metadata.hash ?? "";
      const data = prepared.map((event) => {
        const withoutHash = { ...event.metadata, prevHash };
        const metadata: StoredMetadata = {
          ...withoutHash,
          hash: eventHash(event.type, event.data, withoutHash),
        };
        prevHash = metadata.hash;
        return toEventData(event.type, event.data, metadata);
      });
      try {
        await this.client.appendToStream(name, data, {
          streamState: want === "any" ? streamStateAt(actual) : toStreamState(want),
        });
      } catch (error) {
        // Another writer moved the stream since our read (or a concurrent retry of this batch landed):
        // read again; the checks above then answer a conflict, a retry, or (for "any") append anew.
        if (isWrongExpectedVersion(error) && attempt < MAX_APPEND_ATTEMPTS) continue;
        throw mapKurrentError(error, { url: this.url, streamId, expected: want });
      }
      // The stored events (the server may have answered an identical concurrent retry idempotently).
      return this.result(await this.readBatch(streamId, name, actual + 1, ids));
    }
  }

  /** See {@link EventStore.readStream}. */
  async readStream(streamId: string, options: ReadOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    checkStreamId(streamId);
    const limit = checkCount("maxCount", options.maxCount);
    if (options.fromRevision !== undefined) checkCount("fromRevision", options.fromRevision);
    const name = toKurrentStreamName(streamId);
    if (limit === 0) {
      if ((await this.streamRevision(streamId)) < 0) throw new StreamNotFound(streamId);
      return [];
    }
    const backwards = options.direction === "backwards";
    const from = options.fromRevision !== undefined ? BigInt(options.fromRevision) : backwards ? END : START;
    const events = await this.read(
      streamId,
      this.client.readStream(name, {
        direction: backwards ? BACKWARDS : FORWARDS,
        fromRevision: from,
        ...(limit === null ? {} : { maxCount: limit }),
      }),
    );
    return events;
  }

  /**
   * See {@link EventStore.readAll}. `fromPosition` is inclusive and is either absent / 0 / 1 (from the
   * start) or a `globalPosition` this store returned (a commit position); other values are passed to
   * the server, which may refuse them as not a record boundary.
   */
  async readAll(options: { fromPosition?: number; maxCount?: number } = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    const limit = checkCount("maxCount", options.maxCount);
    if (options.fromPosition !== undefined) checkCount("fromPosition", options.fromPosition);
    if (limit === 0) return [];
    const from = options.fromPosition ?? 0;
    const events = await this.read(
      undefined,
      this.client.readAll({
        direction: FORWARDS,
        fromPosition: from <= 1 ? START : toKurrentPosition(from),
        filter: ourStreams(),
        ...(limit === null ? {} : { maxCount: limit + 1 }),
      }),
    );
    const inRange = events.filter((e) => e.globalPosition >= from);
    return limit === null ? inRange : inRange.slice(0, limit);
  }

  /** See {@link EventStore.streamRevision}. */
  async streamRevision(streamId: string): Promise<number> {
    this.assertOpen();
    checkStreamId(streamId);
    const name = toKurrentStreamName(streamId);
    try {
      for await (const resolved of this.client.readStream(name, {
        direction: BACKWARDS,
        fromRevision: END,
        maxCount: 1,
      })) {
        if (resolved.event) return Number(resolved.event.revision);
      }
      return -1;
    } catch (error) {
      const mapped = mapKurrentError(error, { url: this.url, streamId });
      if (mapped instanceof StreamNotFound) return -1;
      throw mapped;
    }
  }

  /** See {@link EventStore.headPosition}: the commit position of the last event in a Gatehouse stream, 0 when there is none. */
  async headPosition(): Promise<number> {
    this.assertOpen();
    const [last] = await this.read(
      undefined,
      this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1, filter: ourStreams() }),
    );
    return last?.globalPosition ?? 0;
  }

  /** See {@link EventStore.listStreams}. Scans the (server-filtered) `$all` for first events: cost grows with the store. */
  async listStreams(prefix = ""): Promise<string[]> {
    this.assertOpen();
    const names: string[] = [];
    try {
      for await (const resolved of this.client.readAll({
        direction: FORWARDS,
        fromPosition: START,
        filter: streamNameFilter({ prefixes: kurrentNamePrefixes(prefix) }),
      })) {
        const record = resolved.event;
        if (record === undefined || BigInt(record.revision) !== 0n) continue;
        const id = fromKurrentStreamName(record.streamId);
        if (id?.startsWith(prefix)) names.push(id);
      }
    } catch (error) {
      throw mapKurrentError(error, { url: this.url });
    }
    return names;
  }

  /** See {@link EventStore.subscribeToStream}; `after` is a revision (-1 = from the start). A catch-up subscription of the client. */
  subscribeToStream(streamId: string, options: SubscribeOptions): Subscription {
    this.assertOpen();
    checkStreamId(streamId);
    const name = toKurrentStreamName(streamId);
    return this.track(
      new KurrentSubscription(
        Math.max(options.after ?? -1, -1),
        (cursor) =>
          this.client.subscribeToStream(name, { fromRevision: cursor < 0 ? START : BigInt(cursor) }),
        (resolved) => {
          const event = fromResolvedEvent(resolved);
          return event?.streamId === streamId ? event : undefined;
        },
        (event) => event.revision,
        this.url,
        this.resubscribeMs,
        options,
        (sub) => this.subscriptions.delete(sub),
      ),
    );
  }

  /**
   * See {@link EventStore.subscribeToAll}; `after` is a global position (a commit position this store
   * returned, or 0 = from the start). A catch-up subscription to `$all` with a server-side filter on
   * the `workspace-` prefix, so system events never arrive.
   */
  subscribeToAll(options: SubscribeOptions): Subscription {
    this.assertOpen();
    return this.track(
      new KurrentSubscription(
        Math.max(options.after ?? 0, 0),
        (cursor) =>
          this.client.subscribeToAll({
            fromPosition: cursor <= 0 ? START : toKurrentPosition(cursor),
            filter: ourStreams(),
          }),
        fromResolvedEvent,
        (event) => event.globalPosition,
        this.url,
        this.resubscribeMs,
        options,
        (sub) => this.subscriptions.delete(sub),
      ),
    );
  }

  /** Closes every subscription (waiting for in-flight handlers), then the client. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((sub) => sub.close()));
    await this.client.dispose().catch(() => {});
  }

  private result(stored: StoredEvent[]): AppendResult {
    const end = stored[stored.length - 1] as StoredEvent;
    return { nextExpectedRevision: end.revision, globalPosition: end.globalPosition, events: stored };
  }

  /** Reads a stream range; a stream that does not exist reads as empty. */
  private async readRange(
    streamId: string,
    name: string,
    direction: typeof FORWARDS | typeof BACKWARDS,
    fromRevision: bigint | typeof END,
    maxCount: number,
  ): Promise<StoredEvent[]> {
    try {
      return await this.read(streamId, this.client.readStream(name, { direction, fromRevision, maxCount }));
    } catch (error) {
      if (error instanceof StreamNotFound) return [];
      throw error;
    }
  }

  /** Reads the just-appended (or already stored) batch back and checks it is ours. */
  private async readBatch(
    streamId: string,
    name: string,
    from: number,
    ids: string[],
  ): Promise<StoredEvent[]> {
    const stored = await this.readRange(streamId, name, FORWARDS, BigInt(from), ids.length);
    if (stored.length !== ids.length || stored.some((e, i) => e.metadata.eventId !== ids[i])) {
      throw new StoreUnavailable(
        `the event store at ${redactUrl(this.url)}: stream ${streamId} at revision ${from} does not hold the appended events (a lagging read?): read it again`,
      );
    }
    return stored;
  }

  /** Collects a client read, mapping events ({@link fromResolvedEvent}) and errors ({@link mapKurrentError}). */
  private async read(
    streamId: string | undefined,
    iterable: AsyncIterable<ResolvedEvent>,
  ): Promise<StoredEvent[]> {
    const events: StoredEvent[] = [];
    try {
      for await (const resolved of iterable) {
        const event = fromResolvedEvent(resolved);
        if (event !== undefined) events.push(event);
      }
    } catch (error) {
      throw mapKurrentError(error, { url: this.url, ...(streamId === undefined ? {} : { streamId }) });
    }
    return events;
  }

  private track(sub: KurrentSubscription): KurrentSubscription {
    this.subscriptions.add(sub);
    return sub;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error("event store is closed: open a new one with openKurrentEventStore()");
  }
}

function isWrongExpectedVersion(error: unknown): boolean {
  return kurrentErrorType(error) === ErrorType.WRONG_EXPECTED_VERSION;
}

/** Validates an optional non-negative integer option; returns it, or null when absent. */
function checkCount(field: string, value: number | undefined): number | null {
  if (value === undefined) return null;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new InvalidEvent(`${field} must be an integer >= 0 (got ${String(value)})`);
  }
  return value;
}

/** A client catch-up subscription (a Readable of resolved events with `unsubscribe()`). */
export interface ClientSubscription extends AsyncIterable<ResolvedEvent> {
  unsubscribe(): Promise<void>;
  destroy(): void;
}

/** The subscription whose handler is running in the current async context (so close() from inside it does not wait on itself). */
const insideHandler = new AsyncLocalStorage<KurrentSubscription>();

/** Thrown around a handler's own error, so it is told apart from the client's. */
class HandlerFailed {
  constructor(readonly error: unknown) {}
}

/**
 * Drives one of the client's catch-up subscriptions: consumes its events one at a time (the next is
 * read only after the handler's promise settles, so calls never overlap and come in order), advances
 * a cursor, and when the server goes away resubscribes after the cursor every `resubscribeMs`. A
 * handler that throws, or an event it cannot map, stops it; the error goes to `onError` (else a
 * process warning). Exported for its unit tests; stores create it.
 */
export class KurrentSubscription implements Subscription {
  private closed = false;
  private current: ClientSubscription | undefined;
  private wakeDelay: (() => void) | undefined;
  private readonly done: Promise<void>;

  /**
   * @param cursor revision (stream) or global position (all) after which delivery starts.
   * @param open starts the client's subscription after a cursor (called again after the server went away).
   * @param convert maps a client event to ours, or `undefined` to skip it; `cursorOf` gives its cursor value.
   * @param onClosed called once when the subscription ends (to unregister it from the store).
   */
  constructor(
    private cursor: number,
    private readonly open: (cursor: number) => ClientSubscription,
    private readonly convert: (resolved: ResolvedEvent) => StoredEvent | undefined,
    private readonly cursorOf: (event: StoredEvent) => number,
    private readonly url: string,
    private readonly resubscribeMs: number,
    private readonly options: SubscribeOptions,
    private readonly onClosed: (sub: KurrentSubscription) => void,
  ) {
    this.done = this.run();
  }

  /** Stops delivery; resolves once no handler call is in flight (at once when called from the handler). */
  async close(): Promise<void> {
    this.closed = true;
    this.wakeDelay?.();
    this.stopCurrent();
    if (insideHandler.getStore() === this) return;
    await this.done;
  }

  private stopCurrent(): void {
    const sub = this.current;
    this.current = undefined;
    if (sub === undefined) return;
    sub.unsubscribe().catch(() => {});
    sub.destroy();
  }

  private async run(): Promise<void> {
    // Start on a later tick so the caller holds the Subscription before the first delivery.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      while (!this.closed) {
        const sub = this.open(this.cursor);
        this.current = sub;
        try {
          for await (const resolved of sub) {
            if (this.closed) break;
            const event = this.convert(resolved);
            if (event === undefined || this.cursorOf(event) <= this.cursor) continue;
            try {
              await insideHandler.run(this, () => this.options.onEvent(event));
            } catch (error) {
              throw new HandlerFailed(error);
            }
            this.cursor = this.cursorOf(event);
            if (this.closed) break;
          }
        } catch (error) {
          if (error instanceof HandlerFailed) throw error.error;
          if (this.closed) break;
          if (!isUnavailableError(error)) throw mapKurrentError(error, { url: this.url });
        } finally {
          if (this.current === sub) this.stopCurrent();
        }
        // The server went away (or ended the subscription): resubscribe after the cursor.
        if (!this.closed) await this.delay();
      }
    } catch (error) {
      this.closed = true;
      const err = error instanceof Error ? error : new Error(String(error));
      try {
        if (this.options.onError) this.options.onError(err);
        else process.emitWarning(err, { code: "GATEHOUSE_SUBSCRIPTION_STOPPED" });
      } catch (reportError) {
        process.emitWarning(reportError as Error, { code: "GATEHOUSE_SUBSCRIPTION_ONERROR_THREW" });
      }
    } finally {
      this.onClosed(this);
    }
  }

  private delay(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.resubscribeMs);
      this.wakeDelay = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
