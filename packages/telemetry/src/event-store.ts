/**
 * Event-store appends as spans: a Proxy over an event store whose `append(streamId, events, expected)`
 * runs in a CLIENT span "event-store append" with database attributes (the backend, the stream, the
 * event types and count, the revision it reached). Everything else passes through. Without tracing the
 * store is returned as it is.
 */
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ServiceTracing } from "./tracing.ts";

/** The append of an event store, as far as tracing needs it. */
interface Appending {
  append(
    streamId: string,
    events: Array<{ type: string }>,
    expected: unknown,
  ): Promise<{ nextExpectedRevision: number }>;
}

/**
 * Wraps `store` so its appends are spans of `tracing`'s service. `system` names the backend
 * (`db.system.name`: "sqlite", "postgresql", "kurrentdb"; default from the store's class).
 */
export function traceEventStoreAppends<S extends Appending>(
  tracing: ServiceTracing,
  store: S,
  system: string = storeSystemOf(store),
): S {
  if (!tracing.enabled) return store;
  const append: Appending["append"] = (streamId, events, expected) =>
    tracing.tracer.startActiveSpan(
      "event-store append",
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "db.system.name": system,
          "db.operation.name": "append",
          "db.collection.name": streamId,
          "gatehouse.event.count": events.length,
          "gatehouse.event.types": [...new Set(events.map((e) => e.type))],
        },
      },
      async (span) => {
        try {
          const result = await store.append(streamId, events, expected);
          span.setAttribute("gatehouse.stream.revision", result.nextExpectedRevision);
          return result;
        } catch (err) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.name ?? "error" });
          throw err;
        } finally {
          span.end();
        }
      },
    );
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === "append") return append;
      const value = Reflect.get(target, key, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * The `db.system.name` of an event store, from its class: "sqlite" (SqliteEventStore), "postgresql"
 * (PostgresEventStore), "kurrentdb" (KurrentEventStore); otherwise the class name in lower case.
 */
export function storeSystemOf(store: object): string {
  const name = store.constructor?.name ?? "";
  if (/^sqlite/i.test(name)) return "sqlite";
  if (/^postgres/i.test(name)) return "postgresql";
  if (/^kurrent/i.test(name)) return "kurrentdb";
  return name.toLowerCase() || "unknown";
}
