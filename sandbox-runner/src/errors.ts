import { status } from "@grpc/grpc-js";

/** Base of the runner's typed errors; `code` is the gRPC status it maps to. */
export class SandboxRunnerError extends Error {
  constructor(
    message: string,
    readonly code: status,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The request is malformed; the message names the field and the fix. */
export class InvalidArgumentError extends SandboxRunnerError {
  constructor(message: string) {
    super(message, status.INVALID_ARGUMENT);
  }
}

/** The sandbox could not be started (isolate host missing, runsc failure). */
export class SandboxUnavailableError extends SandboxRunnerError {
  constructor(message: string) {
    super(message, status.UNAVAILABLE);
  }
}

/** Configuration is wrong at start-up (e.g. sandbox "gvisor" requested but runsc is absent). */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** The one place runner errors become gRPC status objects. Unknown errors become INTERNAL without details. */
export function toGrpcStatus(error: unknown): { code: status; details: string } {
  if (error instanceof SandboxRunnerError) return { code: error.code, details: error.message };
  return { code: status.INTERNAL, details: "internal error in the sandbox runner (see its logs)" };
}

/** Every sandbox slot is held by a workspace with work in progress; retrying later can succeed. */
export class PoolExhaustedError extends SandboxRunnerError {
  constructor(message: string) {
    super(message, status.RESOURCE_EXHAUSTED);
  }
}
