/** Helpers for the chat tables: stored events without I/O, folded as stream revisions 0..n-1. */
import { type ChatEvent, encodeChatEventData, type FoldableChatEvent, foldChats } from "../src/index.ts";

/** A stored event at `revision` (data round-tripped through its stored JSON). */
export function stored(e: ChatEvent | { type: string; data: unknown }, revision: number): FoldableChatEvent {
  const known =
    e.type.startsWith("Chat") ||
    ["ObservationRecorded", "ActionSubmitted", "TurnResumed", "TurnCompleted"].includes(e.type);
  return {
    revision,
    type: e.type,
    data: known ? encodeChatEventData(e as ChatEvent) : e.data,
    metadata: { occurredAt: `2026-01-01T00:00:${String(revision).padStart(2, "0")}Z` },
  };
}

/** Folds `events` as revisions 0..n-1. */
export function given(events: Array<ChatEvent | { type: string; data: unknown }>) {
  return foldChats(events.map((e, i) => stored(e, i)));
}

export const started = (chatId = "c1", startedBy = "user:ann"): ChatEvent => ({
  type: "ChatStarted",
  data: { chatId, startedBy, surface: "agent", model: "openai-compatible:m" },
});
export const userMessage = (turnId: string, text = "hi", chatId = "c1"): ChatEvent => ({
  type: "ChatUserMessage",
  data: { chatId, turnId, text, sentBy: "user:ann" },
});
export const turnStarted = (turnId: string, chatId = "c1"): ChatEvent => ({
  type: "ChatTurnStarted",
  data: { chatId, turnId, model: "openai-compatible:m", maxSteps: 8, maxTokens: 1000 },
});
export const modelSaid = (turnId: string, step: number, text = "", tokens = [10, 5]): ChatEvent => ({
  type: "ChatModelMessage",
  data: {
    chatId: "c1",
    turnId,
    step,
    text,
    finishReason: "tool-calls",
    inputTokens: tokens[0] ?? 0,
    outputTokens: tokens[1] ?? 0,
  },
});
export const toolCalled = (
  turnId: string,
  step: number,
  id: string,
  executionId: string,
  problem = "",
): ChatEvent => ({
  type: "ChatToolCalled",
  data: {
    chatId: "c1",
    turnId,
    step,
    toolCallId: id,
    toolName: "executeCode",
    argumentsJson: '{"code":"export default async () => 1"}',
    problem,
    executionId,
  },
});
export const toolResult = (
  turnId: string,
  step: number,
  id: string,
  executionId: string,
  awaited: number[] = [],
): ChatEvent => ({
  type: "ChatToolResult",
  data: {
    chatId: "c1",
    turnId,
    step,
    toolCallId: id,
    executionId,
    ok: true,
    text: "ok",
    awaitedActionIds: awaited,
  },
});
export const turnEnded = (turnId: string, reason = "done"): ChatEvent => ({
  type: "ChatTurnEnded",
  data: { chatId: "c1", turnId, reason, message: "", steps: 1, inputTokens: 0, outputTokens: 0 },
});
export const observed = (executionId: string): ChatEvent => ({
  type: "ObservationRecorded",
  data: { binding: "MEMORY", description: undefined, executionId, requestId: "" },
});
export const submitted = (executionId: string, localId: string): ChatEvent => ({
  type: "ActionSubmitted",
  data: { binding: "MEMORY", localId, description: undefined, dependsOn: [], payloadJson: "{}", executionId },
});
export const kernelTurnResumed = (turnId: string): ChatEvent => ({
  type: "TurnResumed",
  data: { turnId, results: [] },
});
