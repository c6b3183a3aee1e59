/**
 * The active trace context as data: a W3C `traceparent` to keep with a record (an action's submission),
 * a span Link back to such a record's span, and event emitters bound to the context they were made in.
 * All are cheap no-ops when tracing is off (no span is active, nothing is recorded).
 */
import {
  context,
  isSpanContextValid,
  type Link,
  type SpanContext,
  TraceFlags,
  trace,
} from "@opentelemetry/api";

/** `00-<32 hex trace id>-<16 hex span id>-<2 hex flags>` (W3C Trace Context, version 00). */
export const TRACEPARENT_PATTERN = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The `traceparent` of the span active here when it is recorded (sampled), e.g.
 * "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"; undefined when tracing is off or the
 * span is not sampled (nothing would find it in a receiver).
 */
export function currentTraceparent(): string | undefined {
  const sc = trace.getSpan(context.active())?.spanContext();
  if (!sc || !isSpanContextValid(sc) || (sc.traceFlags & TraceFlags.SAMPLED) === 0) return undefined;
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** The span context a `traceparent` names, or undefined when the text is not one. */
export function spanContextOf(traceparent: string | undefined): SpanContext | undefined {
  const m = traceparent ? TRACEPARENT_PATTERN.exec(traceparent) : null;
  if (!m) return undefined;
  const sc: SpanContext = {
    traceId: m[1] as string,
    spanId: m[2] as string,
    traceFlags: Number.parseInt(m[3] as string, 16),
    isRemote: true,
  };
  return isSpanContextValid(sc) ? sc : undefined;
}

/**
 * Span links to the spans the `traceparents` name, with `attributes` on each; texts that are not a
 * traceparent are skipped, duplicates kept once, at most `max` (default 64) links.
 */
export function linksTo(
  traceparents: Iterable<string | undefined>,
  attributes: Record<string, string | number> = {},
  max = 64,
): Link[] {
  const seen = new Set<string>();
  const links: Link[] = [];
  for (const tp of traceparents) {
    const sc = spanContextOf(tp);
    if (!sc || seen.has(tp as string) || links.length >= max) continue;
    seen.add(tp as string);
    links.push({ context: sc, attributes });
  }
  return links;
}

/**
 * Makes every listener later added to `emitter` run in the context active now (e.g. a client stream's
 * `data` listener, so work it starts belongs to the caller's trace, not to whatever opened the
 * connection). Returns `emitter`. Without tracing the context manager is a no-op and so is this.
 */
export function bindToActiveContext<E extends NodeJS.EventEmitter>(emitter: E): E {
  return context.bind(context.active(), emitter);
}

/** Adds `links` to the span active here (e.g. a SERVER span, once the handler knows what it relates to); a no-op without one. */
export function addLinksToActiveSpan(links: Link[]): void {
  if (links.length > 0) trace.getActiveSpan()?.addLinks(links);
}

/**
 * Links the active span to each action's submission span: `submitted` maps action id → the
 * `traceparent` recorded on its ActionSubmitted (e.g. `submissionTraceparents` of approval-core).
 * Each link carries `gatehouse.link=submission` and `gatehouse.action_id`. A no-op without an active span.
 */
export function linkToSubmissions(submitted: Iterable<[number, string]>): void {
  for (const [actionId, tp] of submitted) {
    addLinksToActiveSpan(linksTo([tp], { "gatehouse.link": "submission", "gatehouse.action_id": actionId }));
  }
}
