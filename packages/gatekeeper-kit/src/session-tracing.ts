/**
 * Which service's tracing serves a `Gatekeeper.OpenSession` call: `serveGatekeeper` records it for each
 * call it routes to the gatekeeper's `openSession`, and `serveSession` reads it to give every binding
 * method call of the session its own span. Calls served otherwise (tests) have none: no spans.
 */
import type { ServiceTracing } from "@gatehouse/telemetry";

const byCall = new WeakMap<object, ServiceTracing>();

/** `impl` with `openSession` recording `tracing` for each call before the gatekeeper's handler runs. */
export function withSessionTracing<I extends { openSession: (call: never) => void }>(
  impl: I,
  tracing: ServiceTracing,
): I {
  if (!tracing.enabled) return impl;
  const openSession = impl.openSession;
  const traced = Object.create(impl) as I;
  traced.openSession = ((call: object) => {
    byCall.set(call, tracing);
    return (openSession as (call: object) => void).call(impl, call);
  }) as I["openSession"];
  return traced;
}

/** The tracing recorded for `call`, if any. */
export function sessionTracingOf(call: object): ServiceTracing | undefined {
  return byCall.get(call);
}
