/**
 * The Kernel calls the MCP tools make, as promises with a deadline and an optional AbortSignal
 * (an abort cancels the gRPC call; the kernel still finishes an execution it started).
 */
import type {
  DescribeBindingsResponse,
  ExecuteCodeRequest,
  ExecuteResult,
  GetTurnRequest,
  KernelClient,
  StartChatRequest,
  StartChatResponse,
  Turn,
} from "@gatehouse/proto";
import { unaryCall } from "./grpc-call.ts";

/** DescribeBindings with a 30 s deadline. @throws ServiceError (NOT_FOUND: no such workspace). */
export function describeBindings(
  kernel: KernelClient,
  workspaceId: string,
): Promise<DescribeBindingsResponse> {
  return unaryCall(kernel, kernel.describeBindings, { workspaceId }, 30_000);
}

/**
 * StartChat (appends ChatStarted) with a 30 s deadline.
 * @throws ServiceError (INVALID_ARGUMENT naming the field, NOT_FOUND: no such workspace, UNAVAILABLE).
 */
export function startChat(kernel: KernelClient, req: StartChatRequest): Promise<StartChatResponse> {
  return unaryCall(kernel, kernel.startChat, req, 30_000);
}

/**
 * ExecuteCode with a deadline of the wall time plus 60 s (the kernel's own bookkeeping and a busy
 * machine). @throws ServiceError (INVALID_ARGUMENT, NOT_FOUND, UNAVAILABLE, …), AbortError.
 */
export function executeCode(
  kernel: KernelClient,
  req: ExecuteCodeRequest,
  wallTimeMs: number,
  signal?: AbortSignal,
): Promise<ExecuteResult> {
  return unaryCall(kernel, kernel.executeCode, req, wallTimeMs + 60_000, signal);
}

/**
 * GetTurn; with `req.wait`, the kernel answers once the turn left "suspended" or shortly before
 * the deadline (`timeoutMs`) with its current state. @throws ServiceError, AbortError.
 */
export function getTurn(
  kernel: KernelClient,
  req: GetTurnRequest,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Turn> {
  return unaryCall(kernel, kernel.getTurn, req, timeoutMs, signal);
}
