/**
 * How the chat page reads a `Chat` (gateway-contract chats.ts): its entries grouped by turn in
 * stream order, the snippet of a tool call, and who may write to the chat. Pure helpers.
 */
import type { Chat, ChatEntry, ChatToolCallEntry, ChatTurn, Me } from "@gatehouse/gateway-contract";

/** One turn and the entries it holds (the person's message, model answers, tool calls), in order. */
export interface TurnView {
  turn: ChatTurn;
  entries: Exclude<ChatEntry, { kind: "turn_ended" }>[];
}

/** The chat's turns in order, each with its entries (`turn_ended` entries are shown by the turn's state). */
export function turnsOf(chat: Chat): TurnView[] {
  const byTurn = new Map<string, TurnView>(chat.turns.map((t) => [t.turnId, { turn: t, entries: [] }]));
  for (const e of chat.entries) {
    if (e.kind === "turn_ended") continue;
    byTurn.get(e.turnId)?.entries.push(e);
  }
  return [...byTurn.values()];
}

/** The chat's last turn, or undefined before any message. */
export function lastTurn(chat: Chat): ChatTurn | undefined {
  return chat.turns.at(-1);
}

/** Whether a turn of the chat is open (running or waiting for people): no message can be sent then. */
export function turnOpen(chat: Chat): boolean {
  const last = lastTurn(chat);
  return !!last && last.state !== "ended";
}

/** Whether `me` started the chat (only they may send to it or cancel its turn). */
export function ownsChat(chat: Chat, me: Me): boolean {
  return chat.startedBy === `user:${me.subject}`;
}

/**
 * What a tool call carries: for `executeCode`, the TypeScript in its `code` argument; for another
 * tool (`request_connection`), its arguments pretty-printed. `parsed` is false when the arguments are
 * not what the tool takes (a malformed call, whose `problem` says why): they are shown as sent.
 */
export function snippetOf(call: ChatToolCallEntry): { code: string; parsed: boolean } {
  let args: unknown;
  try {
    args = JSON.parse(call.argumentsJson);
  } catch {
    return { code: call.argumentsJson, parsed: false };
  }
  if (call.toolName !== "executeCode") return { code: JSON.stringify(args, null, 2), parsed: true };
  const code = (args as { code?: unknown } | null)?.code;
  return typeof code === "string" ? { code, parsed: true } : { code: call.argumentsJson, parsed: false };
}

/** The summary line of a tool call: the snippet's first telling line, or another tool's arguments on one line. */
export function callHeadline(call: ChatToolCallEntry, max = 90): string {
  if (call.toolName === "executeCode") return snippetHeadline(snippetOf(call).code, max);
  const line = call.argumentsJson.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** A line that only opens the module's default export, e.g. `export default async (env: any) => {`. */
const OPENER = /^export\s+default\s+async\s*(function\s*)?\([^)]*\)\s*(=>)?\s*\{?$/;

/**
 * The first line of a snippet worth showing as its summary (skips blank lines and the bare
 * `export default async (env) => {` opener when more follows), cut to `max` characters.
 */
export function snippetHeadline(code: string, max = 90): string {
  const lines = code.split("\n").filter((l) => l.trim() !== "");
  const line = (lines[0] && OPENER.test(lines[0].trim()) && lines[1]) || lines[0] || "";
  const trimmed = line.trim();
  return trimmed.length > max ? `${trimmed.slice(0, max - 1)}…` : trimmed;
}

/** Words for a turn's end reason. */
export function endReasonText(reason: string): string {
  switch (reason) {
    case "done":
      return "Done";
    case "step_cap":
      return "Stopped: step cap reached";
    case "token_budget":
      return "Stopped: token budget used up";
    case "provider":
      return "Stopped: the model provider failed";
    case "cancelled":
      return "Cancelled";
    case "rejected":
      return "Stopped: a write was rejected";
    default:
      return `Ended (${reason || "no reason given"})`;
  }
}
