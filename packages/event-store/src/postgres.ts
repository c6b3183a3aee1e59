import pg from "pg";
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
import { InvalidEvent, StoreUnavailable, StreamNotFound, WrongExpectedRevision } from "./port.ts";
import { checkPostgresSchema } from "./postgres-schema.ts";
import { storedRetry } from "./retry.ts";
import { PumpedSubscription } from "./subscription.ts";
import { redactUrl } from "./url.ts";
import { checkExpected, checkStreamId, prepareEvents } from "./validate.ts";

/** Options of {@link openPostgresEventStore}. */
export interface PostgresEventStoreOptions {
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /** How often subscriptions re-read the head when no notification came (a dropped LISTEN connection), ms (default 1000). */
  pollIntervalMs?: number;
  /** How long a connection attempt may take, ms (default 10 000). */
  connectTimeoutMs?: number;
  /** Clock for default `occurredAt` (default: `new Date()`). */
  now?: () => Date;
}

const optionsSchema = z
  .object({
    poolSize: z.number().int().min(1).max(1000).default(10),
    pollIntervalMs: z.number().int().min(10).max(60_000).default(1000),
    connectTimeoutMs: z.number().int().min(100).max(600_000).default(10_000),
    now: z.custom<() => Date>((v) => typeof v === "function").optional(),
  })
  .strict();

/** The NOTIFY channel appends signal on (payload: the new head position). */
const CHANNEL = "gatehouse_events";

interface Row {
  global_position: string;
  stream_id: string;
  revision: string;
  type: string;
  data: string;
  metadata: string;
}

const toEvent = (row: Row): StoredEvent => ({
  streamId: row.stream_id,
  revision: Number(row.revision),
  globalPosition: Number(row.global_position),
  type: row.type,
  data: JSON.parse(row.data) as unknown,
  metadata: JSON.parse(row.metadata) as StoredMetadata,
});

/**
 * A driver error that means the server is unreachable or went away: a socket error code, SQLSTATE class
 * 08 (connection exception) or 57P01-57P03 (shutdown, cannot connect now), or the driver's own
 * "Connection terminated" / timeout errors, which carry no code.
 */
export function isConnectionError(error: unknown): boolean {
  if (
    error instanceof WrongExpectedRevision ||
    error instanceof InvalidEvent ||
    error instanceof StreamNotFound
  )
    return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string")
    return (
      /^(08|57P0[123])/.test(code) ||
      /^E(CONNREFUSED|CONNRESET|NOTFOUND|TIMEDOUT|PIPE|HOSTUNREACH|AI_AGAIN)$/.test(code)
    );
  return /connection|terminated|timeout|not queryable/i.test((error as Error).message ?? "");
}

/**
 * Opens the PostgreSQL event store at `url` (`postgres://user:password@host:port/database`): checks that
 * the server answers and that the schema is current (it never migrates: `gatehouse store migrate`).
 * Several processes may share one database: appends lock the head row, so global positions commit in
 * order and without gaps, and the unique (stream, revision) index enforces expected revisions.
 * @throws StoreUnavailable naming the URL (password redacted) when the server cannot be reached.
 * @throws StoreSchemaMismatch naming the migrate command when the schema is missing or older.
 * @throws InvalidEvent when an option is out of range.
 */
export async function openPostgresEventStore(
  url: string,
  options: PostgresEventStoreOptions = {},
): Promise<PostgresEventStore> {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidEvent(`openPostgresEventStore options.${issue?.path.join(".")}: ${issue?.message}`);
  }
  const { poolSize, pollIntervalMs, connectTimeoutMs, now } = parsed.data;
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: connectTimeoutMs,
  });
  // An idle connection the server closes emits here; without a listener it would crash the process.
  pool.on("error", () => {});
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    await pool.end().catch(() => {});
    throw new StoreUnavailable(
      `cannot connect to the event store at ${redactUrl(url)}: ${(error as Error).message}`,
    );
  }
  try {
    await checkPostgresSchema(client, url);
  } catch (error) {
    client.release();
    await pool.end().catch(() => {});
    throw error;
  }
  client.release();
  return new PostgresEventStore(pool, url, pollIntervalMs, connectTimeoutMs, now ?? (() => new Date()));
}

/** The PostgreSQL implementation of {@link EventStore}; create it with {@link openPostgresEventStore}. */
export class PostgresEventStore implements EventStore {
  private readonly subscriptions = new Set<PumpedSubscription>();
  private listener: pg.Client | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private lastSeenPosition = -1;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
    private readonly pollIntervalMs: number,
    private readonly connectTimeoutMs: number,
    private readonly now: () => Date,
  ) {}

  /**
   * See {@link EventStore.append}. A retry of an append whose reply was lost (same event ids, same
   * expected revision) returns the stored events instead of appending them again.
   * @throws StoreUnavailable when the server went away (nothing was appended, or all of it: retry).
   */
  async append(streamId: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    this.assertOpen();
    checkStreamId(streamId);
    const want = checkExpected(expected);
    const prepared = prepareEvents(events, this.now);
    const ids = prepared.map((e) => e.metadata.eventId);
    return this.withClient(async (client) => {
      // One round trip: BEGIN and the head row lock, which orders every append (positions are assigned
      // and committed in one order). The reads below are a later statement, so they see what the
      // previous lock holder committed.
      await client.query("BEGIN; SELECT position FROM gatehouse_events_head WHERE id = 1 FOR UPDATE");
      try {
        // The batch's ids are looked up one by one through the (stream_id, event_id) index (a lateral
        // join on unnest): with `event_id = ANY(...)` the planner may scan the whole stream instead
        // (it did on fresh tables, whose statistics said the stream was small), so an append would
        // cost time proportional to the stream's length. Only the last event's hash is fetched, not
        // its whole metadata.
        const now = await client.query<{
          position: string;
          revision: string | null;
          hash: string | null;
          found: Array<[string, number]> | null;
        }>({
          // Named: parsed and planned once per connection, not on every append.
          name: "gatehouse_append_state",
          text: `SELECT h.position, l.revision, l.hash,
             (SELECT json_agg(json_build_array(f.event_id, f.revision))
                FROM unnest($2::text[]) AS x(id)
                CROSS JOIN LATERAL (SELECT event_id, revision FROM gatehouse_events
                                    WHERE stream_id = $1 AND event_id = x.id LIMIT 1) f) AS found
           FROM gatehouse_events_head h
           LEFT JOIN LATERAL (SELECT revision, metadata::json ->> 'hash' AS hash FROM gatehouse_events
                              WHERE stream_id = $1 ORDER BY revision DESC LIMIT 1) l ON true
           WHERE h.id = 1`,
          values: [streamId, ids],
        });
        const state = now.rows[0];
        let position = Number(state?.position ?? 0);
        const actual = state?.revision == null ? -1 : Number(state.revision);
        const found = { rows: (state?.found ?? []).map(([event_id, revision]) => ({ event_id, revision })) };
        const retry = storedRetry(
          streamId,
          ids,
          new Map(found.rows.map((r) => [r.event_id, Number(r.revision)])),
          want,
          actual,
        );
        if (retry !== null) {
          const rows = await client.query<Row>(
            "SELECT * FROM gatehouse_events WHERE stream_id = $1 AND revision >= $2 ORDER BY revision ASC LIMIT $3",
            [streamId, retry, ids.length],
          );
          await client.query("ROLLBACK");
          const stored = rows.rows.map(toEvent);
          const end = stored[stored.length - 1] as StoredEvent;
          return { nextExpectedRevision: end.revision, globalPosition: end.globalPosition, events: stored };
        }
        const ok = want === "any" || (want === "no_stream" ? actual === -1 : want === actual);
        if (!ok) throw new WrongExpectedRevision(streamId, want, actual);
        let prevHash = state?.hash ?? "";
        let revision = actual;
        const stored: StoredEvent[] = [];
        const columns = {
          pos: [] as number[],
          rev: [] as number[],
          id: [] as string[],
          type: [] as string[],
        };
        const texts = { data: [] as string[], metadata: [] as string[] };
        for (const event of prepared) {
          revision += 1;
          position += 1;
          const withoutHash = { ...event.metadata, prevHash };
          // The hash from the canonical data text prepareEvents made; the stored metadata text with it.
          const chained = chainEvent(event.type, event.dataJson, withoutHash);
          const metadata: StoredMetadata = { ...withoutHash, hash: chained.hash };
          columns.pos.push(position);
          columns.rev.push(revision);
          columns.id.push(event.metadata.eventId);
          columns.type.push(event.type);
          texts.data.push(event.dataJson);
          texts.metadata.push(chained.metadataJson);
          stored.push({
            streamId,
            revision,
            globalPosition: position,
            type: event.type,
            data: event.data,
            metadata,
          });
          prevHash = metadata.hash;
        }
        // One statement: the rows, the new head, the notification (sent at commit).
        await client.query({
          name: "gatehouse_append_insert",
          text: `WITH inserted AS (
             INSERT INTO gatehouse_events (global_position, stream_id, revision, event_id, type, data, metadata)
             SELECT p, $2, r, i, t, d, m
             FROM unnest($1::int8[], $3::int8[], $4::text[], $5::text[], $6::text[], $7::text[]) AS x(p, r, i, t, d, m)
           ), head AS (UPDATE gatehouse_events_head SET position = $8::int8 WHERE id = 1)
           SELECT pg_notify('${CHANNEL}', $8::int8::text)`,
          values: [
            columns.pos,
            streamId,
            columns.rev,
            columns.id,
            columns.type,
            texts.data,
            texts.metadata,
            position,
          ],
        });
        await client.query("COMMIT");
        this.notifyAll();
        const end = stored[stored.length - 1] as StoredEvent;
        return { nextExpectedRevision: end.revision, globalPosition: end.globalPosition, events: stored };
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        // A unique violation: another writer without the head lock (never ours) — report the conflict.
        if ((error as { code?: string }).code === "23505") {
          const now = await client.query<{ r: string | null }>(
            "SELECT max(revision) AS r FROM gatehouse_events WHERE stream_id = $1",
            [streamId],
          );
          throw new WrongExpectedRevision(
            streamId,
            want,
            now.rows[0]?.r == null ? -1 : Number(now.rows[0].r),
          );
        }
        throw error;
      }
    });
  }

  /** See {@link EventStore.readStream}. */
  async readStream(streamId: string, options: ReadOptions = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    checkStreamId(streamId);
    const limit = checkCount("maxCount", options.maxCount);
    if (options.fromRevision !== undefined) checkCount("fromRevision", options.fromRevision);
    if ((await this.streamRevision(streamId)) < 0) throw new StreamNotFound(streamId);
    const backwards = options.direction === "backwards";
    const rows = await this.query<Row>(
      backwards
        ? "SELECT * FROM gatehouse_events WHERE stream_id = $1 AND revision <= $2 ORDER BY revision DESC LIMIT $3"
        : "SELECT * FROM gatehouse_events WHERE stream_id = $1 AND revision >= $2 ORDER BY revision ASC LIMIT $3",
      [streamId, options.fromRevision ?? (backwards ? Number.MAX_SAFE_INTEGER : 0), limit],
    );
    return rows.map(toEvent);
  }

  /** See {@link EventStore.readAll}. */
  async readAll(options: { fromPosition?: number; maxCount?: number } = {}): Promise<StoredEvent[]> {
    this.assertOpen();
    const limit = checkCount("maxCount", options.maxCount);
    if (options.fromPosition !== undefined) checkCount("fromPosition", options.fromPosition);
    return (await this.allAfter((options.fromPosition ?? 1) - 1, limit)).map(toEvent);
  }

  /** See {@link EventStore.streamRevision}. */
  async streamRevision(streamId: string): Promise<number> {
    this.assertOpen();
    checkStreamId(streamId);
    const rows = await this.query<{ r: string | null }>(
      "SELECT max(revision) AS r FROM gatehouse_events WHERE stream_id = $1",
      [streamId],
    );
    return rows[0]?.r == null ? -1 : Number(rows[0].r);
  }

  /** See {@link EventStore.headPosition}. */
  async headPosition(): Promise<number> {
    this.assertOpen();
    const rows = await this.query<{ position: string }>(
      "SELECT position FROM gatehouse_events_head WHERE id = 1",
    );
    return Number(rows[0]?.position ?? 0);
  }

  /** See {@link EventStore.listStreams}. */
  async listStreams(prefix = ""): Promise<string[]> {
    this.assertOpen();
    const rows = await this.query<{ stream_id: string }>(
      "SELECT stream_id FROM gatehouse_events WHERE revision = 0 AND starts_with(stream_id, $1) ORDER BY global_position",
      [prefix],
    );
    return rows.map((r) => r.stream_id);
  }

  /** See {@link EventStore.subscribeToStream}; `after` is a revision (-1 = from the start). */
  subscribeToStream(streamId: string, options: SubscribeOptions): Subscription {
    this.assertOpen();
    checkStreamId(streamId);
    return this.track(
      new PumpedSubscription(
        Math.max(options.after ?? -1, -1),
        async (cursor, limit) =>
          (
            await this.query<Row>(
              "SELECT * FROM gatehouse_events WHERE stream_id = $1 AND revision > $2 ORDER BY revision ASC LIMIT $3",
              [streamId, cursor, limit],
            )
          ).map(toEvent),
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
        async (cursor, limit) => (await this.allAfter(cursor, limit)).map(toEvent),
        (event) => event.globalPosition,
        options,
        (sub) => this.untrack(sub),
      ),
    );
  }

  /** Closes every subscription (waiting for in-flight handlers), the LISTEN connection and the pool. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((sub) => sub.close()));
    this.stopListening();
    await this.pool.end().catch(() => {});
  }

  private allAfter(cursor: number, limit: number | null): Promise<Row[]> {
    return this.query<Row>(
      "SELECT * FROM gatehouse_events WHERE global_position > $1 ORDER BY global_position ASC LIMIT $2",
      [cursor, limit],
    );
  }

  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    return this.withClient(async (client) => (await client.query<R>(text, values)).rows);
  }

  /** Runs `body` on a pooled connection; connection failures become StoreUnavailable naming the URL. */
  private async withClient<T>(body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw this.unavailable(error);
    }
    let broken: Error | undefined;
    // A checked-out client whose connection dies emits "error" besides failing its query; the pool
    // listens only on idle clients, so without this listener the process would crash. The query's
    // rejection below carries the error.
    const ignore = () => {};
    client.on("error", ignore);
    try {
      return await body(client);
    } catch (error) {
      if (error instanceof Error && !(error instanceof StoreUnavailable) && isConnectionError(error)) {
        broken = error;
        throw this.unavailable(error);
      }
      throw error;
    } finally {
      client.off("error", ignore);
      client.release(broken);
    }
  }

  private unavailable(error: unknown): StoreUnavailable {
    return new StoreUnavailable(
      `the event store at ${redactUrl(this.url)} is unavailable: ${(error as Error).message}`,
    );
  }

  private track(sub: PumpedSubscription): PumpedSubscription {
    this.subscriptions.add(sub);
    if (this.pollTimer === undefined) this.startListening();
    return sub;
  }

  private untrack(sub: PumpedSubscription): void {
    this.subscriptions.delete(sub);
    if (this.subscriptions.size === 0) this.stopListening();
  }

  /** LISTEN wakes subscriptions on others' appends at once; the poll re-reads the head when a notification was lost. */
  private startListening(): void {
    this.pollTimer = setInterval(() => {
      if (this.listener === undefined) this.connectListener();
      this.headPosition()
        .then((position) => {
          if (position !== this.lastSeenPosition) {
            this.lastSeenPosition = position;
            this.notifyAll();
          }
        })
        .catch(() => {});
    }, this.pollIntervalMs);
    this.pollTimer.unref();
    this.connectListener();
  }

  private connectListener(): void {
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: this.connectTimeoutMs,
    });
    this.listener = client;
    const drop = () => {
      if (this.listener === client) this.listener = undefined;
      client.end().catch(() => {});
    };
    client.on("error", drop);
    client.on("end", drop);
    client.on("notification", () => this.notifyAll());
    client
      .connect()
      .then(() => client.query(`LISTEN ${CHANNEL}`))
      .then(() => {
        // Wake once connected: appends between the subscription's first read and LISTEN are not missed.
        if (this.listener !== client || this.closed) drop();
        else this.notifyAll();
      })
      .catch(drop);
  }

  private stopListening(): void {
    if (this.pollTimer !== undefined) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
    const listener = this.listener;
    this.listener = undefined;
    listener?.end().catch(() => {});
  }

  private notifyAll(): void {
    for (const sub of this.subscriptions) sub.wake();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error("event store is closed: open a new one with openPostgresEventStore()");
  }
}

/** Validates an optional non-negative integer option; returns it, or null (SQL's "no limit") when absent. */
function checkCount(field: string, value: number | undefined): number | null {
  if (value === undefined) return null;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new InvalidEvent(`${field} must be an integer >= 0 (got ${String(value)})`);
  }
  return value;
}
