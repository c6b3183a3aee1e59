/**
 * Typed client of the gateway's HTTP/JSON API (`@gatehouse/gateway-contract`). Every request sends
 * `Authorization: Bearer <token>`; a 401 calls `onUnauthorized` (the app then returns to sign-in).
 */
import type {
  AcceptConnectionBody,
  ActionDetail,
  AgentInfo,
  ApiError,
  ApproveBatchBody,
  ApproveBody,
  BindingsResponse,
  CancelTurnResult,
  Chat,
  ChatsResponse,
  ConnectionDecisionResult,
  DecisionResult,
  DeclineConnectionBody,
  InboxResponse,
  LogResponse,
  Me,
  MembersResponse,
  NotificationPreferencesBody,
  NotificationPreferencesResponse,
  RejectBody,
  RemoveBindingBody,
  RemoveBindingResult,
  SendMessageResult,
  SetRuleBody,
  SetRuleResponse,
  WithdrawBody,
} from "@gatehouse/gateway-contract";
import type { ExecutionSnippet } from "./reviewModel.ts";

/** A non-2xx answer (or a network failure, status 0) with the gateway's error message. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiRequestError";
  }
}

/** The gateway client bound to one token. */
export interface Api {
  me(): Promise<Me>;
  inbox(workspaceId?: string): Promise<InboxResponse>;
  action(workspaceId: string, actionId: number): Promise<ActionDetail>;
  approve(workspaceId: string, actionId: number, body: ApproveBody): Promise<DecisionResult>;
  reject(workspaceId: string, actionId: number, body: RejectBody): Promise<DecisionResult>;
  approveBatch(workspaceId: string, body: ApproveBatchBody): Promise<DecisionResult>;
  /** Withdraws approvals not yet applying (their approved dependents with them); 409 names an action already applying. */
  withdraw(workspaceId: string, body: WithdrawBody): Promise<DecisionResult>;
  /** One execution's snippet and console (404 when the gateway does not serve it or does not know it). */
  execution(workspaceId: string, executionId: string): Promise<ExecutionSnippet>;
  log(workspaceId: string, until?: number): Promise<LogResponse>;
  bindings(workspaceId: string): Promise<BindingsResponse>;
  setRule(workspaceId: string, body: SetRuleBody): Promise<SetRuleResponse>;
  /** Takes a binding back (the workspace's owner): its pending and approved writes are rejected "binding removed". */
  removeBinding(workspaceId: string, binding: string, body: RemoveBindingBody): Promise<RemoveBindingResult>;
  /** Accepts a connection request: introduces the resource (optionally with a narrower fragment). */
  acceptConnection(
    workspaceId: string,
    requestId: number,
    body: AcceptConnectionBody,
  ): Promise<ConnectionDecisionResult>;
  /** Declines a connection request (a reason is required). */
  declineConnection(
    workspaceId: string,
    requestId: number,
    body: DeclineConnectionBody,
  ): Promise<ConnectionDecisionResult>;
  /** Who reaches the workspace: its owner and members. */
  members(workspaceId: string): Promise<MembersResponse>;
  /** Whether the built-in agent can run in the workspace (and why not). */
  agent(workspaceId: string): Promise<AgentInfo>;
  /** The workspace's agent chats, newest first. */
  chats(workspaceId: string): Promise<ChatsResponse>;
  /** One whole chat: its turns and entries. */
  chat(workspaceId: string, chatId: string): Promise<Chat>;
  /** Starts a chat for the signed-in person; answers the empty chat. */
  startChat(workspaceId: string): Promise<Chat>;
  /** Sends a message to the person's own chat, starting a turn (409 turn_in_progress while one is open). */
  sendMessage(workspaceId: string, chatId: string, text: string): Promise<SendMessageResult>;
  /** Stops an open turn of the person's own chat (it ends `cancelled` at its next step). */
  cancelTurn(workspaceId: string, chatId: string, turnId: string): Promise<CancelTurnResult>;
  /** The signed-in person's notification preferences and what can be sent. */
  notifications(): Promise<NotificationPreferencesResponse>;
  /** Replaces them; 400 names the field (a bad address, a webhook that is not registered). */
  setNotifications(body: NotificationPreferencesBody): Promise<NotificationPreferencesResponse>;
}

const ws = (workspaceId: string) => `/api/workspaces/${encodeURIComponent(workspaceId)}`;
const chat = (workspaceId: string, chatId: string) =>
  `${ws(workspaceId)}/chats/${encodeURIComponent(chatId)}`;

/**
 * Builds a client that authenticates with `token`. `onUnauthorized(message)` runs on any 401 before
 * the returned promise rejects with an ApiRequestError.
 */
export function createApi(token: string, onUnauthorized: (message: string) => void): Api {
  async function request<T>(method: "GET" | "POST" | "PUT", path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { Authorization: `Bearer ${token}`, Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: "no-store",
      });
    } catch (e) {
      throw new ApiRequestError(0, "network", `the gateway could not be reached (${String(e)})`);
    }
    if (response.ok) return (await response.json()) as T;
    const error = await readError(response);
    if (response.status === 401) onUnauthorized(error.message);
    throw error;
  }

  return {
    me: () => request("GET", "/api/me"),
    inbox: (workspaceId) =>
      request("GET", workspaceId ? `/api/inbox?workspace=${encodeURIComponent(workspaceId)}` : "/api/inbox"),
    action: (workspaceId, actionId) => request("GET", `${ws(workspaceId)}/actions/${actionId}`),
    approve: (workspaceId, actionId, body) =>
      request("POST", `${ws(workspaceId)}/actions/${actionId}/approve`, body),
    reject: (workspaceId, actionId, body) =>
      request("POST", `${ws(workspaceId)}/actions/${actionId}/reject`, body),
    approveBatch: (workspaceId, body) => request("POST", `${ws(workspaceId)}/approve-batch`, body),
    withdraw: (workspaceId, body) => request("POST", `${ws(workspaceId)}/withdraw`, body),
    execution: (workspaceId, executionId) =>
      request("GET", `${ws(workspaceId)}/executions/${encodeURIComponent(executionId)}`),
    log: (workspaceId, until) =>
      request(
        "GET",
        until === undefined ? `${ws(workspaceId)}/log` : `${ws(workspaceId)}/log?until=${until}`,
      ),
    bindings: (workspaceId) => request("GET", `${ws(workspaceId)}/bindings`),
    setRule: (workspaceId, body) => request("PUT", `${ws(workspaceId)}/rules`, body),
    removeBinding: (workspaceId, binding, body) =>
      request("POST", `${ws(workspaceId)}/bindings/${encodeURIComponent(binding)}/remove`, body),
    acceptConnection: (workspaceId, requestId, body) =>
      request("POST", `${ws(workspaceId)}/connection-requests/${requestId}/accept`, body),
    declineConnection: (workspaceId, requestId, body) =>
      request("POST", `${ws(workspaceId)}/connection-requests/${requestId}/decline`, body),
    members: (workspaceId) => request("GET", `${ws(workspaceId)}/members`),
    agent: (workspaceId) => request("GET", `${ws(workspaceId)}/agent`),
    chats: (workspaceId) => request("GET", `${ws(workspaceId)}/chats`),
    chat: (workspaceId, chatId) => request("GET", chat(workspaceId, chatId)),
    startChat: (workspaceId) => request("POST", `${ws(workspaceId)}/chats`, {}),
    sendMessage: (workspaceId, chatId, text) =>
      request("POST", `${chat(workspaceId, chatId)}/messages`, { text }),
    cancelTurn: (workspaceId, chatId, turnId) =>
      request("POST", `${chat(workspaceId, chatId)}/turns/${encodeURIComponent(turnId)}/cancel`, {}),
    notifications: () => request("GET", "/api/me/notifications"),
    setNotifications: (body) => request("PUT", "/api/me/notifications", body),
  };
}

async function readError(response: Response): Promise<ApiRequestError> {
  const fallback = `${response.status} ${response.statusText}`.trim();
  try {
    const body = (await response.json()) as Partial<ApiError>;
    if (body.error?.message)
      return new ApiRequestError(response.status, body.error.code ?? "", body.error.message);
  } catch {
    // Not a JSON ApiError body (a proxy's page, an empty body): fall back to the status line.
  }
  return new ApiRequestError(response.status, "http", fallback);
}

/**
 * A readable message for anything thrown by the client or by code around it. A 403 says first
 * that access was refused (the gateway's message says why: a role, or not being a member of the
 * workspace, with who can add you).
 */
export function errorMessage(e: unknown): string {
  if (e instanceof ApiRequestError && e.status === 403) {
    return /is not a member of workspace/.test(e.message)
      ? `You are not a member of this workspace. ${e.message}`
      : `Not allowed: ${e.message}`;
  }
  if (e instanceof Error) return e.message;
  return String(e);
}
