/** The chat fold (`ChatView` of @gatehouse/agent-core) as AgentChats messages (agent.proto). */
import type { ChatEntry, ChatView } from "@gatehouse/agent-core";
import type { AgentChat, AgentChatEntry, AgentChatSummary } from "@gatehouse/proto";

/** Longest title of a chat summary, characters. */
export const CHAT_TITLE_MAX = 200;

function entryOf(e: ChatEntry): AgentChatEntry {
  const base = { revision: e.revision, at: e.at, turnId: e.turnId };
  switch (e.kind) {
    case "user":
      return { ...base, kind: { $case: "user", user: { text: e.text, sentBy: e.sentBy } } };
    case "model":
      return {
        ...base,
        kind: {
          $case: "model",
          model: {
            step: e.step,
            text: e.text,
            finishReason: e.finishReason,
            inputTokens: e.inputTokens,
            outputTokens: e.outputTokens,
          },
        },
      };
    case "tool_call":
      return {
        ...base,
        kind: {
          $case: "toolCall",
          toolCall: {
            step: e.step,
            toolCallId: e.toolCallId,
            toolName: e.toolName,
            argumentsJson: e.argumentsJson,
            problem: e.problem,
            executionId: e.executionId,
            result: e.result
              ? {
                  revision: e.result.revision,
                  ok: e.result.ok,
                  text: e.result.text,
                  awaitedActionIds: [...e.result.awaitedActionIds],
                }
              : undefined,
            observationIds: [...e.observationIds],
            actionIds: [...e.actionIds],
          },
        },
      };
    case "turn_ended":
      return {
        ...base,
        kind: { $case: "turnEnded", turnEnded: { reason: e.reason, message: e.message, steps: e.steps } },
      };
  }
}

/** A whole chat as read at stream `revision`. */
export function toAgentChat(workspaceId: string, chat: ChatView, revision: number): AgentChat {
  return {
    workspaceId,
    chatId: chat.chatId,
    startedBy: chat.startedBy,
    model: chat.model,
    startedAt: chat.startedAt,
    revision,
    turns: chat.turns.map((t) => ({
      turnId: t.turnId,
      state: t.state,
      model: t.model,
      maxSteps: t.maxSteps,
      maxTokens: t.maxTokens,
      steps: t.steps,
      inputTokens: t.inputTokens,
      outputTokens: t.outputTokens,
      reason: t.reason,
      message: t.message,
      awaiting: [...t.awaiting],
    })),
    entries: chat.entries.map(entryOf),
  };
}

/** One line of a chat list: the first message as its title (cut to CHAT_TITLE_MAX characters). */
export function toAgentChatSummary(chat: ChatView): AgentChatSummary {
  const first = chat.entries.find((e) => e.kind === "user");
  const title = first?.kind === "user" ? [...first.text].slice(0, CHAT_TITLE_MAX).join("") : "";
  return {
    chatId: chat.chatId,
    startedBy: chat.startedBy,
    model: chat.model,
    startedAt: chat.startedAt,
    title,
    state: chat.turns.at(-1)?.state ?? "",
    turns: chat.turns.length,
  };
}
