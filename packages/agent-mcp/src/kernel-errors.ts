/** A Kernel call's failure as a sentence an agent can act on (the tools return it with isError). */
import { status } from "@grpc/grpc-js";

/**
 * "the kernel refused the call: <details>" for the kernel's own refusals (INVALID_ARGUMENT,
 * NOT_FOUND, FAILED_PRECONDITION, …), and what to do when the kernel is unreachable or slow.
 */
export function kernelErrorText(err: unknown, what: string): string {
  const e = err as { code?: number; details?: string; message?: string; name?: string };
  if (e.name === "AbortError") return `${what} was cancelled by the client`;
  switch (e.code) {
    case status.UNAVAILABLE:
      return `${what} failed: Gatehouse's kernel cannot be reached (${e.details ?? "unavailable"}); try again shortly`;
    case status.DEADLINE_EXCEEDED:
      return `${what} failed: Gatehouse's kernel did not answer in time; try again`;
    case undefined:
      return `${what} failed: ${e.message ?? String(err)}`;
    default:
      return `${what} failed: ${e.details ?? e.message ?? String(err)}`;
  }
}
