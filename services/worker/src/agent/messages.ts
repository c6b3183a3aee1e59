/**
 * The conversation a model step sends, rebuilt from the chat projection (the stream): every earlier
 * turn and this one, each model answer with its tool calls, each tool call's result, and for a call
 * whose awaited writes were decided, their outcomes. Pure.
 */
import type { ChatView, ToolCallEntry } from "@gatehouse/agent-core";
import type { TurnActionResult } from "@gatehouse/proto";
import type { ModelMessage } from "ai";

/** Kernel turn id (an execution id) -> the outcomes people decided for its awaited writes. */
export type Decisions = Map<string, { state: string; reason: string; results: TurnActionResult[] }>;

function inputOf(argumentsJson: string): unknown {
  try {
    const v: unknown = JSON.parse(argumentsJson);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

function resultText(call: ToolCallEntry, decisions: Decisions): string {
  if (!call.result) return "Not run: the turn ended before this call ran.";
  const decided = call.executionId ? decisions.get(call.executionId) : undefined;
  if (!decided) return call.result.text;
  const lines = decided.results.map(
    (r) =>
      `- action ${r.actionId}: ${r.status}${r.reason ? ` (${r.reason})` : ""}${r.resultJson ? `, result ${r.resultJson}` : ""}`,
  );
  const head =
    decided.state === "resumed"
      ? "People approved every awaited write of this call; each was applied:"
      : `People's decisions ended the wait: ${decided.reason}`;
  return `${call.result.text}\n\n${head}\n${lines.join("\n")}`;
}

/** The chat's messages for the model, oldest first. */
export function conversation(chat: ChatView, decisions: Decisions): ModelMessage[] {
  const out: ModelMessage[] = [];
  const entries = chat.entries;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (!e) continue;
    if (e.kind === "user") out.push({ role: "user", content: e.text });
    else if (e.kind === "turn_ended") {
      if (e.reason !== "done")
        out.push({ role: "user", content: `(Gatehouse: that turn ended early — ${e.reason}: ${e.message})` });
    } else if (e.kind === "model") {
      const calls: ToolCallEntry[] = [];
      for (let j = i + 1; j < entries.length; j++) {
        const c = entries[j];
        if (c?.kind !== "tool_call" || c.turnId !== e.turnId || c.step !== e.step) break;
        calls.push(c);
        i = j;
      }
      const content: Array<
        | { type: "text"; text: string }
        | { type: "tool-call"; toolCallId: string; toolName: string; input: unknown }
      > = [];
      if (e.text) content.push({ type: "text", text: e.text });
      for (const c of calls)
        content.push({
          type: "tool-call",
          toolCallId: c.toolCallId,
          toolName: c.toolName,
          input: inputOf(c.argumentsJson),
        });
      if (content.length === 0) continue;
      out.push({ role: "assistant", content });
      if (calls.length > 0)
        out.push({
          role: "tool",
          content: calls.map((c) => ({
            type: "tool-result" as const,
            toolCallId: c.toolCallId,
            toolName: c.toolName,
            output: { type: "text" as const, value: resultText(c, decisions) },
          })),
        });
    }
  }
  return out;
}
