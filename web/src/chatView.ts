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
 * The TypeScript a tool call carries: the `code` field of its arguments, or the arguments as sent
 * when they are not a JSON object with a string `code` (a malformed call: its `problem` says why).
 */
export function snippetOf(call: ChatToolCallEntry): { code: string; parsed: boolean } {
  try {
    const args = JSON.parse(call.argumentsJson) as unknown;
    const code = (args as { code?: unknown } | null)?.code;
    if (typeof code === "string") return { code, parsed: true };
  } catch {
    // shown as sent below
  }
  return { code: call.argumentsJson, parsed: false };
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
