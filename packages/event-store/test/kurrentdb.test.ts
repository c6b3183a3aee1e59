import assert from "node:assert/strict";
import { createServer } from "node:net";
import { describe, test } from "node:test";
import { runEventStoreConformance } from "@gatehouse/event-store/conformance";
import {
  ANY,
  NO_STREAM,
  type ResolvedEvent,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
} from "@kurrent/kurrentdb-client";
import { eventHash } from "../src/hash.ts";
import { type ClientSubscription, KurrentSubscription, openKurrentEventStore } from "../src/kurrentdb.ts";
import {
  EVENT_ID_NAMESPACE,
  fromCurrentState,
  fromKurrentStreamName,
  fromResolvedEvent,
  isUnavailableError,
  KURRENT_STREAM_PREFIX,
  kurrentNamePrefixes,
  mapKurrentError,
  streamStateAt,
  toClientConnectionString,
  toEventData,
  toGlobalPosition,
  toKurrentEventId,
  toKurrentPosition,
  toKurrentStreamName,
  toStreamState,
  unknownKurrentOptions,
  uuidV5,
} from "../src/kurrentdb-mapping.ts";
import {
  InvalidEvent,
  type StoredEvent,
  type StoredMetadata,
  StoreSchemaMismatch,
  StoreUnavailable,
  StreamNotFound,
  WrongExpectedRevision,
} from "../src/port.ts";
import { redactUrl } from "../src/url.ts";

const IDS = [
  "workspace-w1",
  "workspace-3f2a",
  "workspace-",
  "workspace-~odd",
  "workspace-~",
  "workspace~",
  "conformance-new-1",
  "race",
  "unicode-é-🚪",
  "$all",
  "$ce-workspace",
  "~",
  "w",
];

describe("kurrentdb mapping: stream names", () => {
  test("service ids (workspace-<id>) are their own KurrentDB stream names", () => {
    assert.equal(toKurrentStreamName("workspace-w1"), "workspace-w1");
    assert.equal(toKurrentStreamName("workspace-3f2a"), "workspace-3f2a");
  });

  test("other ids are escaped under workspace-~ so every name has the filter prefix and none is a system stream", () => {
    assert.equal(toKurrentStreamName("conformance-x"), "workspace-~conformance-x");
    assert.equal(toKurrentStreamName("workspace-~odd"), "workspace-~workspace-~odd");
    assert.equal(toKurrentStreamName("$all"), "workspace-~$all");
    for (const id of IDS) {
      const name = toKurrentStreamName(id);
      assert.ok(name.startsWith(KURRENT_STREAM_PREFIX), name);
      assert.ok(!name.startsWith("$"), name);
    }
  });

  test("the mapping is reversible and injective", () => {
    const names = new Set<string>();
    for (const id of IDS) {
      const name = toKurrentStreamName(id);
      assert.equal(fromKurrentStreamName(name), id, `round trip of ${id}`);
      names.add(name);
    }
    assert.equal(names.size, IDS.length);
  });

  test("names this backend never writes map to no stream id", () => {
    assert.equal(fromKurrentStreamName("$all"), undefined);
    assert.equal(fromKurrentStreamName("$$workspace-w1"), undefined);
    assert.equal(fromKurrentStreamName("orders-1"), undefined);
    assert.equal(fromKurrentStreamName("workspace"), undefined);
  });

  test("listStreams prefixes cover every id that starts with the Gatehouse prefix", () => {
    const prefixes = ["", "w", "work", "workspace-", "workspace-w", "workspace-~", "conformance-", "$", "~"];
    for (const prefix of prefixes) {
      const covered = kurrentNamePrefixes(prefix);
      for (const id of IDS.filter((i) => i.startsWith(prefix))) {
        const name = toKurrentStreamName(id);
        assert.ok(
          covered.some((p) => name.startsWith(p)),
          `${id} (${name}) under ${prefix}: ${covered}`,
        );
      }
      assert.ok(
        covered.every((p) => p.startsWith(KURRENT_STREAM_PREFIX) || KURRENT_STREAM_PREFIX.startsWith(p)),
      );
    }
  });
});

describe("kurrentdb mapping: expected revisions", () => {
  test("a number is that revision as a BigInt, -1 / no_stream is NO_STREAM, any is ANY", () => {
    assert.equal(toStreamState(0), 0n);
    assert.equal(toStreamState(41), 41n);
    assert.equal(toStreamState(-1), NO_STREAM);
    assert.equal(toStreamState("no_stream"), NO_STREAM);
    assert.equal(toStreamState("any"), ANY);
  });

  test("an observed revision pins the stream: -1 is NO_STREAM", () => {
    assert.equal(streamStateAt(-1), NO_STREAM);
    assert.equal(streamStateAt(0), 0n);
    assert.equal(streamStateAt(7), 7n);
  });

  test("the server's current state maps back to a revision (-1 = no stream)", () => {
    assert.equal(fromCurrentState(NO_STREAM), -1);
    assert.equal(fromCurrentState(undefined), -1);
    assert.equal(fromCurrentState(12n), 12);
    assert.throws(() => fromCurrentState(2n ** 60n), StoreSchemaMismatch);
  });
});

describe("kurrentdb mapping: event ids", () => {
  test("uuidV5 matches the RFC 4122 example (DNS namespace, www.example.com)", () => {
    assert.equal(
      uuidV5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.example.com"),
      "2ed6657d-e927-568b-95e1-2665a8aea6a2",
    );
    assert.throws(() => uuidV5("not-a-uuid", "x"), InvalidEvent);
  });

  test("a UUID event id is the KurrentDB id (lowercased); any other id gets a deterministic version-5 UUID", () => {
    const uuid = "0B6E9C3A-1F2D-4C5B-8A79-112233445566";
    assert.equal(toKurrentEventId(uuid), uuid.toLowerCase());
    const derived = toKurrentEventId("e-1");
    assert.match(derived, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(
      toKurrentEventId("e-1"),
      derived,
      "the same id derives the same UUID (retries are idempotent)",
    );
    assert.notEqual(toKurrentEventId("e-2"), derived);
    assert.equal(derived, uuidV5(EVENT_ID_NAMESPACE, "e-1"));
  });
});

const metadata = (over: Partial<StoredMetadata> = {}): StoredMetadata => {
  const withoutHash = {
    eventId: "e-1",
    occurredAt: "2024-01-02T03:04:05.000Z",
    actor: "alice",
    caller: { kind: "agent", id: "chat-1" },
    causationId: "c-1",
    correlationId: "r-1",
    schemaVersion: 2,
    prevHash: "ab".repeat(32),
    ...over,
  };
  return { ...withoutHash, hash: eventHash("ActionSubmitted", { n: 1 }, withoutHash) };
};

/** What the client hands back for a stored event: the JSON round trip a server does. */
function asRead(
  streamName: string,
  data: ReturnType<typeof toEventData>,
  revision: bigint,
  commit: bigint,
): ResolvedEvent {
  return {
    event: {
      streamId: streamName,
      id: data.id,
      revision,
      type: data.type,
      data: JSON.parse(JSON.stringify(data.data)),
      metadata: JSON.parse(JSON.stringify(data.metadata)),
      isJson: data.contentType === "application/json",
      created: new Date(),
      position: { commit, prepare: commit },
    },
  } as unknown as ResolvedEvent;
}

describe("kurrentdb mapping: stored events", () => {
  test("our metadata (ids, caller, hash chain) round-trips through the event's metadata", () => {
    const m = metadata();
    const data = toEventData("ActionSubmitted", { n: 1 }, m);
    assert.equal(data.contentType, "application/json");
    assert.equal(data.id, toKurrentEventId("e-1"));
    assert.equal(data.type, "ActionSubmitted");
    const stored = fromResolvedEvent(asRead("workspace-w1", data, 3n, 123_456n));
    assert.deepEqual(stored, {
      streamId: "workspace-w1",
      revision: 3,
      globalPosition: 123_456,
      type: "ActionSubmitted",
      data: { n: 1 },
      metadata: m,
    });
    assert.equal(
      eventHash(stored!.type, stored!.data, stored!.metadata),
      m.hash,
      "the chain verifies after the trip",
    );
  });

  test("escaped stream names read back as the Gatehouse id; metadata without caller is fine", () => {
    const { caller: _c, ...noCaller } = metadata();
    const data = toEventData("T", { n: 1 }, noCaller as StoredMetadata);
    const stored = fromResolvedEvent(asRead(toKurrentStreamName("conformance-a"), data, 0n, 99n));
    assert.equal(stored?.streamId, "conformance-a");
    assert.equal(stored?.metadata.caller, undefined);
  });

  test("system and foreign streams map to nothing; a foreign event in our stream is a schema mismatch", () => {
    const data = toEventData("T", {}, metadata());
    assert.equal(fromResolvedEvent(asRead("$stats-127.0.0.1:2113", data, 0n, 5n)), undefined);
    assert.equal(fromResolvedEvent(asRead("orders-1", data, 0n, 5n)), undefined);
    assert.equal(fromResolvedEvent({} as ResolvedEvent), undefined);
    const foreign = asRead("workspace-w1", { ...data, metadata: { $correlationId: "x" } }, 0n, 5n);
    assert.throws(
      () => fromResolvedEvent(foreign),
      (e: Error) => e instanceof StoreSchemaMismatch && /Gatehouse metadata/.test(e.message),
    );
    const binary = asRead(
      "workspace-w1",
      { ...data, contentType: "application/octet-stream" } as unknown as typeof data,
      0n,
      5n,
    );
    assert.throws(() => fromResolvedEvent(binary), StoreSchemaMismatch);
  });

  test("the position falls back to the resolved event's commit position", () => {
    const read = asRead("workspace-w1", toEventData("T", { n: 1 }, metadata()), 1n, 10n);
    delete (read.event as { position?: unknown }).position;
    (read as { commitPosition?: bigint }).commitPosition = 777n;
    assert.equal(fromResolvedEvent(read)?.globalPosition, 777);
    delete (read as { commitPosition?: bigint }).commitPosition;
    assert.throws(() => fromResolvedEvent(read), StoreSchemaMismatch);
  });
});

describe("kurrentdb mapping: positions", () => {
  test("the global position is the commit position, and maps back to a read position", () => {
    assert.equal(toGlobalPosition({ commit: 4242n, prepare: 4242n }), 4242);
    assert.deepEqual(toKurrentPosition(4242), { commit: 4242n, prepare: 4242n });
    for (const p of [0, 1, 1_000_000, Number.MAX_SAFE_INTEGER])
      assert.equal(toGlobalPosition(toKurrentPosition(p)), p);
    assert.throws(() => toGlobalPosition({ commit: 2n ** 53n, prepare: 0n }), StoreSchemaMismatch);
  });
});

describe("kurrentdb mapping: errors and URLs", () => {
  const url = "kurrentdb://admin:s3cret@127.0.0.1:2113?tls=false";

  test("WrongExpectedVersionError becomes WrongExpectedRevision with the actual revision", () => {
    const conflict = new WrongExpectedVersionError(undefined, {
      streamName: "workspace-w1",
      current: 4n,
      expected: 2n,
    });
    const mapped = mapKurrentError(conflict, { url, streamId: "workspace-w1", expected: 2 });
    assert.ok(mapped instanceof WrongExpectedRevision);
    assert.equal(mapped.streamId, "workspace-w1");
    assert.equal(mapped.expected, 2);
    assert.equal(mapped.actual, 4);
    const none = new WrongExpectedVersionError(undefined, {
      streamName: "s",
      current: NO_STREAM,
      expected: 0n,
    });
    assert.equal(
      (mapKurrentError(none, { url, streamId: "s", expected: 0 }) as WrongExpectedRevision).actual,
      -1,
    );
  });

  test("StreamNotFoundError becomes StreamNotFound naming our stream id", () => {
    const mapped = mapKurrentError(new StreamNotFoundError(undefined as never, "workspace-~x"), {
      url,
      streamId: "x",
    });
    assert.ok(mapped instanceof StreamNotFound);
    assert.equal(mapped.streamId, "x");
  });

  test("unreachable servers become StoreUnavailable naming the URL with the password redacted", () => {
    const grpc = Object.assign(
      new Error("14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED"),
      {
        code: 14,
      },
    );
    for (const error of [new UnavailableError(undefined as never), grpc]) {
      assert.ok(isUnavailableError(error));
      const mapped = mapKurrentError(error, { url });
      assert.ok(mapped instanceof StoreUnavailable, String(mapped));
      assert.match(mapped.message, /kurrentdb:\/\/admin:\*\*\*@127\.0\.0\.1:2113\?tls=false/);
      assert.doesNotMatch(mapped.message, /s3cret/);
    }
    assert.equal(isUnavailableError(new Error("boom")), false);
  });

  test("our own errors and unknown errors pass through", () => {
    const own = new InvalidEvent("bad");
    assert.equal(mapKurrentError(own, { url }), own);
    const other = new Error("something else");
    assert.equal(mapKurrentError(other, { url }), other);
  });

  test("store URLs become client connection strings (esdb:// is the old name)", () => {
    assert.equal(toClientConnectionString("kurrentdb://h:2113?tls=false"), "kurrentdb://h:2113?tls=false");
    assert.equal(toClientConnectionString("esdb://u:p@h:2113?tls=false"), "kurrentdb://u:p@h:2113?tls=false");
    assert.equal(toClientConnectionString("esdb+discover://h:2113"), "kurrentdb+discover://h:2113");
    assert.equal(toClientConnectionString("kurrent://h:2113"), "kurrent://h:2113");
  });

  test("passwords of multi-host connection strings are redacted too", () => {
    assert.equal(
      redactUrl("kurrentdb://admin:pw@n1:2113,n2:2113?tls=false"),
      "kurrentdb://admin:***@n1:2113,n2:2113?tls=false",
    );
    assert.equal(redactUrl("kurrentdb://n1:2113,n2:2113"), "kurrentdb://n1:2113,n2:2113");
    // libpq also takes the password as a query parameter.
    assert.equal(
      redactUrl("postgres://gh@127.0.0.1:5432/gh?password=s3cret&sslmode=disable"),
      "postgres://gh@127.0.0.1:5432/gh?password=***&sslmode=disable",
    );
    assert.equal(redactUrl("postgres://gh@h/gh?sslpassword=k3y"), "postgres://gh@h/gh?sslpassword=***");
    assert.equal(
      redactUrl("kurrentdb://n1:2113,n2:2113?password=pw"),
      "kurrentdb://n1:2113,n2:2113?password=***",
    );
  });
});

/**
 * A scripted stand-in for the client's subscription stream (not a server): yields `items`, then throws
 * `error` if given, else stays open until destroyed, as a live subscription does.
 */
function scripted(items: StoredEvent[], error?: Error) {
  let release: () => void = () => {};
  const ended = new Promise<void>((resolve) => {
    release = resolve;
  });
  const state = { unsubscribed: 0 };
  const sub: ClientSubscription = {
    async *[Symbol.asyncIterator]() {
      for (const item of items) yield item as unknown as ResolvedEvent;
      if (error) throw error;
      await ended;
    },
    unsubscribe: async () => {
      state.unsubscribed += 1;
      release();
    },
    destroy: () => release(),
  };
  return { sub, state };
}

const ev = (revision: number): StoredEvent => ({
  streamId: "workspace-w1",
  revision,
  globalPosition: 100 + revision,
  type: "T",
  data: { n: revision },
  metadata: metadata(),
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000; // generous: CI shares 2 cores with builds
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

describe("kurrentdb: the subscription driver (scripted client streams, no server)", () => {
  const make = (
    opens: Array<ReturnType<typeof scripted>>,
    options: ConstructorParameters<typeof KurrentSubscription>[6],
    cursors: number[] = [],
  ) =>
    new KurrentSubscription(
      -1,
      (cursor) => {
        cursors.push(cursor);
        const next = opens.shift();
        if (!next) throw new Error("no more scripted subscriptions");
        return next.sub;
      },
      (resolved) => resolved as unknown as StoredEvent,
      (event) => event.revision,
      "kurrentdb://admin:s3cret@127.0.0.1:2113?tls=false",
      10,
      options,
      () => {},
    );

  test("delivers in order, one handler call at a time; close() waits for the running handler", async () => {
    const first = scripted([ev(0), ev(1), ev(2)]);
    const seen: number[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    let running = false;
    let release: () => void = () => {};
    const sub = make([first], {
      onEvent: async (e) => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        running = true;
        // Held until the test releases it: a second concurrent call would show in maxInFlight.
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        seen.push(e.revision);
        running = false;
        inFlight -= 1;
      },
    });
    for (let i = 0; i < 3; i++) {
      await until(`event ${i} in the handler`, () => running && seen.length === i);
      for (let turn = 0; turn < 20; turn++) await new Promise((r) => setImmediate(r));
      release();
    }
    await until("three events", () => seen.length === 3);
    assert.deepEqual(seen, [0, 1, 2]);
    assert.equal(maxInFlight, 1);
    await sub.close();
    assert.equal(running, false);
    assert.ok(first.state.unsubscribed >= 1, "the client subscription is cancelled");
  });

  test("a throwing handler stops the subscription and its error reaches onError", async () => {
    const first = scripted([ev(0), ev(1), ev(2)]);
    const seen: number[] = [];
    const errors: Error[] = [];
    const sub = make([first], {
      onEvent: (e) => {
        seen.push(e.revision);
        if (e.revision === 1) throw new Error("projection failed");
      },
      onError: (error) => void errors.push(error),
    });
    await until("the error", () => errors.length === 1);
    assert.deepEqual(seen, [0, 1]);
    assert.equal(errors[0]?.message, "projection failed");
    assert.ok(first.state.unsubscribed >= 1);
    await sub.close();
  });

  test("when the server goes away it resubscribes after the last delivered event, with no duplicates", async () => {
    const lost = Object.assign(new Error("14 UNAVAILABLE: Connection dropped"), { code: 14 });
    const first = scripted([ev(0), ev(1)], lost);
    const second = scripted([ev(1), ev(2), ev(3)]);
    const seen: number[] = [];
    const cursors: number[] = [];
    const sub = make([first, second], { onEvent: (e) => void seen.push(e.revision) }, cursors);
    await until("four events", () => seen.length === 4);
    await sub.close();
    assert.deepEqual(seen, [0, 1, 2, 3]);
    assert.deepEqual(cursors, [-1, 1]);
  });

  test("any other client error stops it and reaches onError, mapped", async () => {
    const denied = Object.assign(new Error("access denied"), { type: "access-denied" });
    const errors: Error[] = [];
    const sub = make([scripted([ev(0)], denied)], { onEvent: () => {}, onError: (e) => void errors.push(e) });
    await until("the error", () => errors.length === 1);
    assert.ok(errors[0] instanceof StoreUnavailable);
    assert.doesNotMatch(errors[0].message, /s3cret/);
    await sub.close();
  });

  test("a handler may close its own subscription without deadlocking", async () => {
    const seen: number[] = [];
    const sub: KurrentSubscription = make([scripted([ev(0), ev(1), ev(2)])], {
      onEvent: async (e) => {
        seen.push(e.revision);
        if (e.revision === 1) await sub.close();
      },
    });
    await until("two events", () => seen.length >= 2);
    // close() resolves once no handler runs; nothing is delivered after it.
    await sub.close();
    assert.deepEqual(seen, [0, 1]);
  });
});

/** A loopback port nothing listens on: bound by the OS, then released. */
async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("kurrentdb: opening", () => {
  test("an unreachable server is refused at open within the deadline, naming the URL (password redacted)", async () => {
    const port = await unusedPort();
    const url = `kurrentdb://admin:s3cret@127.0.0.1:${port}?tls=false`;
    const started = Date.now();
    await assert.rejects(openKurrentEventStore(url, { connectTimeoutMs: 2000 }), (error: Error) => {
      assert.ok(error instanceof StoreUnavailable, String(error));
      assert.ok(error.message.includes(`kurrentdb://admin:***@127.0.0.1:${port}?tls=false`), error.message);
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    });
    assert.ok(Date.now() - started < 2000 + 1500, `took ${Date.now() - started} ms`);
  });

  test("a string the client cannot parse is InvalidEvent, without the password", async () => {
    await assert.rejects(openKurrentEventStore("kurrentdb://u:s3cret@"), (error: Error) => {
      assert.ok(error instanceof InvalidEvent, String(error));
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    });
  });

  test("an unknown URL option is refused naming it, and nothing quotes the password on stderr", async () => {
    const warned: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => {
      warned.push(args.map(String).join(" "));
    };
    try {
      await assert.rejects(
        openKurrentEventStore("kurrentdb://admin:s3cret@127.0.0.1:1?tls=false&bogus=1&Password=x"),
        (error: Error) => {
          assert.ok(error instanceof InvalidEvent, String(error));
          assert.match(error.message, /unknown KurrentDB option "bogus", "Password"; known options: tls,/);
          assert.doesNotMatch(error.message, /s3cret/);
          return true;
        },
      );
    } finally {
      console.warn = warn;
    }
    assert.deepEqual(warned, []);
    // Known keys pass in any case and with - or _ (as the client compares them).
    assert.deepEqual(
      unknownKurrentOptions("kurrentdb://h:2113?TLS=false&tls_verify_cert=false&keep-alive-interval=10"),
      [],
    );
  });

  test("an out-of-range option is refused naming it", async () => {
    await assert.rejects(
      openKurrentEventStore("kurrentdb://127.0.0.1:2113?tls=false", { duplicateWindow: 0 }),
      /duplicateWindow/,
    );
  });
});

const connectionString = process.env.KURRENTDB_CONNECTION_STRING;
if (connectionString) {
  runEventStoreConformance("kurrentdb", () => openKurrentEventStore(connectionString));
} else {
  test("event store conformance: kurrentdb", {
    skip: "KURRENTDB_CONNECTION_STRING is not set: no KurrentDB server runs on this machine (no .NET, no container registry); set it, e.g. kurrentdb://127.0.0.1:2113?tls=false, to run the suite against your server",
  }, () => {});
}
