import { randomUUID } from "node:crypto";
import { z } from "zod";
import { canonicalJson } from "./hash.ts";
import { type EventMetadataInput, type ExpectedRevision, InvalidEvent, type NewEvent } from "./port.ts";

/** Longest accepted stream id, in characters. */
export const MAX_STREAM_ID_LENGTH = 256;

/** An event after validation: data in canonical JSON text and parsed form, metadata complete (no hashes yet). */
export interface PreparedEvent {
  type: string;
  data: unknown;
  dataJson: string;
  metadata: EventMetadataInput;
}

const metadataInput = z
  .object({
    eventId: z.string().min(1),
    occurredAt: z.iso.datetime({ offset: true }),
    actor: z.string(),
    caller: z.object({ kind: z.string(), id: z.string() }).strict().optional(),
    causationId: z.string(),
    correlationId: z.string(),
    schemaVersion: z.number().int().positive(),
    traceparent: z
      .string()
      .regex(
        /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/,
        "must be a W3C traceparent, 00-<32 hex>-<16 hex>-<2 hex>",
      ),
  })
  .partial()
  .strict();

/**
 * Checks a stream id: a non-empty string of at most {@link MAX_STREAM_ID_LENGTH} characters.
 * @throws InvalidEvent naming `streamId`.
 */
export function checkStreamId(streamId: unknown): asserts streamId is string {
  if (typeof streamId !== "string" || streamId.length === 0 || streamId.length > MAX_STREAM_ID_LENGTH) {
    throw new InvalidEvent(
      `streamId must be a non-empty string of at most ${MAX_STREAM_ID_LENGTH} characters (e.g. "workspace-<id>")`,
    );
  }
}

/**
 * Normalizes an expected revision: an integer >= 0, "no_stream", "any"; -1 is accepted as "no_stream"
 * (so the result of `streamRevision()` can be passed back unchanged).
 * @throws InvalidEvent naming `expected`.
 */
export function checkExpected(expected: unknown): ExpectedRevision {
  if (expected === "any" || expected === "no_stream") return expected;
  if (expected === -1) return "no_stream";
  if (typeof expected === "number" && Number.isSafeInteger(expected) && expected >= 0) return expected;
  throw new InvalidEvent(
    `expected revision ${String(expected)} is invalid: use an integer >= 0 (the stream's last revision), -1 or "no_stream", or "any"`,
  );
}

/**
 * Validates a batch and fills metadata defaults: eventId = random UUID, occurredAt = now (ISO-8601 UTC),
 * actor/causationId/correlationId = "", schemaVersion = 1, caller and traceparent absent.
 * @throws InvalidEvent naming the event index and field (empty batch, empty type, non-JSON data,
 *   unknown or mistyped metadata keys such as a caller-supplied `hash`).
 */
export function prepareEvents(events: unknown, now: () => Date): PreparedEvent[] {
  if (!Array.isArray(events) || events.length === 0) {
    throw new InvalidEvent("events must be a non-empty array of {type, data, metadata?}");
  }
  const occurredAt = now().toISOString();
  return events.map((raw: NewEvent, i) => {
    if (raw === null || typeof raw !== "object") throw new InvalidEvent(`events[${i}] must be an object`);
    if (typeof raw.type !== "string" || raw.type.trim().length === 0) {
      throw new InvalidEvent(`events[${i}].type must be a non-empty string such as "ActionSubmitted"`);
    }
    let dataJson: string;
    let data: unknown;
    try {
      dataJson = canonicalJson(raw.data);
      data = JSON.parse(dataJson);
    } catch (error) {
      throw new InvalidEvent(
        `events[${i}].data must be JSON-serializable (no undefined, functions, BigInt, NaN/Infinity or cycles): ${(error as Error).message}`,
      );
    }
    const parsed = metadataInput.safeParse(raw.metadata ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue?.path.length ? `.${issue.path.join(".")}` : "";
      throw new InvalidEvent(
        `events[${i}].metadata${where}: ${issue?.message ?? "invalid"} (allowed keys: eventId, occurredAt, actor, caller{kind,id}, causationId, correlationId, schemaVersion, traceparent; hashes are set by the store)`,
      );
    }
    const m = parsed.data;
    const metadata: EventMetadataInput = {
      eventId: m.eventId ?? randomUUID(),
      occurredAt: m.occurredAt ?? occurredAt,
      actor: m.actor ?? "",
      caller: m.caller,
      causationId: m.causationId ?? "",
      correlationId: m.correlationId ?? "",
      schemaVersion: m.schemaVersion ?? 1,
    };
    if (metadata.caller === undefined) delete (metadata as Partial<EventMetadataInput>).caller;
    if (m.traceparent !== undefined) metadata.traceparent = m.traceparent;
    return { type: raw.type, data, dataJson, metadata };
  });
}
