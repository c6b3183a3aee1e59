/**
 * What the gatekeeper callers share: the error of a call that got no answer, the status codes by
 * which a gatekeeper says it refused before acting, and `formatMs` for their messages.
 */
import { status } from "@grpc/grpc-js";

/** A call to a gatekeeper failed without a response. */
export class GatekeeperCallError extends Error {
  override name = "GatekeeperCallError";
  /**
   * @param requestMaybeSent false only when the request certainly never reached the gatekeeper
   *   (no address configured, connection never became ready); true means the outcome is unknown.
   * @param code the gRPC status the gatekeeper answered with; undefined when no answer came back
   *   (not configured, unreachable).
   */
  constructor(
    message: string,
    readonly requestMaybeSent: boolean,
    readonly code?: status,
    /**
     * True when the caller stopped waiting at its maximum while the gatekeeper still reported the
     * call running: the message then says so, and that the outcome is unknown.
     */
    readonly stillRunning = false,
  ) {
    super(message);
  }
}

/** Status codes by which a server says it refused the request before acting on it. */
export const REFUSED_BEFORE_ACTING = new Set<number>([
  status.UNIMPLEMENTED,
  status.INVALID_ARGUMENT,
  status.UNAUTHENTICATED,
  status.PERMISSION_DENIED,
  status.NOT_FOUND,
]);

/** "900 ms", "4 s", "15 min" (whole units when exact, else one decimal). */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000 || ms % 60_000 !== 0) return `${Number((ms / 1000).toFixed(1))} s`;
  return `${ms / 60_000} min`;
}
