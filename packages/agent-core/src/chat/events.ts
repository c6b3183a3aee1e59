/**
 * The workspace-stream events a chat folds, as a tagged union over the generated messages of
 * `proto/gatehouse/v1/events.proto`: the Chat* events of the built-in agent, and the records its
 * tool calls cause (ObservationRecorded, ActionSubmitted, the kernel's Turn* events), which the fold
 * links to the tool call by execution id. Stored `type` is the message name, `data` its ts-proto JSON.
 */
import {
  ActionSubmitted,
  ChatModelMessage,
  ChatStarted,
  ChatToolCalled,
  ChatToolResult,
  ChatTurnEnded,
  ChatTurnStarted,
  ChatUserMessage,
  ObservationRecorded,
  TurnCompleted,
  TurnResumed,
} from "@gatehouse/proto";

/** Every event type the chat fold reads, keyed by its stored `type`. */
export const CHAT_EVENT_CODECS = {
  ChatStarted,
  ChatUserMessage,
  ChatTurnStarted,
  ChatModelMessage,
  ChatToolCalled,
  ChatToolResult,
  ChatTurnEnded,
  ObservationRecorded,
  ActionSubmitted,
  TurnResumed,
  TurnCompleted,
} as const;

/** The Chat* event types this package appends (the others it only reads). */
export const CHAT_APPENDED_TYPES = [
  "ChatStarted",
  "ChatUserMessage",
  "ChatTurnStarted",
  "ChatModelMessage",
  "ChatToolCalled",
  "ChatToolResult",
  "ChatTurnEnded",
] as const;

type Codecs = typeof CHAT_EVENT_CODECS;
/** A stored `type` the chat fold understands. */
export type ChatEventType = keyof Codecs;
type MessageOf<K extends ChatEventType> = ReturnType<Codecs[K]["fromJSON"]>;

/** A decoded event: `{ type: "ChatUserMessage", data: ChatUserMessage }` and so on. */
export type ChatEvent = { [K in ChatEventType]: { type: K; data: MessageOf<K> } }[ChatEventType];

/** An event a chat command wants appended (only the Chat* types). */
export type PlannedChatEvent = Extract<ChatEvent, { type: (typeof CHAT_APPENDED_TYPES)[number] }>;

/** Decodes stored `{type, data}`, or undefined for a type the chat fold ignores. */
export function decodeChatEvent(type: string, data: unknown): ChatEvent | undefined {
  if (!Object.hasOwn(CHAT_EVENT_CODECS, type)) return undefined;
  const codec = CHAT_EVENT_CODECS[type as ChatEventType] as { fromJSON(o: unknown): unknown };
  return { type, data: codec.fromJSON(data) } as ChatEvent;
}

/** Encodes a chat event's message to the JSON stored as `data`. */
export function encodeChatEventData(event: ChatEvent): unknown {
  const codec = CHAT_EVENT_CODECS[event.type] as { toJSON(m: unknown): unknown };
  return codec.toJSON(event.data);
}

/** Builds a PlannedChatEvent with type inference on `data`. */
export function chatEvent<K extends PlannedChatEvent["type"]>(type: K, data: MessageOf<K>): PlannedChatEvent {
  return { type, data } as PlannedChatEvent;
}
