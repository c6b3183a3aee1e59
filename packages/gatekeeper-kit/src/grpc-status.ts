/** The one place where gatekeeper errors become gRPC errors. */
import { type ServiceError, status } from "@grpc/grpc-js";
import { GatekeeperError } from "./errors.ts";

const CODES: Record<GatekeeperError["code"], status> = {
  invalid_argument: status.INVALID_ARGUMENT,
  not_found: status.NOT_FOUND,
  permission_denied: status.PERMISSION_DENIED,
  failed_precondition: status.FAILED_PRECONDITION,
  unavailable: status.UNAVAILABLE,
};

/**
 * Maps an error to a gRPC error. A `GatekeeperError` keeps its message (written to be safe to
 * show) and gets the status of its `code`; any other error becomes INTERNAL with a generic
 * message, so unexpected internals (paths, tokens, external data) never leak to the caller.
 */
export function toServiceError(err: unknown): Partial<ServiceError> {
  if (err instanceof GatekeeperError) {
    return { code: CODES[err.code], details: err.message, message: err.message };
  }
  return { code: status.INTERNAL, details: "internal gatekeeper error (see gatekeeper logs)" };
}
