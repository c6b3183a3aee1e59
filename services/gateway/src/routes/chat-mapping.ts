/** AgentChats messages (agent.proto) as the HTTP contract's shapes (@gatehouse/gateway-contract chats.ts). */
import type {
  AgentInfo,
  Chat,
  ChatEntry,
  ChatSummary,
  ChatTurn,
  ChatTurnState,
} from "@gatehouse/gateway-contract";
import type {
  AgentChat,
  AgentChatEntry,
  AgentChatSummary,
  AgentChatTurn,
  AgentInfo as AgentInfoMessage,
} from "@gatehouse/proto";
import { HttpError } from "../backends.ts";

const STATES: readonly ChatTurnState[] = ["running", "waiting", "ended"];

/** @throws HttpError 502 naming the state when the service sent one the contract does not know. */
function stateOf(state: string): ChatTurnState {
  if ((STATES as readonly string[]).includes(state)) return state as ChatTurnState;
  throw new HttpError(
    502,
    "backend_error",
    `the agent service sent an unknown turn state ${JSON.stringify(state)}`,
  );
}

function turnOf(t: AgentChatTurn): ChatTurn {
  return {
    turnId: t.turnId,
    state: stateOf(t.state),
    model: t.model,
    maxSteps: t.maxSteps,
    maxTokens: t.maxTokens,
    steps: t.steps,
    inputTokens: t.inputTokens,
    outputTokens: t.outputTokens,
    reason: t.reason,
    message: t.message,
    awaiting: [...t.awaiting],
  };
}

/** @throws HttpError 502 for an entry without a kind (a service newer than this gateway). */
function entryOf(e: AgentChatEntry): ChatEntry {
  const base = { revision: e.revision, at: e.at, turnId: e.turnId };
  const kind = e.kind;
  switch (kind?.$case) {
    case "user":
      return { kind: "user", ...base, text: kind.user.text, sentBy: kind.user.sentBy };
    case "model":
      return {
        kind: "model",
        ...base,
        step: kind.model.step,
        text: kind.model.text,
        finishReason: kind.model.finishReason,
        inputTokens: kind.model.inputTokens,
        outputTokens: kind.model.outputTokens,
      };
    case "toolCall": {
      const c = kind.toolCall;
      return {
        kind: "tool_call",
        ...base,
        step: c.step,
        toolCallId: c.toolCallId,
        toolName: c.toolName,
        argumentsJson: c.argumentsJson,
        problem: c.problem,
        executionId: c.executionId,
        result: c.result
          ? {
              revision: c.result.revision,
              ok: c.result.ok,
              text: c.result.text,
              awaitedActionIds: [...c.result.awaitedActionIds],
            }
          : null,
        observationIds: [...c.observationIds],
        actionIds: [...c.actionIds],
      };
    }
    case "turnEnded":
      return {
        kind: "turn_ended",
        ...base,
        reason: kind.turnEnded.reason,
        message: kind.turnEnded.message,
        steps: kind.turnEnded.steps,
      };
    default:
      throw new HttpError(
        502,
        "backend_error",
        `the agent service sent a chat entry (revision ${e.revision}) of a kind this gateway does not know; upgrade the gateway`,
      );
  }
}

/** The contract's Chat (a tool call without its result yet: `result: null`). @throws HttpError 502. */
export function toChat(c: AgentChat): Chat {
  return {
    workspaceId: c.workspaceId,
    chatId: c.chatId,
    startedBy: c.startedBy,
    model: c.model,
    startedAt: c.startedAt,
    revision: c.revision,
    turns: c.turns.map(turnOf),
    entries: c.entries.map(entryOf),
  };
}

/** One line of the chat list ("" state before any message: null). @throws HttpError 502. */
export function toChatSummary(s: AgentChatSummary): ChatSummary {
  return {
    chatId: s.chatId,
    startedBy: s.startedBy,
    model: s.model,
    startedAt: s.startedAt,
    title: s.title,
    state: s.state === "" ? null : stateOf(s.state),
    turns: s.turns,
  };
}

/** The contract's AgentInfo. */
export function toAgentInfo(i: AgentInfoMessage): AgentInfo {
  return { enabled: i.enabled, model: i.model, reason: i.reason };
}
