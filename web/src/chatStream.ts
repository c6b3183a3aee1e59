/**
 * The model's text as it streams into a chat (`chat-delta` events, gateway-contract `ChatDelta`):
 * deltas are appended per model step in `seq` order; seq 0 starts a step's text afresh (a retried
 * model call streams again); a gap (a delta missed) freezes the step's text until the recorded
 * `ChatModelMessage` arrives, which always replaces what streamed. Pure: the chat page holds it.
 */
import type { Chat, ChatDelta } from "@gatehouse/gateway-contract";

/** The streamed text of one model step not recorded yet. */
export interface StreamingStep {
  turnId: string;
  step: number;
  /** Last seq appended. */
  seq: number;
  text: string;
  /** A delta was missed: the text stops here until the step is recorded. */
  gap: boolean;
}

/** Streaming steps of one chat, keyed by `<turnId>:<step>`. */
export type Streaming = ReadonlyMap<string, StreamingStep>;

const keyOf = (turnId: string, step: number) => `${turnId}:${step}`;

/** Whether `chat` already holds the recorded answer of `turnId`'s `step`. */
function recorded(chat: Chat | null, turnId: string, step: number): boolean {
  return !!chat?.entries.some((e) => e.kind === "model" && e.turnId === turnId && e.step === step);
}

/**
 * `streaming` with `delta` applied (the same map when it changes nothing: another chat, a step
 * already recorded, an out-of-order or repeated delta).
 */
export function applyDelta(streaming: Streaming, chat: Chat | null, delta: ChatDelta): Streaming {
  if (!chat || delta.chatId !== chat.chatId || delta.workspaceId !== chat.workspaceId) return streaming;
  if (recorded(chat, delta.turnId, delta.step)) return streaming;
  const key = keyOf(delta.turnId, delta.step);
  const current = streaming.get(key);
  let next: StreamingStep;
  if (delta.seq === 0)
    next = { turnId: delta.turnId, step: delta.step, seq: 0, text: delta.text, gap: false };
  else if (current && delta.seq <= current.seq)
    return streaming; // a repeat
  else if (current && !current.gap && delta.seq === current.seq + 1)
    next = { ...current, seq: delta.seq, text: current.text + delta.text };
  // Missed the start or a delta in between: keep what arrived in order, wait for the record.
  else
    next = current
      ? { ...current, gap: true }
      : { turnId: delta.turnId, step: delta.step, seq: delta.seq, text: "", gap: true };
  const out = new Map(streaming);
  out.set(key, next);
  return out;
}

/** `streaming` without the steps `chat` has recorded (and without other chats' steps). */
export function dropRecorded(streaming: Streaming, chat: Chat): Streaming {
  let out: Map<string, StreamingStep> | undefined;
  for (const [key, s] of streaming) {
    if (!recorded(chat, s.turnId, s.step)) continue;
    out ??= new Map(streaming);
    out.delete(key);
  }
  return out ?? streaming;
}

/** The streaming steps of `turnId`, in step order. */
export function streamingOf(streaming: Streaming, turnId: string): StreamingStep[] {
  return [...streaming.values()].filter((s) => s.turnId === turnId).sort((a, b) => a.step - b.step);
}
