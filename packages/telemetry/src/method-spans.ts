/**
 * One span per method call on an object that a remote peer calls by name (a gatekeeper session's
 * main Cap'n Web object): a Proxy whose methods run the original, bound to the original object, inside
 * an INTERNAL span named `<prefix> <method>`. The proxy keeps the object's prototype, so `instanceof`
 * checks (capnweb's RpcTarget test) still hold; properties other than functions pass through unchanged.
 */
import { type Attributes, SpanStatusCode, type Tracer } from "@opentelemetry/api";

/**
 * Wraps `target` so each call of one of its methods is a span (see module doc). A method returning a
 * promise ends its span when the promise settles; a thrown or rejected error marks the span ERROR.
 */
export function traceMethodCalls<T extends object>(
  tracer: Tracer,
  target: T,
  prefix: string,
  attributes: Attributes = {},
): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(target, {
    get(t, key, receiver) {
      const value = Reflect.get(t, key, receiver);
      if (typeof value !== "function" || typeof key !== "string" || key === "constructor") return value;
      const cached = wrapped.get(key);
      if (cached) return cached;
      const method = value as (...args: unknown[]) => unknown;
      const traced = (...args: unknown[]): unknown =>
        tracer.startActiveSpan(
          `${prefix} ${key}`,
          { attributes: { ...attributes, "gatehouse.method": key } },
          (span) => {
            const fail = (err: unknown) => {
              span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.name ?? "error" });
              span.end();
            };
            try {
              const result = method.apply(t, args);
              if (result && typeof (result as Promise<unknown>).then === "function") {
                (result as Promise<unknown>).then(() => span.end(), fail);
              } else span.end();
              return result;
            } catch (err) {
              fail(err);
              throw err;
            }
          },
        );
      wrapped.set(key, traced);
      return traced;
    },
  });
}
