/**
 * One unary gRPC call as a promise with a deadline and an optional AbortSignal (an abort cancels
 * the call; the service still finishes work it started, e.g. an execution).
 */
import { type CallOptions, type ClientUnaryCall, Metadata, type ServiceError } from "@grpc/grpc-js";

/** A generated client's unary method (the callback form with metadata and options). */
export type UnaryMethod<Req, Res> = (
  req: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (err: ServiceError | null, res: Res) => void,
) => ClientUnaryCall;

/**
 * Calls `method` of `client` with a deadline `timeoutMs` from now.
 * @throws the ServiceError (`code` = gRPC status, `details` = the service's message), or an
 *   AbortError-named Error when `signal` aborted first.
 */
export function unaryCall<Client, Req, Res>(
  client: Client,
  method: UnaryMethod<Req, Res>,
  req: Req,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError());
    const call = method.call(
      client,
      req,
      new Metadata(),
      { deadline: Date.now() + timeoutMs },
      (err, res) => {
        signal?.removeEventListener("abort", cancel);
        if (err) reject(signal?.aborted ? abortError() : err);
        else resolve(res);
      },
    );
    const cancel = () => call.cancel();
    signal?.addEventListener("abort", cancel, { once: true });
  });
}

/** The error a call rejects with when the MCP request was cancelled. */
export function abortError(): Error {
  const err = new Error("the MCP request was cancelled");
  err.name = "AbortError";
  return err;
}
