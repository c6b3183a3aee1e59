/**
 * `gatehouse_tracing_spans_dropped_total{otel_service,reason}`: spans a service ended that never reached the
 * receiver. The count comes from the OpenTelemetry batch span processor's own self-observability counter
 * (`otel.sdk.processor.span.processed`, whose `error.type` is "queue_full" for a span refused by a full
 * queue and the export error's name for a batch whose export failed or timed out), bridged here into
 * prom-client so it shows on each service's existing /metrics endpoint.
 */
import {
  type Attributes,
  createNoopMeter,
  type Meter,
  type MeterProvider,
  type Counter as OtelCounter,
} from "@opentelemetry/api";
import { Counter, type Registry } from "prom-client";

/** Why spans were dropped: the queue was full, or their export failed (receiver unreachable, refused, timed out). */
export type DropReason = "queue_full" | "export_failed";

/** The metric's name on /metrics. */
export const DROPPED_SPANS_METRIC = "gatehouse_tracing_spans_dropped_total";

/** The batch processor's counter we listen to (OpenTelemetry semantic conventions, SDK metrics). */
const PROCESSED_SPANS = "otel.sdk.processor.span.processed";

/** Counts one service's dropped spans on every registry it was attached to. */
export class DroppedSpans {
  private readonly counters = new Map<Registry, Counter<"otel_service" | "reason">>();
  private readonly totals: Record<DropReason, number> = { queue_full: 0, export_failed: 0 };

  constructor(readonly service: string) {}

  /** Shows the counter on `registry` (idempotent per registry); counts made before are carried over. */
  attach(registry: Registry): void {
    if (this.counters.has(registry)) return;
    const existing = registry.getSingleMetric(DROPPED_SPANS_METRIC);
    const counter =
      (existing as Counter<"otel_service" | "reason"> | undefined) ??
      new Counter({
        name: DROPPED_SPANS_METRIC,
        help: "Spans that never reached the OTLP receiver, by OpenTelemetry service.name and reason (queue_full: the bounded export queue was full; export_failed: the receiver was unreachable, refused or timed out)",
        labelNames: ["otel_service", "reason"],
        registers: [registry],
      });
    for (const reason of ["queue_full", "export_failed"] as const) {
      counter.inc({ otel_service: this.service, reason }, this.totals[reason]);
    }
    this.counters.set(registry, counter);
  }

  /** Adds `count` dropped spans. */
  add(reason: DropReason, count: number): void {
    if (count <= 0) return;
    this.totals[reason] += count;
    for (const c of this.counters.values()) c.inc({ otel_service: this.service, reason }, count);
  }

  /** Spans dropped so far, by reason (also what tests read). */
  total(reason: DropReason): number {
    return this.totals[reason];
  }
}

/**
 * A MeterProvider for one batch span processor's `selfObsMeterProvider`: every meter is a no-op except
 * the processed-spans counter, whose failed increments become dropped spans of `dropped`.
 */
export function droppedSpansMeterProvider(dropped: DroppedSpans): MeterProvider {
  const noop = createNoopMeter();
  const processed: OtelCounter = {
    add(value: number, attributes?: Attributes) {
      const errorType = attributes?.["error.type"];
      if (errorType === undefined) return;
      dropped.add(errorType === "queue_full" ? "queue_full" : "export_failed", value);
    },
  };
  const meter: Meter = {
    createGauge: (n, o) => noop.createGauge(n, o),
    createHistogram: (n, o) => noop.createHistogram(n, o),
    createCounter: (name, o) => (name === PROCESSED_SPANS ? processed : noop.createCounter(name, o)),
    createUpDownCounter: (n, o) => noop.createUpDownCounter(n, o),
    createObservableGauge: (n, o) => noop.createObservableGauge(n, o),
    createObservableCounter: (n, o) => noop.createObservableCounter(n, o),
    createObservableUpDownCounter: (n, o) => noop.createObservableUpDownCounter(n, o),
    addBatchObservableCallback: (cb, obs) => noop.addBatchObservableCallback(cb, obs),
    removeBatchObservableCallback: (cb, obs) => noop.removeBatchObservableCallback(cb, obs),
  };
  return { getMeter: () => meter };
}
