/**
 * The built-in agent's chats over HTTP (docs/agent.md). A chat belongs to a workspace and to the
 * person who started it; every member who reaches the workspace may read its chats (they are in the
 * workspace's log anyway), only the person who started a chat may send to it or cancel its turn.
 * Every route answers 503 `agent_off` when the deployment has no model configured, naming the
 * settings to set (reading a chat that exists still works).
 *
 * Live updates ride GET /api/events: chat events are stream events, so each one arrives as a
 * `notice` (types `ChatStarted`, `ChatUserMessage`, `ChatTurnStarted`, `ChatModelMessage`,
 * `ChatToolCalled`, `ChatToolResult`, `ChatTurnEnded`, and the executions' own events) — re-read the
 * chat; and while the model writes, `chat-delta` events (`ChatDelta`) carry its text as it arrives.
 */
import { z } from "zod";

/** GET /api/workspaces/:ws/agent — whether the built-in agent can run in this workspace. */
export interface AgentInfo {
  enabled: boolean;
  /** `<provider>:<model>` the workspace's chats use ("" when off). */
  model: string;
  /** When off: what to configure, in words. */
  reason: string;
}

/** One entry of a chat, in stream order; `revision` is its log id in the workspace stream. */
export type ChatEntry =
  | { kind: "user"; revision: number; at: string; turnId: string; text: string; sentBy: string }
  | {
      kind: "model";
      revision: number;
      at: string;
      turnId: string;
      step: number;
      text: string;
      finishReason: string;
      inputTokens: number;
      outputTokens: number;
    }
  | ChatToolCallEntry
  | {
      kind: "turn_ended";
      revision: number;
      at: string;
      turnId: string;
      /** "done", "step_cap", "token_budget", "provider", "cancelled", "rejected", … */
      reason: string;
      message: string;
      steps: number;
    };

/** A snippet the model asked to run (tool `executeCode`) or another tool call, and its result. */
export interface ChatToolCallEntry {
  kind: "tool_call";
  revision: number;
  at: string;
  turnId: string;
  step: number;
  toolCallId: string;
  toolName: string;
  /** The arguments as the model sent them (JSON text; may be malformed, see `problem`). */
  argumentsJson: string;
  /** Why the call could not run ("" when it ran). */
  problem: string;
  /** The kernel execution id that ran it ("" when it did not run). */
  executionId: string;
  /** null until its result is recorded. `text` is what the model was given (console, return value, error). */
  result: { revision: number; ok: boolean; text: string; awaitedActionIds: number[] } | null;
  /** Log ids of the reads its execution recorded, in order. */
  observationIds: number[];
  /** Ids of the writes (actions) it submitted, in order: link them to their inbox rows. */
  actionIds: number[];
}

/** A turn's state: `running` (the loop works), `waiting` (for people's decisions on awaited writes), `ended`. */
export type ChatTurnState = "running" | "waiting" | "ended";

/** One turn (one message of the person and everything the agent did for it). */
export interface ChatTurn {
  turnId: string;
  state: ChatTurnState;
  model: string;
  maxSteps: number;
  maxTokens: number;
  /** Model calls made. */
  steps: number;
  inputTokens: number;
  outputTokens: number;
  /** Set once ended. */
  reason: string;
  message: string;
  /** While waiting: the awaited action ids not decided yet. */
  awaiting: number[];
}

/** GET /api/workspaces/:ws/chats/:chat — a whole chat. */
export interface Chat {
  workspaceId: string;
  chatId: string;
  /** "user:<subject>". */
  startedBy: string;
  model: string;
  startedAt: string;
  /** Stream revision the chat was read at (a notice with a higher revision means re-read). */
  revision: number;
  turns: ChatTurn[];
  entries: ChatEntry[];
}

/** One line of GET /api/workspaces/:ws/chats. */
export interface ChatSummary {
  chatId: string;
  startedBy: string;
  model: string;
  startedAt: string;
  /** The first message's text, cut to 200 characters ("" before any). */
  title: string;
  /** The last turn's state, or null before any message. */
  state: ChatTurnState | null;
  turns: number;
}

/** GET /api/workspaces/:ws/chats — the workspace's agent chats, newest first. */
export interface ChatsResponse {
  chats: ChatSummary[];
  revision: number;
}

/** POST /api/workspaces/:ws/chats — starts a chat for the signed-in person (201, the empty chat). */
export const StartChatBody = z.object({}, { error: "send a JSON object: {}" }).strict();
export type StartChatBody = z.input<typeof StartChatBody>;

/** Longest message a person may send, in characters. */
export const CHAT_MESSAGE_MAX = 32_000;

/**
 * POST /api/workspaces/:ws/chats/:chat/messages — the chat's owner sends a message, starting a turn
 * (202 `SendMessageResult`). 409 `turn_in_progress` while the chat's last turn has not ended.
 */
export const SendMessageBody = z
  .object(
    {
      text: z
        .string({ error: "text must be a string" })
        .trim()
        .min(1, { error: "text must not be empty" })
        .max(CHAT_MESSAGE_MAX, { error: `text must be at most ${CHAT_MESSAGE_MAX} characters` }),
    },
    { error: 'send a JSON object, e.g. {"text": "list the open issues"}' },
  )
  .strict();
export type SendMessageBody = z.input<typeof SendMessageBody>;

/** Answer of POST …/messages. */
export interface SendMessageResult {
  turnId: string;
}

/**
 * POST /api/workspaces/:ws/chats/:chat/turns/:turn/cancel — the chat's owner stops a turn (202; the
 * turn ends with reason `cancelled` at its next step). 409 `turn_not_open` for an ended turn.
 */
export interface CancelTurnResult {
  turnId: string;
}

/**
 * Server-sent event `chat-delta` on GET /api/events: text of a model step as the provider streams it.
 * Deltas are not stored: the step's whole text arrives with its `ChatModelMessage` notice, which
 * replaces them. `seq` counts from 0 per step; a gap means some were missed (wait for the notice);
 * seq 0 again for the same step means the model call was retried: its text starts afresh. The worker
 * sends at most one delta per step every 50 ms, coalescing the text in between.
 */
export interface ChatDelta {
  workspaceId: string;
  chatId: string;
  turnId: string;
  step: number;
  seq: number;
  text: string;
}
