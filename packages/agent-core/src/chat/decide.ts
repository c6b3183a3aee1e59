/**
 * The chat decider: `decideChat(command, state)` returns the Chat* events to append, or throws a
 * ChatError. Pure. Commands recorded by the agent loop (model message, tool call, tool result, turn
 * end) are idempotent: one already in the state yields no events, so an activity retried after its
 * append landed appends nothing twice.
 */

import {
  ChatExists,
  ChatInvalid,
  ChatNotFound,
  NotChatOwner,
  TurnInProgress,
  TurnNotOpen,
} from "./errors.ts";
import { chatEvent, type PlannedChatEvent } from "./events.ts";
import { type ChatsState, type ChatView, openTurn, turnOf } from "./state.ts";

/** Largest user message, bytes of UTF-8. */
export const MAX_MESSAGE_BYTES = 32 * 1024;
/** Largest recorded tool-call arguments, bytes of UTF-8 (longer ones are cut, with a problem). */
export const MAX_ARGUMENTS_BYTES = 512 * 1024;
/** The reasons a turn ends (ChatTurnEnded.reason). */
export const TURN_END_REASONS = [
  "done",
  "step_cap",
  "token_budget",
  "cancelled",
  "provider",
  "rejected",
  "error",
] as const;
export type TurnEndReason = (typeof TURN_END_REASONS)[number];

/** Ids a chat or turn may have: 1..128 of letters, digits and `._:-`. */
const ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Every command of a chat. */
export type ChatCommand =
  | { type: "StartChat"; chatId: string; startedBy: string; model: string }
  | {
      type: "SendMessage";
      chatId: string;
      turnId: string;
      text: string;
      sentBy: string;
      model: string;
      maxSteps: number;
      maxTokens: number;
    }
  | {
      type: "RecordModelMessage";
      chatId: string;
      turnId: string;
      step: number;
      text: string;
      finishReason: string;
      inputTokens: number;
      outputTokens: number;
    }
  | {
      type: "RecordToolCall";
      chatId: string;
      turnId: string;
      step: number;
      toolCallId: string;
      toolName: string;
      argumentsJson: string;
      problem: string;
      executionId: string;
    }
  | {
      type: "RecordToolResult";
      chatId: string;
      turnId: string;
      step: number;
      toolCallId: string;
      executionId: string;
      ok: boolean;
      text: string;
      awaitedActionIds: number[];
    }
  | { type: "EndTurn"; chatId: string; turnId: string; reason: TurnEndReason; message: string }
  | { type: "CheckCancel"; chatId: string; turnId: string; by: string };

function chatOf(state: ChatsState, chatId: string): ChatView {
  const chat = state.chats.get(chatId);
  if (chat?.surface !== "agent") throw new ChatNotFound(chatId);
  return chat;
}

function checkId(field: string, value: string): void {
  if (!ID.test(value))
    throw new ChatInvalid(
      `${field} must be 1–128 letters, digits or . _ : -; got ${JSON.stringify(value.slice(0, 40))}`,
    );
}

/** The open turn `turnId` of the chat. @throws TurnNotOpen. */
function runningTurn(chat: ChatView, turnId: string) {
  const turn = turnOf(chat, turnId);
  if (!turn) throw new TurnNotOpen(turnId, `is not a turn of chat "${chat.chatId}"`);
  return turn;
}

/**
 * Decides a chat command against the folded state.
 * @returns the events to append, in order (empty: nothing to do, e.g. a repeat).
 * @throws ChatInvalid, ChatNotFound, ChatExists, TurnInProgress, TurnNotOpen, NotChatOwner.
 */
export function decideChat(command: ChatCommand, state: ChatsState): PlannedChatEvent[] {
  switch (command.type) {
    case "StartChat": {
      checkId("chat_id", command.chatId);
      if (state.chats.has(command.chatId)) throw new ChatExists(command.chatId);
      return [
        chatEvent("ChatStarted", {
          chatId: command.chatId,
          startedBy: command.startedBy,
          surface: "agent",
          model: command.model,
        }),
      ];
    }
    case "SendMessage": {
      const chat = chatOf(state, command.chatId);
      if (command.sentBy !== chat.startedBy) throw new NotChatOwner(chat.chatId, chat.startedBy);
      checkId("turn_id", command.turnId);
      if (!command.text.trim()) throw new ChatInvalid("text is empty; write what the agent should do");
      const bytes = Buffer.byteLength(command.text, "utf8");
      if (bytes > MAX_MESSAGE_BYTES)
        throw new ChatInvalid(
          `text is ${bytes} bytes; a message may have at most ${MAX_MESSAGE_BYTES} bytes`,
        );
      const open = openTurn(chat);
      if (open) throw new TurnInProgress(open.turnId);
      if (turnOf(chat, command.turnId)) throw new ChatInvalid(`turn_id ${command.turnId} was used already`);
      return [
        chatEvent("ChatUserMessage", {
          chatId: chat.chatId,
          turnId: command.turnId,
          text: command.text,
          sentBy: command.sentBy,
        }),
        chatEvent("ChatTurnStarted", {
          chatId: chat.chatId,
          turnId: command.turnId,
          model: command.model,
          maxSteps: command.maxSteps,
          maxTokens: command.maxTokens,
        }),
      ];
    }
    case "RecordModelMessage": {
      const chat = chatOf(state, command.chatId);
      const turn = runningTurn(chat, command.turnId);
      const seen = chat.entries.some(
        (e) => e.kind === "model" && e.turnId === command.turnId && e.step === command.step,
      );
      if (seen || turn.state === "ended") return [];
      const { type: _, ...data } = command;
      return [chatEvent("ChatModelMessage", data)];
    }
    case "RecordToolCall": {
      const chat = chatOf(state, command.chatId);
      const turn = runningTurn(chat, command.turnId);
      const seen = chat.entries.some(
        (e) => e.kind === "tool_call" && e.turnId === command.turnId && e.toolCallId === command.toolCallId,
      );
      if (seen || turn.state === "ended") return [];
      const { type: _, ...data } = command;
      return [chatEvent("ChatToolCalled", data)];
    }
    case "RecordToolResult": {
      const chat = chatOf(state, command.chatId);
      const turn = runningTurn(chat, command.turnId);
      const call = chat.entries.find(
        (e) => e.kind === "tool_call" && e.turnId === command.turnId && e.toolCallId === command.toolCallId,
      );
      if (!call)
        throw new TurnNotOpen(command.turnId, `has no tool call ${command.toolCallId} to give a result`);
      if ((call.kind === "tool_call" && call.result) || turn.state === "ended") return [];
      const { type: _, ...data } = command;
      return [chatEvent("ChatToolResult", data)];
    }
    case "EndTurn": {
      const chat = chatOf(state, command.chatId);
      const turn = runningTurn(chat, command.turnId);
      if (turn.state === "ended") return [];
      return [
        chatEvent("ChatTurnEnded", {
          chatId: chat.chatId,
          turnId: turn.turnId,
          reason: command.reason,
          message: command.message,
          steps: turn.steps,
          inputTokens: turn.inputTokens,
          outputTokens: turn.outputTokens,
        }),
      ];
    }
    case "CheckCancel": {
      // Not an append: the cancellation reaches the turn's workflow as a signal, which ends the turn.
      const chat = chatOf(state, command.chatId);
      if (command.by !== chat.startedBy) throw new NotChatOwner(chat.chatId, chat.startedBy);
      const turn = runningTurn(chat, command.turnId);
      if (turn.state === "ended") throw new TurnNotOpen(turn.turnId, `ended already (${turn.reason})`);
      return [];
    }
  }
}
