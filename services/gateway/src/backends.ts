/**
 * The gateway's gRPC clients (approval's Decisions service, the kernel) and the one place gRPC
 * status codes become HTTP statuses.
 */
import { AgentChatsClient, ConnectionsClient, DecisionsClient, KernelClient } from "@gatehouse/proto";
import { callUnary, PEER_CHANNEL_OPTIONS, type UnaryMethod } from "@gatehouse/service-kit";
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

/**
 * Error codes a service names in the trailing metadata `gatehouse-error-code` (agent.proto), and the
 * HTTP status each answers with: the agent being off is not the service being down, and a turn in
 * progress is a conflict of its own.
 */
const HTTP_OF_CODE: Partial<Record<string, number>> = {
  agent_off: 503,
  turn_in_progress: 409,
  turn_not_open: 409,
};

/** Maps a gRPC error from `service` to an {@link HttpError} keeping the service's message. */
export function fromGrpcError(err: unknown, service: "approval" | "kernel" | "agent"): HttpError {
  const e = err as Partial<ServiceError>;
  const named = e.metadata?.get("gatehouse-error-code")[0];
  const namedStatus = typeof named === "string" ? HTTP_OF_CODE[named] : undefined;
  if (typeof named === "string" && namedStatus) return new HttpError(namedStatus, named, e.details ?? "");
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

const CLIENT_OPTIONS = {
  ...PEER_CHANNEL_OPTIONS,
  "grpc.max_receive_message_length": MAX_BACKEND_RESPONSE_BYTES,
};

/** gRPC clients to the approval service and the kernel. */
export class Backends {
  readonly decisions: DecisionsClient;
  readonly kernel: KernelClient;
  /** The kernel process's Connections service (connection requests). */
  readonly connections: ConnectionsClient;
  /** The built-in agent's chats (the worker's AgentChats service); undefined without AGENT_ADDRESS. */
  readonly agent: AgentChatsClient | undefined;

  /**
   * @param approvalAddress, kernelAddress "host:port".
   * @param clientOptions extra grpc-js options of the clients (e.g. the tracing interceptor).
   * @param agentAddress "host:port" of the AgentChats service (AGENT_ADDRESS); undefined: chats are off.
   */
  constructor(
    approvalAddress: string,
    kernelAddress: string,
    clientOptions: ClientOptions = {},
    agentAddress?: string,
  ) {
    const options = { ...CLIENT_OPTIONS, ...clientOptions };
    this.agent = agentAddress
      ? new AgentChatsClient(agentAddress, credentials.createInsecure(), options)
      : undefined;
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

  /**
   * One AgentChats call.
   * @throws HttpError 503 `agent_off` naming AGENT_ADDRESS when the gateway has no agent address;
   *   else mapped from the gRPC status and error code.
   */
  agentCall<Req, Res>(
    method: (client: AgentChatsClient) => UnaryMethod<Req, Res>,
    req: Req,
    timeoutMs = 30_000,
  ): Promise<Res> {
    const client = this.agent;
    if (!client) return Promise.reject(agentAddressUnset());
    return callUnary(client, method(client), req, timeoutMs).catch((err) => {
      throw fromGrpcError(err, "agent");
    });
  }

  close(): void {
    this.agent?.close();
    this.decisions.close();
    this.kernel.close();
    this.connections.close();
  }
}

/** What every chat route answers when the gateway was given no AGENT_ADDRESS. */
export function agentAddressUnset(): HttpError {
  return new HttpError(503, "agent_off", AGENT_ADDRESS_UNSET);
}

/** The reason the agent is off at this gateway (also GET /api/workspaces/:ws/agent's `reason`). */
export const AGENT_ADDRESS_UNSET =
  "the built-in agent is off at this gateway: AGENT_ADDRESS is not set. Set AGENT_ADDRESS to the worker's AgentChats address (its WORKER_GRPC_ADDR, e.g. worker:7008) and give the worker a model (AGENT_PROVIDER and AGENT_MODEL), then restart both";
