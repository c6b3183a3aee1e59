/**
 * The AgentChats service's one place where errors become gRPC statuses (agent.proto, "Errors"). The
 * ones a client must tell apart within a status carry trailing metadata `gatehouse-error-code`:
 * `agent_off`, `turn_in_progress`, `turn_not_open`.
 */
import {
  ChatExists,
  ChatInvalid,
  ChatNotFound,
  NotChatOwner,
  TurnInProgress,
  TurnNotOpen,
} from "@gatehouse/agent-core";
import { AgentConfigError } from "@gatehouse/agent-core/providers";
import { StoreUnavailable, StreamNotFound } from "@gatehouse/event-store";
import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { ServiceError as TemporalServiceError } from "@temporalio/client";
import { WorkflowNotFoundError } from "@temporalio/common";
import { AgentOff } from "./chats.ts";

/** Trailing metadata key naming the error within its status code. */
export const ERROR_CODE_KEY = "gatehouse-error-code";

/** A bad request that is not the chat decider's (e.g. `person` not "user:<subject>"). */
export class AgentRequestInvalid extends Error {
  override name = "AgentRequestInvalid";
}

function withCode(code: status, details: string, errorCode?: string): Partial<ServiceError> {
  const metadata = new Metadata();
  if (errorCode) metadata.set(ERROR_CODE_KEY, errorCode);
  return { code, details, message: details, metadata };
}

/**
 * The status (and error code) of an error thrown by the chat operations.
 * @param workspaceId named when the workspace stream does not exist.
 */
export function toAgentServiceError(err: unknown, workspaceId: string): Partial<ServiceError> {
  const e = err instanceof Error ? err : new Error(String(err));
  if (e instanceof AgentOff || e instanceof AgentConfigError)
    return withCode(status.FAILED_PRECONDITION, e.message, "agent_off");
  if (e instanceof TurnInProgress) return withCode(status.FAILED_PRECONDITION, e.message, "turn_in_progress");
  if (e instanceof TurnNotOpen) return withCode(status.FAILED_PRECONDITION, e.message, "turn_not_open");
  if (e instanceof ChatNotFound) return withCode(status.NOT_FOUND, e.message);
  if (e instanceof StreamNotFound)
    return withCode(status.NOT_FOUND, `workspace ${workspaceId} does not exist (no events recorded)`);
  if (e instanceof NotChatOwner) return withCode(status.PERMISSION_DENIED, e.message);
  if (e instanceof ChatInvalid || e instanceof AgentRequestInvalid)
    return withCode(status.INVALID_ARGUMENT, e.message);
  if (e instanceof ChatExists) return withCode(status.ALREADY_EXISTS, e.message);
  if (e instanceof StoreUnavailable)
    return withCode(
      status.UNAVAILABLE,
      "the event store cannot be reached; nothing was recorded, retry the request (see the worker's logs)",
    );
  // The turn's workflow ended between the check and the cancel signal.
  if (e instanceof WorkflowNotFoundError)
    return withCode(status.FAILED_PRECONDITION, "the turn has ended already", "turn_not_open");
  // Temporal refused or could not be reached to start or signal a turn (one that could not start was ended).
  if (e instanceof TemporalServiceError) return withCode(status.UNAVAILABLE, `Temporal: ${e.message}`);
  return withCode(status.INTERNAL, e.message);
}
