/**
 * Pure mapping between the event-store port and KurrentDB (EventStoreDB): stream names, expected
 * revisions, event ids, stored events, positions, errors and connection strings. Nothing here talks to
 * a server, so all of it is unit-tested without one (test/kurrentdb.test.ts); `kurrentdb.ts` wires it to
 * the client.
 */
import { createHash } from "node:crypto";
import {
  ANY,
  type AppendStreamState,
  type CurrentStreamState,
  ErrorType,
  type EventData,
  jsonEvent,
  NO_STREAM,
  type Position,
  type ResolvedEvent,
} from "@kurrent/kurrentdb-client";
import type { ExpectedRevision, StoredEvent, StoredMetadata } from "./port.ts";
import {
  InvalidEvent,
  StoreSchemaMismatch,
  StoreUnavailable,
  StreamNotFound,
  WrongExpectedRevision,
} from "./port.ts";
import { redactUrl } from "./url.ts";

/** Every KurrentDB stream this backend writes starts with this (the server-side `$all` filter). */
export const KURRENT_STREAM_PREFIX = "workspace-";

/** Marks a KurrentDB stream whose Gatehouse id does not itself have the `workspace-` form. */
const ESCAPED_PREFIX = `${KURRENT_STREAM_PREFIX}~`;

/**
 * The KurrentDB stream name of a Gatehouse stream id. Reversible ({@link fromKurrentStreamName}), and
 * every result starts with `workspace-`:
 * - an id `workspace-<rest>` whose `<rest>` does not start with `~` (what the services write,
 *   `workspace-<workspaceId>`) is its own name: `workspace-w1` → `workspace-w1`;
 * - any other id is escaped as `workspace-~<id>`: `conformance-x` → `workspace-~conformance-x`,
 *   `workspace-~odd` → `workspace-~workspace-~odd`.
 * Names never start with `$`, so they are never system streams.
 */
export function toKurrentStreamName(streamId: string): string {
  if (streamId.startsWith(KURRENT_STREAM_PREFIX) && !streamId.startsWith(ESCAPED_PREFIX)) return streamId;
  return `${ESCAPED_PREFIX}${streamId}`;
}

/**
 * The Gatehouse stream id of a KurrentDB stream name (inverse of {@link toKurrentStreamName}), or
 * `undefined` for a name this backend never writes (no `workspace-` prefix: system and foreign streams).
 */
export function fromKurrentStreamName(name: string): string | undefined {
  if (name.startsWith(ESCAPED_PREFIX)) return name.slice(ESCAPED_PREFIX.length);
  if (name.startsWith(KURRENT_STREAM_PREFIX)) return name;
  return undefined;
}

/**
 * KurrentDB stream-name prefixes that cover every stream whose Gatehouse id starts with `prefix`
 * (for a server-side `$all` filter; callers still check each id, the prefixes may over-match).
 */
export function kurrentNamePrefixes(prefix: string): string[] {
  if (prefix.length === 0) return [KURRENT_STREAM_PREFIX];
  const names = new Set<string>([`${ESCAPED_PREFIX}${prefix}`]);
  // Ids that are their own name and start with `prefix`: then `prefix` is itself the start of such a name.
  if (prefix.startsWith(KURRENT_STREAM_PREFIX) && !prefix.startsWith(ESCAPED_PREFIX)) names.add(prefix);
  else if (KURRENT_STREAM_PREFIX.startsWith(prefix)) names.add(KURRENT_STREAM_PREFIX);
  return [...names];
}

/**
 * The client's `streamState` for an expected revision (already normalized by `checkExpected`):
 * a number → that revision as a BigInt, `"no_stream"` (or -1) → `NO_STREAM`, `"any"` → `ANY`.
 * The backend itself sends the stream's observed revision for `"any"` (see `KurrentEventStore.append`).
 */
export function toStreamState(expected: ExpectedRevision): AppendStreamState {
  if (expected === "any") return ANY;
  if (expected === "no_stream" || expected === -1) return NO_STREAM;
  return BigInt(expected);
}

/** The client's `streamState` that pins a stream at a revision observed by a read (-1 = does not exist). */
export function streamStateAt(revision: number): AppendStreamState {
  return revision < 0 ? NO_STREAM : BigInt(revision);
}

/** A stream's current state as the client reports it (in a WrongExpectedVersionError) → our revision (-1 = no stream). */
export function fromCurrentState(state: CurrentStreamState | undefined): number {
  if (typeof state === "bigint") return safeNumber(state, "stream revision");
  return -1;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Namespace of the name-based (RFC 4122 version 5) UUIDs derived from non-UUID event ids. */
export const EVENT_ID_NAMESPACE = "8a7f5f62-3c1e-4e0b-9d55-6b1f0f3a2c47";

/**
 * The KurrentDB event id (a UUID) of a Gatehouse event id: a UUID is used as is (lowercased); any other
 * id gets the RFC 4122 version-5 UUID of {@link EVENT_ID_NAMESPACE} and the id's UTF-8 bytes, so a retry
 * with the same id sends the same UUID (the server's idempotency works) and the id itself stays in the
 * event's metadata (`eventId`).
 */
export function toKurrentEventId(eventId: string): string {
  if (UUID.test(eventId)) return eventId.toLowerCase();
  return uuidV5(EVENT_ID_NAMESPACE, eventId);
}

/**
 * The RFC 4122 (section 4.3) name-based UUID, version 5: SHA-1 of the namespace's 16 bytes and the
 * name's UTF-8 bytes, version and variant bits set. Returns the lowercase 36-character form.
 * @throws InvalidEvent when `namespace` is not a UUID.
 */
export function uuidV5(namespace: string, name: string): string {
  if (!UUID.test(namespace)) throw new InvalidEvent(`UUID namespace ${namespace} is not a UUID`);
  const space = Buffer.from(namespace.replaceAll("-", ""), "hex");
  const bytes = createHash("sha1").update(space).update(name, "utf8").digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The event to append: a JSON event whose id is {@link toKurrentEventId}(metadata.eventId), whose data is
 * ours and whose metadata is our complete {@link StoredMetadata} (ids, actor, caller, schemaVersion and
 * the hash chain), stored as a JSON object.
 */
export function toEventData(type: string, data: unknown, metadata: StoredMetadata): EventData {
  return jsonEvent({
    id: toKurrentEventId(metadata.eventId),
    type,
    data: data as Record<string, unknown>,
    metadata: { ...metadata } as Record<string, unknown>,
  });
}

/**
 * Our global position of a KurrentDB `$all` position: its commit position (a byte offset in the
 * server's log). Monotonic across the store but not dense: consecutive events differ by their size,
 * not by 1. Events this backend writes have commit = prepare (no explicit transactions).
 * @throws StoreSchemaMismatch when the position is beyond 2^53 (not a safe JavaScript integer).
 */
export function toGlobalPosition(position: Position): number {
  return safeNumber(position.commit, "commit position");
}

/** The KurrentDB `$all` position of one of our global positions (see {@link toGlobalPosition}). */
export function toKurrentPosition(globalPosition: number): Position {
  const at = BigInt(globalPosition);
  return { commit: at, prepare: at };
}

function safeNumber(value: bigint, what: string): number {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new StoreSchemaMismatch(`KurrentDB ${what} ${value} does not fit this backend (0..2^53-1)`);
  }
  return Number(value);
}

function isStoredMetadata(value: unknown): value is StoredMetadata {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const m = value as Record<string, unknown>;
  return (
    typeof m.eventId === "string" &&
    typeof m.occurredAt === "string" &&
    typeof m.actor === "string" &&
    typeof m.causationId === "string" &&
    typeof m.correlationId === "string" &&
    typeof m.schemaVersion === "number" &&
    typeof m.prevHash === "string" &&
    typeof m.hash === "string" &&
    (m.caller === undefined ||
      (typeof m.caller === "object" &&
        m.caller !== null &&
        typeof (m.caller as Record<string, unknown>).kind === "string" &&
        typeof (m.caller as Record<string, unknown>).id === "string"))
  );
}

/**
 * A read or subscribed KurrentDB event → our {@link StoredEvent}: stream id by
 * {@link fromKurrentStreamName}, revision, global position by {@link toGlobalPosition} (the record's
 * position, else the resolved event's commit position), type, JSON data and our metadata as stored.
 * Returns `undefined` for an event of a stream this backend does not write (system or foreign streams).
 * @throws StoreSchemaMismatch for an event in one of our streams that Gatehouse did not write (not JSON,
 *   no Gatehouse metadata, no position).
 */
export function fromResolvedEvent(resolved: ResolvedEvent): StoredEvent | undefined {
  const record = resolved.event;
  if (record === undefined) return undefined;
  const streamId = fromKurrentStreamName(record.streamId);
  if (streamId === undefined) return undefined;
  const where = `KurrentDB event ${record.id} in stream ${record.streamId}`;
  const position =
    record.position ??
    (resolved.commitPosition === undefined
      ? undefined
      : {
          commit: resolved.commitPosition,
          prepare: resolved.commitPosition,
        });
  if (position === undefined) throw new StoreSchemaMismatch(`${where} has no log position`);
  if (!record.isJson) throw new StoreSchemaMismatch(`${where} is not JSON: Gatehouse did not write it`);
  if (!isStoredMetadata(record.metadata)) {
    throw new StoreSchemaMismatch(
      `${where} has no Gatehouse metadata (eventId, hashes): Gatehouse did not write it`,
    );
  }
  return {
    streamId,
    revision: safeNumber(BigInt(record.revision), "stream revision"),
    globalPosition: toGlobalPosition(position),
    type: record.type,
    data: record.data as unknown,
    metadata: record.metadata,
  };
}

/**
 * A KurrentDB client connection string for one of our store URLs: `kurrentdb://`, `kurrent://` and
 * `kurrentdb+discover://` pass unchanged; the deprecated `esdb://` / `esdb+discover://` schemes become
 * `kurrentdb://` / `kurrentdb+discover://` (the client accepts them but warns on every open).
 * Everything after the scheme (credentials, hosts, `?tls=false&defaultDeadline=…`) is kept.
 */
export function toClientConnectionString(url: string): string {
  return url.replace(/^esdb(\+discover)?:\/\//, (_m, discover: string | undefined) =>
    discover ? "kurrentdb+discover://" : "kurrentdb://",
  );
}

/**
 * The query options the KurrentDB client understands (its connection-string parser compares them
 * lower-cased, without `-` and `_`). The client only warns about any other key, on stderr, quoting the
 * whole connection string with its password: Gatehouse refuses such a URL itself instead.
 */
export const KURRENT_URL_OPTIONS = [
  "tls",
  "tlsVerifyCert",
  "tlsCAFile",
  "userCertFile",
  "userKeyFile",
  "connectionName",
  "nodePreference",
  "maxDiscoverAttempts",
  "discoveryInterval",
  "gossipTimeout",
  "defaultDeadline",
  "keepAliveInterval",
  "keepAliveTimeout",
  "throwOnAppendFailure",
] as const;

/** The option keys of a KurrentDB URL's query that the client does not know (as written), in order. */
export function unknownKurrentOptions(url: string): string[] {
  const q = url.indexOf("?");
  if (q < 0) return [];
  const flat = (k: string) => k.trim().toLowerCase().replace(/[_-]/g, "");
  const known = new Set(KURRENT_URL_OPTIONS.map(flat));
  return url
    .slice(q + 1)
    .split("&")
    .filter((pair) => pair.length > 0)
    .map((pair) => pair.split("=")[0] ?? "")
    .filter((key) => !known.has(flat(key)));
}

/** The client's error types (`error.type`) that mean "the server is not reachable now". */
const UNAVAILABLE_TYPES = new Set<string>([
  ErrorType.UNAVAILABLE,
  ErrorType.DEADLINE_EXCEEDED,
  ErrorType.TIMEOUT,
  ErrorType.NOT_LEADER,
  ErrorType.CANCELLED,
]);
/** gRPC status codes: 1 CANCELLED, 4 DEADLINE_EXCEEDED, 14 UNAVAILABLE. */
const UNAVAILABLE_CODES = new Set([1, 4, 14]);

/** The client's error type of an error (`WrongExpectedVersionError.type` = "wrong-expected-version", …), if any. */
export function kurrentErrorType(error: unknown): string | undefined {
  const type = (error as { type?: unknown } | null)?.type;
  return typeof type === "string" ? type : undefined;
}

/**
 * True when a client error means the server cannot be reached, went away, missed the deadline or is
 * not the leader: the client's error type, a raw gRPC status code (appends report those), or a socket
 * error in the message.
 */
export function isUnavailableError(error: unknown): boolean {
  if (error instanceof StoreUnavailable) return true;
  if (error === null || typeof error !== "object") return false;
  const type = kurrentErrorType(error);
  if (type !== undefined && UNAVAILABLE_TYPES.has(type)) return true;
  const e = error as { code?: unknown; message?: unknown };
  if (typeof e.code === "number" && UNAVAILABLE_CODES.has(e.code)) return true;
  return (
    typeof e.message === "string" &&
    /UNAVAILABLE|DEADLINE_EXCEEDED|ECONNREFUSED|ECONNRESET|EHOSTUNREACH|No connection established/.test(
      e.message,
    )
  );
}

/** What {@link mapKurrentError} needs to name in its errors. */
export interface ErrorContext {
  /** The store URL (its password is redacted in messages). */
  url: string;
  /** The Gatehouse stream id of the call, if any. */
  streamId?: string;
  /** The append's expected revision, if any. */
  expected?: ExpectedRevision;
}

/**
 * A client error → the port's error:
 * - WrongExpectedVersionError → {@link WrongExpectedRevision} with the stream's actual revision;
 * - StreamNotFoundError / StreamDeletedError → {@link StreamNotFound};
 * - unreachable, deadline, not leader ({@link isUnavailableError}) → {@link StoreUnavailable} naming the
 *   URL with its password redacted;
 * - AccessDeniedError → StoreUnavailable (the credentials in the URL are refused);
 * - MaxAppendSizeExceededError → {@link InvalidEvent} (the batch is larger than the server accepts);
 * - our own errors pass through; anything else comes back unchanged.
 */
export function mapKurrentError(error: unknown, context: ErrorContext): Error {
  const err = error instanceof Error ? error : new Error(String(error));
  if (
    err instanceof WrongExpectedRevision ||
    err instanceof StreamNotFound ||
    err instanceof InvalidEvent ||
    err instanceof StoreUnavailable ||
    err instanceof StoreSchemaMismatch
  )
    return err;
  const type = kurrentErrorType(err);
  const stream = context.streamId ?? "";
  if (type === ErrorType.WRONG_EXPECTED_VERSION) {
    const actual = fromCurrentState((err as unknown as { actualState?: CurrentStreamState }).actualState);
    return new WrongExpectedRevision(stream, context.expected ?? "any", actual);
  }
  if (type === ErrorType.STREAM_NOT_FOUND || type === ErrorType.STREAM_DELETED)
    return new StreamNotFound(stream);
  if (type === ErrorType.MAXIMUM_APPEND_SIZE_EXCEEDED) {
    return new InvalidEvent(
      `stream ${stream}: the batch is larger than the KurrentDB server accepts: ${err.message}`,
    );
  }
  if (type === ErrorType.ACCESS_DENIED) {
    return new StoreUnavailable(
      `the event store at ${redactUrl(context.url)} refused the credentials: ${err.message}`,
    );
  }
  if (isUnavailableError(err)) {
    return new StoreUnavailable(
      `the event store at ${redactUrl(context.url)} is unavailable: ${err.message}`,
    );
  }
  return err;
}
