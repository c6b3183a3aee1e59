/** Small display helpers shared by the pages. */
import type { ActionStatus, Caller } from "@gatehouse/gateway-contract";

/** The first 8 characters of an execution (turn) id. */
export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

/** `kind:id` of a caller, e.g. `agent:chat-42`. */
export function callerLabel(caller: Caller): string {
  if (!caller.kind) return "unknown caller";
  return caller.id ? `${caller.kind}:${caller.id}` : caller.kind;
}

/** A local date and time for an ISO-8601 instant; empty for an empty one. */
export function formatTime(iso: string): string {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

/** The hash route of an action's detail page. */
export function actionPath(workspaceId: string, actionId: number): string {
  return `/ws/${encodeURIComponent(workspaceId)}/actions/${actionId}`;
}

/** The hash route of a workspace page (`log`, `rules` or the agent `chats` list). */
export function workspacePath(workspaceId: string, page: "log" | "rules" | "chats"): string {
  return `/ws/${encodeURIComponent(workspaceId)}/${page}`;
}

/** The hash route of one agent chat. */
export function chatPath(workspaceId: string, chatId: string): string {
  return `/ws/${encodeURIComponent(workspaceId)}/chats/${encodeURIComponent(chatId)}`;
}

/** Whether a status is final (nothing will change it any more). */
export function isFinal(status: ActionStatus): boolean {
  return status === "applied" || status === "failed" || status === "rejected";
}

/**
 * An apply result for people: the text parts of an MCP tool result (`{content: [{type: "text", text}]}`)
 * joined as they are, else the JSON pretty-printed, else the raw text.
 */
export function formatResult(resultJson: string): string {
  let value: unknown;
  try {
    value = JSON.parse(resultJson);
  } catch {
    return resultJson;
  }
  const content = (value as { content?: unknown } | null)?.content;
  if (Array.isArray(content)) {
    const texts = content.flatMap((c) =>
      c &&
      typeof c === "object" &&
      (c as { type?: unknown }).type === "text" &&
      typeof (c as { text?: unknown }).text === "string"
        ? [(c as { text: string }).text]
        : [],
    );
    if (texts.length === content.length && texts.length > 0) return texts.join("\n\n");
  }
  return JSON.stringify(value, null, 2);
}
