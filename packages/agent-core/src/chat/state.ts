/**
 * The chat projection of one workspace stream: `initialChats()` and `evolveChats(state, event)`.
 * Every built-in agent chat is rebuilt from its events in stream order: the person's messages, what
 * the model said, each tool call with its result and the log ids of the reads (observations) and
 * writes (actions) it caused — the same ids the action log uses (stream revisions) — and each turn's
 * state, including a turn waiting for people on awaited writes. Pure: replay and live view fold the
 * same function.
 */
import { decodeChatEvent } from "./events.ts";

/** What a stored event must carry to be folded (a subset of the event store's `StoredEvent`). */
export interface FoldableChatEvent {
  revision: number;
  type: string;
  data: unknown;
  metadata: { occurredAt: string };
}

/** A tool call as the chat shows it. */
export interface ToolCallEntry {
  kind: "tool_call";
  revision: number;
  at: string;
  turnId: string;
  step: number;
  toolCallId: string;
  toolName: string;
  argumentsJson: string;
  /** Why the call could not run ("" when it ran). */
  problem: string;
  executionId: string;
  /** Undefined until its ChatToolResult. */
  result: { revision: number; ok: boolean; text: string; awaitedActionIds: number[] } | undefined;
  /** Log ids (stream revisions) of the reads this call's execution recorded, in order. */
  observationIds: number[];
  /** Log ids of the writes it submitted, in order. */
  actionIds: number[];
}

/** One entry of a chat, in stream order. */
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
  | ToolCallEntry
  | {
      kind: "turn_ended";
      revision: number;
      at: string;
      turnId: string;
      reason: string;
      message: string;
      steps: number;
    };

/** A turn's state: running (the loop works), waiting (for people's decisions on awaited writes), ended. */
export type TurnState = "running" | "waiting" | "ended";

/** One turn of a chat. */
export interface ChatTurn {
  turnId: string;
  state: TurnState;
  model: string;
  maxSteps: number;
  maxTokens: number;
  /** Model calls recorded. */
  steps: number;
  inputTokens: number;
  outputTokens: number;
  /** Set once ended. */
  reason: string;
  message: string;
  /** While waiting: the awaited action ids not yet decided (by the kernel's turn, id = execution id). */
  awaiting: number[];
  /** Execution ids whose awaited writes the turn waits for (kernel turn ids). */
  waitingOn: string[];
}

/** One chat. */
export interface ChatView {
  chatId: string;
  startedBy: string;
  surface: string;
  model: string;
  startedAt: string;
  revision: number;
  turns: ChatTurn[];
  entries: ChatEntry[];
}

/** Every chat of a workspace. */
export interface ChatsState {
  /** Revision of the last event folded; -1 before any. */
  revision: number;
  /** By chat id, in the order they started. */
  chats: Map<string, ChatView>;
  /** Execution id -> the tool call entry that ran it (to link reads, writes and kernel turns). */
  executions: Map<string, ToolCallEntry>;
  /** Kernel turn id (an execution id) -> [chat id, agent turn id] of the tool call that suspended it. */
  kernelTurns: Map<string, [string, string]>;
}

/** A fresh, empty state (a new object every call: evolveChats updates it in place). */
export function initialChats(): ChatsState {
  return { revision: -1, chats: new Map(), executions: new Map(), kernelTurns: new Map() };
}

/** The turn `turnId` of `chat`, or undefined. */
export function turnOf(chat: ChatView, turnId: string): ChatTurn | undefined {
  for (let i = chat.turns.length - 1; i >= 0; i--) if (chat.turns[i]?.turnId === turnId) return chat.turns[i];
  return undefined;
}

/** The chat's turn that has not ended, or undefined. */
export function openTurn(chat: ChatView): ChatTurn | undefined {
  const last = chat.turns.at(-1);
  return last && last.state !== "ended" ? last : undefined;
}

function kernelTurnEnded(state: ChatsState, kernelTurnId: string): void {
  const at = state.kernelTurns.get(kernelTurnId);
  if (!at) return;
  const chat = state.chats.get(at[0]);
  const turn = chat && turnOf(chat, at[1]);
  if (!turn) return;
  const call = state.executions.get(kernelTurnId);
  const decided = new Set(call?.result?.awaitedActionIds ?? []);
  turn.awaiting = turn.awaiting.filter((id) => !decided.has(id));
  turn.waitingOn = turn.waitingOn.filter((id) => id !== kernelTurnId);
  if (turn.state === "waiting" && turn.waitingOn.length === 0) turn.state = "running";
}

/**
 * Folds one stored event into the chats and returns the state (updated in place). Events of other
 * types only advance `revision`; events naming an unknown chat or turn are ignored, and a repeated
 * Chat* event (same chat, turn, step and call) changes nothing.
 */
export function evolveChats(state: ChatsState, stored: FoldableChatEvent): ChatsState {
  state.revision = stored.revision;
  const event = decodeChatEvent(stored.type, stored.data);
  if (!event) return state;
  const at = stored.metadata.occurredAt;
  const revision = stored.revision;
  switch (event.type) {
    case "ChatStarted": {
      const d = event.data;
      if (!d.chatId || state.chats.has(d.chatId)) break;
      state.chats.set(d.chatId, {
        chatId: d.chatId,
        startedBy: d.startedBy,
        surface: d.surface,
        model: d.model,
        startedAt: at,
        revision,
        turns: [],
        entries: [],
      });
      break;
    }
    case "ChatUserMessage": {
      const chat = state.chats.get(event.data.chatId);
      if (!chat || chat.entries.some((e) => e.kind === "user" && e.turnId === event.data.turnId)) break;
      chat.revision = revision;
      chat.entries.push({
        kind: "user",
        revision,
        at,
        turnId: event.data.turnId,
        text: event.data.text,
        sentBy: event.data.sentBy,
      });
      break;
    }
    case "ChatTurnStarted": {
      const chat = state.chats.get(event.data.chatId);
      if (!chat || turnOf(chat, event.data.turnId)) break;
      chat.revision = revision;
      chat.turns.push({
        turnId: event.data.turnId,
        state: "running",
        model: event.data.model,
        maxSteps: event.data.maxSteps,
        maxTokens: event.data.maxTokens,
        steps: 0,
        inputTokens: 0,
        outputTokens: 0,
        reason: "",
        message: "",
        awaiting: [],
        waitingOn: [],
      });
      break;
    }
    case "ChatModelMessage": {
      const d = event.data;
      const chat = state.chats.get(d.chatId);
      const turn = chat && turnOf(chat, d.turnId);
      if (!chat || !turn || turn.state === "ended") break;
      if (chat.entries.some((e) => e.kind === "model" && e.turnId === d.turnId && e.step === d.step)) break;
      chat.revision = revision;
      turn.steps = Math.max(turn.steps, d.step);
      turn.inputTokens += d.inputTokens;
      turn.outputTokens += d.outputTokens;
      chat.entries.push({
        kind: "model",
        revision,
        at,
        turnId: d.turnId,
        step: d.step,
        text: d.text,
        finishReason: d.finishReason,
        inputTokens: d.inputTokens,
        outputTokens: d.outputTokens,
      });
      break;
    }
    case "ChatToolCalled": {
      const d = event.data;
      const chat = state.chats.get(d.chatId);
      const turn = chat && turnOf(chat, d.turnId);
      if (!chat || !turn || turn.state === "ended") break;
      if (findCall(chat, d.turnId, d.toolCallId)) break;
      chat.revision = revision;
      const entry: ToolCallEntry = {
        kind: "tool_call",
        revision,
        at,
        turnId: d.turnId,
        step: d.step,
        toolCallId: d.toolCallId,
        toolName: d.toolName,
        argumentsJson: d.argumentsJson,
        problem: d.problem,
        executionId: d.executionId,
        result: undefined,
        observationIds: [],
        actionIds: [],
      };
      chat.entries.push(entry);
      if (d.executionId) state.executions.set(d.executionId, entry);
      break;
    }
    case "ChatToolResult": {
      const d = event.data;
      const chat = state.chats.get(d.chatId);
      const turn = chat && turnOf(chat, d.turnId);
      const call = chat && findCall(chat, d.turnId, d.toolCallId);
      if (!chat || !turn || !call || call.result || turn.state === "ended") break;
      chat.revision = revision;
      call.result = { revision, ok: d.ok, text: d.text, awaitedActionIds: [...d.awaitedActionIds] };
      if (d.awaitedActionIds.length > 0 && d.executionId) {
        turn.state = "waiting";
        turn.awaiting.push(...d.awaitedActionIds);
        turn.waitingOn.push(d.executionId);
        state.kernelTurns.set(d.executionId, [chat.chatId, turn.turnId]);
      }
      break;
    }
    case "ChatTurnEnded": {
      const d = event.data;
      const chat = state.chats.get(d.chatId);
      const turn = chat && turnOf(chat, d.turnId);
      if (!chat || !turn || turn.state === "ended") break;
      chat.revision = revision;
      turn.state = "ended";
      turn.reason = d.reason;
      turn.message = d.message;
      turn.awaiting = [];
      turn.waitingOn = [];
      chat.entries.push({
        kind: "turn_ended",
        revision,
        at,
        turnId: d.turnId,
        reason: d.reason,
        message: d.message,
        steps: d.steps,
      });
      break;
    }
    case "ObservationRecorded": {
      const call = state.executions.get(event.data.executionId);
      if (call) call.observationIds.push(revision);
      break;
    }
    case "ActionSubmitted": {
      const call = state.executions.get(event.data.executionId);
      if (call) call.actionIds.push(revision);
      break;
    }
    case "TurnResumed":
    case "TurnCompleted":
      kernelTurnEnded(state, event.data.turnId);
      break;
  }
  return state;
}

function findCall(chat: ChatView, turnId: string, toolCallId: string): ToolCallEntry | undefined {
  for (const e of chat.entries)
    if (e.kind === "tool_call" && e.turnId === turnId && e.toolCallId === toolCallId) return e;
  return undefined;
}

/** Folds `events` from a fresh state: every chat as of the last event given. */
export function foldChats(events: Iterable<FoldableChatEvent>): ChatsState {
  let state = initialChats();
  for (const e of events) state = evolveChats(state, e);
  return state;
}
