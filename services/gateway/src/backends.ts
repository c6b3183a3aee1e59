/**
 * The gateway's gRPC clients (approval's Decisions service, the kernel) and the one place gRPC
 * status codes become HTTP statuses.
 */
import { ConnectionsClient, DecisionsClient, KernelClient } from "@gatehouse/proto";
import { callUnary, type UnaryMethod } from "@gatehouse/service-kit";
import { type ClientOptions, credentials, type ServiceError, status } from "@grpc/grpc-js";

/** An error with the HTTP status and code the API answers with. */
export class HttpError extends Error {
  override name = "HttpError";
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const HTTP_OF: Partial<Record<number, [number, string]>> = {
  [status.INVALID_ARGUMENT]: [400, "invalid_argument"],
  [status.OUT_OF_RANGE]: [400, "out_of_range"],
  [status.NOT_FOUND]: [404, "not_found"],
  [status.ALREADY_EXISTS]: [409, "conflict"],
  [status.ABORTED]: [409, "conflict"],
  [status.FAILED_PRECONDITION]: [409, "failed_precondition"],
  [status.PERMISSION_DENIED]: [403, "forbidden"],
  [status.RESOURCE_EXHAUSTED]: [429, "resource_exhausted"],
  [status.UNAVAILABLE]: [503, "unavailable"],
  [status.DEADLINE_EXCEEDED]: [504, "deadline_exceeded"],
};

/** Maps a gRPC error from `service` to an {@link HttpError} keeping the service's message. */
export function fromGrpcError(err: unknown, service: "approval" | "kernel"): HttpError {
  const e = err as Partial<ServiceError>;
  const mapped = e.code !== undefined ? HTTP_OF[e.code] : undefined;
  if (!mapped)
    return new HttpError(
      502,
      "backend_error",
      `the ${service} service failed: ${e.details ?? e.message ?? String(err)}`,
    );
  const [httpStatus, code] = mapped;
  const message =
    e.code === status.UNAVAILABLE
      ? `the ${service} service is unavailable (${e.details ?? "no connection"}); try again shortly`
      : (e.details ?? e.message ?? "");
  return new HttpError(httpStatus, code, message);
}

/**
 * Largest answer the gateway takes from the services, bytes: 256 MiB instead of gRPC's default
 * 4 MiB. The inbox and the log read a workspace's whole log in one GetLog answer, which passes 4 MiB
 * at a few thousand actions (5,000 pending writes: about 6 MB); the services send without a limit.
 */
export const MAX_BACKEND_RESPONSE_BYTES = 256 * 1024 * 1024;

const CLIENT_OPTIONS = { "grpc.max_receive_message_length": MAX_BACKEND_RESPONSE_BYTES };

/** gRPC clients to the approval service and the kernel. */
export class Backends {
  readonly decisions: DecisionsClient;
  readonly kernel: KernelClient;
  /** The kernel process's Connections service (connection requests). */
  readonly connections: ConnectionsClient;

  /**
   * @param approvalAddress, kernelAddress "host:port".
   * @param clientOptions extra grpc-js options of the three clients (e.g. the tracing interceptor).
   */
  constructor(approvalAddress: string, kernelAddress: string, clientOptions: ClientOptions = {}) {
    const options = { ...CLIENT_OPTIONS, ...clientOptions };
    this.decisions = new DecisionsClient(approvalAddress, credentials.createInsecure(), options);
    this.kernel = new KernelClient(kernelAddress, credentials.createInsecure(), options);
    this.connections = new ConnectionsClient(kernelAddress, credentials.createInsecure(), options);
  }

  /** One Decisions call. @throws HttpError mapped from the gRPC status. */
  approval<Req, Res>(method: UnaryMethod<Req, Res>, req: Req, timeoutMs = 30_000): Promise<Res> {
    return callUnary(this.decisions, method, req, timeoutMs).catch((err) => {
      throw fromGrpcError(err, "approval");
    });
  }

  /** One Kernel call. @throws HttpError mapped from the gRPC status. */
  kernelCall<Req, Res>(method: UnaryMethod<Req, Res>, req: Req, timeoutMs = 30_000): Promise<Res> {
    return callUnary(this.kernel, method, req, timeoutMs).catch((err) => {
      throw fromGrpcError(err, "kernel");
    });
  }

  /** One Connections call (served by the kernel). @throws HttpError mapped from the gRPC status. */
  connectionsCall<Req, Res>(method: UnaryMethod<Req, Res>, req: Req, timeoutMs = 30_000): Promise<Res> {
    return callUnary(this.connections, method, req, timeoutMs).catch((err) => {
      throw fromGrpcError(err, "kernel");
    });
  }

  close(): void {
    this.decisions.close();
    this.kernel.close();
    this.connections.close();
  }
}
